/* RMA windows across logical nodes are not supported yet (docs/multinode.md): creating one
 * over ranks on several nodes fails on every rank with MPI_ERR_UNSUPPORTED_OPERATION, naming
 * the function and the reason, and leaves the job usable. A window over one node's ranks
 * (MPI_COMM_TYPE_SHARED) works: put, get and accumulate, with values checked. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int rank, size, nrank, nsize, i;
    MPI_Comm node;
    MPI_Win win = MPI_WIN_NULL;
    int *base = NULL;
    int local[4] = {0};
    int v, one = 1, got = -7;
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    rank = wtest_world_rank();
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    EXPECT_ERR(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
               MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Win_allocate", "another node");
    CHECK(win == MPI_WIN_NULL, "no window after the error");
    EXPECT_ERR(MPI_Win_create(local, sizeof local, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win),
               MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Win_create", "not supported");
    EXPECT_ERR(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win),
               MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Win_create_dynamic", "not supported");
    CHECK(win == MPI_WIN_NULL, "no window after the errors");
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the job carries on */

    EXPECT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    EXPECT_OK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &base, &win));
    for (i = 0; i < 4; i++)
        base[i] = -1;
    EXPECT_OK(MPI_Win_fence(0, win));
    {
        int right = (nrank + 1) % nsize;
        v = 100 + rank;
        EXPECT_OK(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
        EXPECT_OK(MPI_Accumulate(&one, 1, MPI_INT, right, 1, 1, MPI_INT, MPI_REPLACE, win));
    }
    EXPECT_OK(MPI_Win_fence(0, win));
    {
        int left = (nrank + nsize - 1) % nsize;
        int left_world = -1;
        MPI_Group wg, ng;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Comm_group(node, &ng);
        MPI_Group_translate_ranks(ng, 1, &left, wg, &left_world);
        MPI_Group_free(&wg);
        MPI_Group_free(&ng);
        CHECK_INT(base[0], 100 + left_world);
        CHECK_INT(base[1], 1);
        /* Everyone adds to rank 0's third word, and reads its own first word back. */
        EXPECT_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, 2, 1, MPI_INT, MPI_SUM, win));
        EXPECT_OK(MPI_Get(&got, 1, MPI_INT, nrank, 0, 1, MPI_INT, win));
        EXPECT_OK(MPI_Win_fence(0, win));
        CHECK_INT(got, 100 + left_world);
        if (nrank == 0)
            CHECK_INT(base[2], -1 + nsize);
    }
    EXPECT_OK(MPI_Win_free(&win));
    EXPECT_OK(MPI_Comm_free(&node));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
