/* MPI_Comm_split_type with MPI_COMM_TYPE_RESOURCE_GUIDED (guided by mpi_hw_resource_type like
 * MPI_COMM_TYPE_HW_GUIDED) and on an intercommunicator (as in MPICH: the processes of one node
 * on both sides form an intercommunicator). All ranks run on one node. Needs >= 2 ranks. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int rank, size, res, flag, n, inter, lsize, rsize, len;
    MPI_Comm c, half, ic;
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL];

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Resource-guided: without the hint (or with an unknown value) no communicator; with
     * mpi_shared_memory the node's. */
    EXPECT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "no hint: no communicator");
    EXPECT_OK(MPI_Info_create(&info));
    EXPECT_OK(MPI_Info_set(info, "mpi_hw_resource_type", "@no-such-resource@"));
    EXPECT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL, "unknown resource: no communicator");
    EXPECT_OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    EXPECT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, info, &c));
    CHECK(c != MPI_COMM_NULL, "mpi_shared_memory gave MPI_COMM_NULL");
    if (c != MPI_COMM_NULL) {
        EXPECT_OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &res));
        CHECK_INT(res, MPI_CONGRUENT);
        EXPECT_OK(MPI_Comm_free(&c));
    }
    len = sizeof v;
    EXPECT_OK(MPI_Info_get_string(info, "mpi_hw_resource_type", &len, v, &flag));
    CHECK(flag && !strcmp(v, "mpi_shared_memory"), "the info argument was changed: %s", v);
    /* Only rank 0 asks: it alone. */
    EXPECT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, rank == 0 ? MPI_COMM_TYPE_RESOURCE_GUIDED : MPI_UNDEFINED,
                                  0, info, &c));
    CHECK((c != MPI_COMM_NULL) == (rank == 0), "only rank 0 gets a communicator");
    if (c != MPI_COMM_NULL) {
        EXPECT_OK(MPI_Comm_size(c, &n));
        CHECK_INT(n, 1);
        EXPECT_OK(MPI_Comm_free(&c));
    }
    EXPECT_OK(MPI_Info_free(&info));

    /* An intercommunicator between the lower and the upper half. */
    EXPECT_OK(MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half));
    EXPECT_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank < size / 2 ? size / 2 : 0, 7, &ic));
    EXPECT_OK(MPI_Comm_size(ic, &lsize));
    EXPECT_OK(MPI_Comm_remote_size(ic, &rsize));
    EXPECT_OK(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
    CHECK(c != MPI_COMM_NULL, "a shared split of an intercommunicator gave MPI_COMM_NULL");
    if (c != MPI_COMM_NULL) {
        EXPECT_OK(MPI_Comm_test_inter(c, &inter));
        CHECK_INT(inter, 1);
        EXPECT_OK(MPI_Comm_size(c, &n));
        CHECK_INT(n, lsize);
        EXPECT_OK(MPI_Comm_remote_size(c, &n));
        CHECK_INT(n, rsize);
        /* It works: a message across. */
        n = -1;
        if (rank == 0)
            EXPECT_OK(MPI_Send(&size, 1, MPI_INT, 0, 3, c));
        else if (rank == size / 2)
            EXPECT_OK(MPI_Recv(&n, 1, MPI_INT, 0, 3, c, MPI_STATUS_IGNORE));
        if (rank == size / 2)
            CHECK_INT(n, size);
        EXPECT_OK(MPI_Comm_free(&c));
    }
    EXPECT_OK(MPI_Comm_split_type(ic, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED on an intercommunicator");
    /* Unguided: one node, so no level splits the processes further than... whatever it
     * picks, it is the same on both sides and gives an intercommunicator or nothing. */
    EXPECT_OK(MPI_Comm_split_type(ic, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &c));
    if (c != MPI_COMM_NULL) {
        EXPECT_OK(MPI_Comm_test_inter(c, &inter));
        CHECK_INT(inter, 1);
        EXPECT_OK(MPI_Comm_free(&c));
    }
    EXPECT_OK(MPI_Comm_free(&ic));
    EXPECT_OK(MPI_Comm_free(&half));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
