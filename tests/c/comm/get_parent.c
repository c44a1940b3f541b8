/* MPI_Comm_get_parent in a process not started by MPI_Comm_spawn gives MPI_COMM_NULL (it
 * returned MPI_ERR_UNSUPPORTED_OPERATION; mpi4py's test_comm calls it); a null pointer is
 * MPI_ERR_ARG. */
#include "wtest.h"

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm parent = MPI_COMM_WORLD;
    EXPECT_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "MPI_Comm_get_parent gave %p", (void *)parent);
    EXPECT_ERR(MPI_Comm_get_parent(NULL), MPI_ERR_ARG, "MPI_Comm_get_parent", "parent");
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
