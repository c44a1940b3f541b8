/* MPI_ERRORS_RETURN: the code comes back with the right class and a message naming the
 * function and the argument; output arguments are not written. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int v = -7;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    EXPECT_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "MPI_Comm_get_errhandler gave %p", (void *)eh);
    EXPECT_OK(MPI_Errhandler_free(&eh));

    EXPECT_ERR(MPI_Comm_rank((MPI_Comm)WTEST_GARBAGE, &v), MPI_ERR_COMM, "MPI_Comm_rank", "comm");
    CHECK_INT(v, -7);
    EXPECT_ERR(MPI_Comm_size((MPI_Comm)WTEST_GARBAGE, &v), MPI_ERR_COMM, "MPI_Comm_size", "comm");
    CHECK_INT(v, -7);
    EXPECT_ERR(MPI_Comm_rank(MPI_COMM_NULL, &v), MPI_ERR_COMM, "MPI_Comm_rank", "comm");
    CHECK_INT(v, -7);
    EXPECT_ERR(MPI_Comm_size(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "MPI_Comm_size", "size");
    EXPECT_ERR(MPI_Comm_rank(MPI_COMM_SELF, NULL), MPI_ERR_ARG, "MPI_Comm_rank", "rank");

    /* Still works after the errors. */
    EXPECT_OK(MPI_Comm_size(MPI_COMM_SELF, &v));
    CHECK_INT(v, 1);

    /* Back to fatal, and the getter says so. */
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    EXPECT_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "MPI_Comm_get_errhandler gave %p", (void *)eh);
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT));
    EXPECT_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ABORT, "MPI_Comm_get_errhandler gave %p", (void *)eh);
    /* SELF kept its own. */
    EXPECT_OK(MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "SELF's errhandler is %p", (void *)eh);

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
