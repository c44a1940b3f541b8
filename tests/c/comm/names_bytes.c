/* Names and info strings are C strings: any bytes but NUL. UTF-8 and Latin-1 text both
 * round-trip unchanged through MPI_Comm_set_name/get_name, MPI_Info_set/get_string and
 * MPI_Add_error_string/MPI_Error_string. */
#include "wtest.h"

int main(int argc, char **argv)
{
    const char *utf8 = "r\xc3\xa9seau \xe2\x88\x80";      /* "réseau ∀" in UTF-8 */
    const char *latin1 = "r\xe9seau \xff\x80";            /* not UTF-8 */
    const char *texts[2] = {utf8, latin1};
    char name[MPI_MAX_OBJECT_NAME], v[64], s[MPI_MAX_ERROR_STRING];
    int len, flag, buflen, cls, code;
    MPI_Info info;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    EXPECT_OK(MPI_Add_error_class(&cls));
    EXPECT_OK(MPI_Add_error_code(cls, &code));
    for (int i = 0; i < 2; i++) {
        const char *t = texts[i];
        fprintf(stderr, "text %d\n", i);
        EXPECT_OK(MPI_Comm_set_name(MPI_COMM_SELF, t));
        len = -1;
        EXPECT_OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
        CHECK(!strcmp(name, t) && len == (int)strlen(t), "comm name %d did not round-trip", i);

        EXPECT_OK(MPI_Info_create(&info));
        EXPECT_OK(MPI_Info_set(info, t, t));
        buflen = sizeof v;
        flag = 0;
        EXPECT_OK(MPI_Info_get_string(info, t, &buflen, v, &flag));
        CHECK(flag == 1 && !strcmp(v, t), "info value %d did not round-trip", i);
        EXPECT_OK(MPI_Info_free(&info));

        EXPECT_OK(MPI_Add_error_string(code, t));
        EXPECT_OK(MPI_Error_string(code, s, &len));
        CHECK(!strcmp(s, t), "error string %d did not round-trip", i);
    }
    EXPECT_OK(MPI_Remove_error_string(code));
    EXPECT_OK(MPI_Remove_error_code(code));
    EXPECT_OK(MPI_Remove_error_class(cls));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
