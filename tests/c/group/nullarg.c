/* A null newgroup is MPI_ERR_ARG even when the ranks or ranges are out of range too (MPICH's
 * errors/group/group_range_*_nullarg got MPI_ERR_RANK): the output pointer is checked first. */
#include "wtest.h"

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Group g;
    int size;
    EXPECT_OK(MPI_Comm_group(MPI_COMM_WORLD, &g));
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int range[1][3] = {{size, size + 3, 1}}; /* out of range */
    int ranks[1] = {size};
    EXPECT_ERR(MPI_Group_range_incl(g, 1, range, NULL), MPI_ERR_ARG, "MPI_Group_range_incl", "newgroup");
    EXPECT_ERR(MPI_Group_range_excl(g, 1, range, NULL), MPI_ERR_ARG, "MPI_Group_range_excl", "newgroup");
    EXPECT_ERR(MPI_Group_incl(g, 1, ranks, NULL), MPI_ERR_ARG, "MPI_Group_incl", "newgroup");
    EXPECT_ERR(MPI_Group_excl(g, 1, ranks, NULL), MPI_ERR_ARG, "MPI_Group_excl", "newgroup");
    EXPECT_ERR(MPI_Group_union(g, (MPI_Group)WTEST_GARBAGE, NULL), MPI_ERR_ARG, "MPI_Group_union", "newgroup");
    /* With a valid output pointer the range is what is wrong. */
    MPI_Group out = MPI_GROUP_NULL;
    EXPECT_ERR(MPI_Group_range_incl(g, 1, range, &out), MPI_ERR_RANK, "MPI_Group_range_incl", "ranges");
    CHECK(out == MPI_GROUP_NULL, "output written on error");
    EXPECT_OK(MPI_Group_free(&g));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
