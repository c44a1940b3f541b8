/* MPI_Initialized/MPI_Finalized before, during and after MPI; the functions the standard allows
 * outside of MPI (versions, error strings of classes) give the same answers then. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int flag = -1, v = -1, sv = -1, len = -1, cls = -1;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    char s[MPI_MAX_ERROR_STRING];

    /* Before MPI_Init. */
    EXPECT_OK(MPI_Initialized(&flag));
    CHECK_INT(flag, 0);
    flag = -1;
    EXPECT_OK(MPI_Finalized(&flag));
    CHECK_INT(flag, 0);
    EXPECT_OK(MPI_Get_version(&v, &sv));
    CHECK_INT(v, 5);
    CHECK_INT(sv, 0);
    EXPECT_OK(MPI_Get_library_version(lib, &len));
    CHECK(strncmp(lib, "Weft", 4) == 0, "library version before init: \"%s\"", lib);
    CHECK_INT(len, strlen(lib));
    v = sv = -1;
    EXPECT_OK(MPI_Abi_get_version(&v, &sv));
    CHECK_INT(v, 1);
    CHECK_INT(sv, 0);
    EXPECT_OK(MPI_Error_class(MPI_ERR_COMM, &cls));
    CHECK_INT(cls, MPI_ERR_COMM);
    EXPECT_OK(MPI_Error_string(MPI_ERR_COMM, s, &len));
    CHECK(len > 0 && len == (int)strlen(s), "error string before init: len %d \"%s\"", len, s);

    EXPECT_OK(MPI_Init(&argc, &argv));
    flag = -1;
    EXPECT_OK(MPI_Initialized(&flag));
    CHECK_INT(flag, 1);
    flag = -1;
    EXPECT_OK(MPI_Finalized(&flag));
    CHECK_INT(flag, 0);
    wtest_world_rank();

    /* A second MPI_Init is an error (it returns once errors return). */
    wtest_errors_return();
    {
        int rc = MPI_Init(&argc, &argv);
        CHECK(rc != MPI_SUCCESS, "a second MPI_Init succeeded");
        if (rc != MPI_SUCCESS)
            CHECK_CONTAINS(wtest_string(rc), "MPI_Init");
        flag = -1;
        EXPECT_OK(MPI_Initialized(&flag));
        CHECK_INT(flag, 1);
    }

    EXPECT_OK(MPI_Finalize());
    {
        /* A second MPI_Finalize is an error too, never a crash. */
        int rc = MPI_Finalize();
        CHECK(rc != MPI_SUCCESS, "a second MPI_Finalize succeeded");
    }
    flag = -1;
    EXPECT_OK(MPI_Initialized(&flag));
    CHECK_INT(flag, 1); /* stays true after MPI_Finalize */
    flag = -1;
    EXPECT_OK(MPI_Finalized(&flag));
    CHECK_INT(flag, 1);
    v = sv = -1;
    EXPECT_OK(MPI_Get_version(&v, &sv));
    CHECK_INT(v, 5);
    CHECK_INT(sv, 0);
    len = -1;
    EXPECT_OK(MPI_Get_library_version(lib, &len));
    CHECK(strncmp(lib, "Weft", 4) == 0 && len == (int)strlen(lib), "after finalize: \"%s\"", lib);
    return wtest_finish();
}
