/* User error classes, codes and strings: add, use, remove, and the mistakes. */
#include "wtest.h"

static int class_of(int code)
{
    int cls = -1;
    int rc = MPI_Error_class(code, &cls);
    return rc == MPI_SUCCESS ? cls : -1000 - rc;
}

static const char *string_of(int code)
{
    static char s[MPI_MAX_ERROR_STRING];
    int len = -1;
    s[0] = 0;
    if (MPI_Error_string(code, s, &len) != MPI_SUCCESS)
        return "(error)";
    if (len != (int)strlen(s))
        FAIL("MPI_Error_string(%d): resultlen %d for \"%s\"", code, len, s);
    return s;
}

int main(int argc, char **argv)
{
    int c1 = -1, c2 = -1, k1 = -1, k2 = -1, kcomm = -1, out;
    char big[MPI_MAX_ERROR_STRING + 10];

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    EXPECT_OK(MPI_Add_error_class(&c1));
    EXPECT_OK(MPI_Add_error_class(&c2));
    CHECK(c1 > MPI_ERR_LASTCODE, "user class %d not above MPI_ERR_LASTCODE", c1);
    CHECK(c2 > MPI_ERR_LASTCODE && c2 != c1, "classes %d %d", c1, c2);
    CHECK_INT(class_of(c1), c1);
    CHECK_INT(class_of(c2), c2);

    EXPECT_OK(MPI_Add_error_code(c1, &k1));
    EXPECT_OK(MPI_Add_error_code(c1, &k2));
    EXPECT_OK(MPI_Add_error_code(MPI_ERR_COMM, &kcomm));
    CHECK(k1 != k2 && k1 != c1 && k1 != c2 && k2 != c2, "codes %d %d, classes %d %d", k1, k2, c1, c2);
    CHECK(kcomm > MPI_ERR_LASTCODE, "code in MPI_ERR_COMM is %d", kcomm);
    CHECK_INT(class_of(k1), c1);
    CHECK_INT(class_of(k2), c1);
    CHECK_INT(class_of(kcomm), MPI_ERR_COMM);

    /* Strings: added, replaced, on classes and codes. */
    EXPECT_OK(MPI_Add_error_string(c1, "the first user class"));
    EXPECT_OK(MPI_Add_error_string(k1, "code one"));
    CHECK_STR(string_of(c1), "the first user class");
    CHECK_STR(string_of(k1), "code one");
    EXPECT_OK(MPI_Add_error_string(k1, "code one, again"));
    CHECK_STR(string_of(k1), "code one, again");
    EXPECT_OK(MPI_Add_error_string(kcomm, "a communicator problem of ours"));
    CHECK_STR(string_of(kcomm), "a communicator problem of ours");
    /* The longest string that fits. */
    memset(big, 's', MPI_MAX_ERROR_STRING - 1);
    big[MPI_MAX_ERROR_STRING - 1] = 0;
    EXPECT_OK(MPI_Add_error_string(k2, big));
    CHECK_STR(string_of(k2), big);
    /* One more is too long. */
    memset(big, 't', MPI_MAX_ERROR_STRING);
    big[MPI_MAX_ERROR_STRING] = 0;
    EXPECT_ERR(MPI_Add_error_string(k1, big), MPI_ERR_ARG, "MPI_Add_error_string", NULL);
    CHECK_STR(string_of(k1), "code one, again");

    /* Mistakes. */
    EXPECT_ERR(MPI_Add_error_string(MPI_ERR_COMM, "no"), MPI_ERR_ARG, "MPI_Add_error_string", NULL);
    EXPECT_ERR(MPI_Add_error_string(MPI_ERR_LASTCODE + 777777, "no"), MPI_ERR_ARG,
               "MPI_Add_error_string", NULL);
    EXPECT_ERR(MPI_Add_error_string(k1, NULL), MPI_ERR_ARG, "MPI_Add_error_string", "string");
    out = -5;
    EXPECT_ERR(MPI_Add_error_code(MPI_ERR_LASTCODE + 777777, &out), MPI_ERR_ARG, "MPI_Add_error_code",
               "errorclass");
    CHECK_INT(out, -5);
    EXPECT_ERR(MPI_Add_error_code(-3, &out), MPI_ERR_ARG, "MPI_Add_error_code", NULL);
    /* A code is no class: codes cannot be added to it. */
    EXPECT_ERR(MPI_Add_error_code(k1, &out), MPI_ERR_ARG, "MPI_Add_error_code", NULL);
    CHECK_INT(out, -5);
    EXPECT_ERR(MPI_Add_error_code(c1, NULL), MPI_ERR_ARG, "MPI_Add_error_code", "errorcode");
    EXPECT_ERR(MPI_Add_error_class(NULL), MPI_ERR_ARG, "MPI_Add_error_class", "errorclass");

    /* Removal: a class with codes cannot go; a code is not a class and the other way round;
     * standard classes cannot be removed. */
    EXPECT_ERR(MPI_Remove_error_class(c1), MPI_ERR_ARG, "MPI_Remove_error_class", NULL);
    CHECK_INT(class_of(c1), c1);
    EXPECT_ERR(MPI_Remove_error_class(k1), MPI_ERR_ARG, "MPI_Remove_error_class", NULL);
    EXPECT_ERR(MPI_Remove_error_code(c2), MPI_ERR_ARG, "MPI_Remove_error_code", NULL);
    EXPECT_ERR(MPI_Remove_error_class(MPI_ERR_COMM), MPI_ERR_ARG, "MPI_Remove_error_class", NULL);
    EXPECT_ERR(MPI_Remove_error_code(MPI_ERR_COMM), MPI_ERR_ARG, "MPI_Remove_error_code", NULL);
    EXPECT_ERR(MPI_Remove_error_string(MPI_ERR_COMM), MPI_ERR_ARG, "MPI_Remove_error_string", NULL);
    EXPECT_ERR(MPI_Remove_error_string(c2), MPI_ERR_ARG, "MPI_Remove_error_string", NULL);
    EXPECT_ERR(MPI_Remove_error_class(-1), MPI_ERR_ARG, "MPI_Remove_error_class", NULL);

    EXPECT_OK(MPI_Remove_error_string(k1));
    CHECK(strcmp(string_of(k1), "code one, again") != 0, "string of k1 still there");
    EXPECT_ERR(MPI_Remove_error_string(k1), MPI_ERR_ARG, "MPI_Remove_error_string", NULL);
    CHECK_INT(class_of(k1), c1); /* the code stays */

    EXPECT_OK(MPI_Remove_error_code(k1));
    EXPECT_CLASS(MPI_Error_class(k1, &out), MPI_ERR_ARG);
    EXPECT_ERR(MPI_Remove_error_code(k1), MPI_ERR_ARG, "MPI_Remove_error_code", NULL);
    EXPECT_ERR(MPI_Remove_error_class(c1), MPI_ERR_ARG, "MPI_Remove_error_class", NULL); /* k2 left */
    /* A value whose string was not removed first cannot go (MPI 5.0 §9.5). */
    EXPECT_ERR(MPI_Remove_error_code(k2), MPI_ERR_ARG, "MPI_Remove_error_code", "string");
    CHECK_INT(class_of(k2), c1);
    EXPECT_OK(MPI_Remove_error_string(k2));
    EXPECT_OK(MPI_Remove_error_code(k2));
    EXPECT_ERR(MPI_Remove_error_class(c1), MPI_ERR_ARG, "MPI_Remove_error_class", "string");
    CHECK_INT(class_of(c1), c1);
    EXPECT_OK(MPI_Remove_error_string(c1));
    EXPECT_OK(MPI_Remove_error_class(c1));
    EXPECT_CLASS(MPI_Error_class(c1, &out), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Error_class(k2, &out), MPI_ERR_ARG);
    EXPECT_ERR(MPI_Remove_error_class(c1), MPI_ERR_ARG, "MPI_Remove_error_class", NULL);
    CHECK_INT(class_of(c2), c2); /* untouched */

    EXPECT_OK(MPI_Remove_error_string(kcomm));
    EXPECT_OK(MPI_Remove_error_code(kcomm));
    EXPECT_CLASS(MPI_Error_class(kcomm, &out), MPI_ERR_ARG);
    CHECK_INT(class_of(MPI_ERR_COMM), MPI_ERR_COMM);
    EXPECT_OK(MPI_Remove_error_class(c2));

    /* Many classes and codes. */
    {
        int cls[50], codes[50];
        for (int i = 0; i < 50; i++) {
            EXPECT_OK(MPI_Add_error_class(&cls[i]));
            EXPECT_OK(MPI_Add_error_code(cls[i], &codes[i]));
        }
        for (int i = 0; i < 50; i++) {
            CHECK_INT(class_of(cls[i]), cls[i]);
            CHECK_INT(class_of(codes[i]), cls[i]);
            for (int j = 0; j < i; j++)
                CHECK(cls[i] != cls[j] && codes[i] != codes[j] && cls[i] != codes[j],
                      "values %d/%d reused", i, j);
        }
        for (int i = 0; i < 50; i++) {
            EXPECT_OK(MPI_Remove_error_code(codes[i]));
            EXPECT_OK(MPI_Remove_error_class(cls[i]));
        }
    }

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
