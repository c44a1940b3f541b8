/* A code from MPI_Add_error_code has the empty string until MPI_Add_error_string gives it one,
 * whatever its class's string (MPI 5.0 §9.5); so has a new class. */
#include "wtest.h"

static const char *string_of(int code)
{
    static char s[MPI_MAX_ERROR_STRING];
    int len = -1;
    strcpy(s, "not written");
    EXPECT_OK(MPI_Error_string(code, s, &len));
    CHECK_INT(len, (int)strlen(s));
    return s;
}

int main(int argc, char **argv)
{
    int cls, code, other, cls_of = -1;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    EXPECT_OK(MPI_Add_error_class(&cls));
    CHECK_STR(string_of(cls), "");
    EXPECT_OK(MPI_Add_error_string(cls, "error class"));
    CHECK_STR(string_of(cls), "error class");
    EXPECT_OK(MPI_Add_error_code(cls, &code));
    CHECK_STR(string_of(code), "");
    EXPECT_OK(MPI_Add_error_string(code, "error code"));
    CHECK_STR(string_of(code), "error code");
    EXPECT_OK(MPI_Error_class(code, &cls_of));
    CHECK_INT(cls_of, cls);
    /* A code of a predefined class too. */
    EXPECT_OK(MPI_Add_error_code(MPI_ERR_OTHER, &other));
    CHECK_STR(string_of(other), "");
    EXPECT_OK(MPI_Remove_error_string(code));
    CHECK_STR(string_of(code), "");

    EXPECT_OK(MPI_Remove_error_code(other));
    EXPECT_OK(MPI_Remove_error_code(code));
    EXPECT_OK(MPI_Remove_error_string(cls));
    EXPECT_OK(MPI_Remove_error_class(cls));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
