/* A failing call's code keeps its class, and its string names the function and argument. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int rank = -7, cls = -1, len = -1, rc;
    char s[MPI_MAX_ERROR_STRING];

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    rc = MPI_Comm_rank((MPI_Comm)WTEST_GARBAGE, &rank);
    CHECK(rc != MPI_SUCCESS, "MPI_Comm_rank on garbage succeeded");
    CHECK_INT(rank, -7);
    EXPECT_OK(MPI_Error_class(rc, &cls));
    CHECK_INT(cls, MPI_ERR_COMM);
    EXPECT_OK(MPI_Error_string(rc, s, &len));
    CHECK_CONTAINS(s, "MPI_Comm_rank");
    CHECK_CONTAINS(s, "comm");
    CHECK_INT(len, strlen(s));

    /* The message of an earlier error is still there after others. */
    {
        int rc2 = MPI_Comm_size(MPI_COMM_WORLD, NULL);
        char s2[MPI_MAX_ERROR_STRING];
        EXPECT_OK(MPI_Error_class(rc2, &cls));
        CHECK_INT(cls, MPI_ERR_ARG);
        EXPECT_OK(MPI_Error_string(rc2, s2, &len));
        CHECK_CONTAINS(s2, "MPI_Comm_size");
        CHECK_CONTAINS(s2, "size");
        EXPECT_OK(MPI_Error_string(rc, s, &len));
        CHECK_CONTAINS(s, "MPI_Comm_rank");
    }
    CHECK(len > 0 && len < MPI_MAX_ERROR_STRING, "len %d", len);

    /* Many errors later the first code still has its class and a string (its detailed
     * message may have been replaced by the class's description). */
    for (int i = 0; i < 1000; i++) {
        int r2 = MPI_Comm_size(MPI_COMM_WORLD, NULL), c2 = -1;
        MPI_Error_class(r2, &c2);
        if (c2 != MPI_ERR_ARG) {
            FAIL("error %d: class %d", i, c2);
            break;
        }
    }
    cls = -1;
    EXPECT_OK(MPI_Error_class(rc, &cls));
    CHECK_INT(cls, MPI_ERR_COMM);
    len = -1;
    EXPECT_OK(MPI_Error_string(rc, s, &len));
    CHECK(len > 0 && len == (int)strlen(s), "string of an old code: len %d \"%s\"", len, s);

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
