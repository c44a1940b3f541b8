/* Groups of world-model communicators (MPI_COMM_WORLD's and those derived from it: split,
 * intercommunicators, their remote groups) make communicators with
 * MPI_Comm_create_from_group and MPI_Intercomm_create_from_groups. Needs >= 2 ranks. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int rank, size, res, n;
    MPI_Comm half, ic, c, ic2;
    MPI_Group lg, rg, hg;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    EXPECT_OK(MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half));
    EXPECT_OK(MPI_Comm_group(half, &hg));
    EXPECT_OK(MPI_Comm_create_from_group(hg, "weft.test.half", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    if (c != MPI_COMM_NULL) {
        EXPECT_OK(MPI_Comm_compare(c, half, &res));
        CHECK_INT(res, MPI_CONGRUENT);
        EXPECT_OK(MPI_Comm_free(&c));
    } else {
        FAIL("MPI_Comm_create_from_group gave MPI_COMM_NULL");
    }

    EXPECT_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank < size / 2 ? size / 2 : 0, 7, &ic));
    EXPECT_OK(MPI_Comm_group(ic, &lg));
    EXPECT_OK(MPI_Comm_remote_group(ic, &rg));
    EXPECT_OK(MPI_Intercomm_create_from_groups(lg, 0, rg, 0, "weft.test.inter", MPI_INFO_NULL,
                                               MPI_ERRORS_RETURN, &ic2));
    if (ic2 != MPI_COMM_NULL) {
        EXPECT_OK(MPI_Comm_compare(ic, ic2, &res));
        CHECK_INT(res, MPI_CONGRUENT);
        n = -1;
        if (rank == 0)
            EXPECT_OK(MPI_Send(&size, 1, MPI_INT, 0, 1, ic2));
        else if (rank == size / 2)
            EXPECT_OK(MPI_Recv(&n, 1, MPI_INT, 0, 1, ic2, MPI_STATUS_IGNORE));
        if (rank == size / 2)
            CHECK_INT(n, size);
        EXPECT_OK(MPI_Comm_free(&ic2));
    } else {
        FAIL("MPI_Intercomm_create_from_groups gave MPI_COMM_NULL");
    }

    EXPECT_OK(MPI_Group_free(&lg));
    EXPECT_OK(MPI_Group_free(&rg));
    EXPECT_OK(MPI_Group_free(&hg));
    EXPECT_OK(MPI_Comm_free(&ic));
    EXPECT_OK(MPI_Comm_free(&half));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
