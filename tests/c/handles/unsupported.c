/* Functions Weft does not implement yet return MPI_ERR_UNSUPPORTED_OPERATION, naming themselves. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int x = 0;
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Request req = MPI_REQUEST_NULL;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    EXPECT_ERR(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_SELF), MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Send", NULL);
    EXPECT_ERR(MPI_Isend(&x, 1, MPI_INT, 0, 0, MPI_COMM_SELF, &req), MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Isend", NULL);
    CHECK(req == MPI_REQUEST_NULL, "request written");
    EXPECT_ERR(MPI_Barrier(MPI_COMM_WORLD), MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Barrier", NULL);
    EXPECT_ERR(MPI_Comm_dup(MPI_COMM_WORLD, &dup), MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Comm_dup", NULL);
    CHECK(dup == MPI_COMM_NULL, "output written");
    EXPECT_ERR(MPI_Type_contiguous(2, MPI_INT, &t), MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Type_contiguous", NULL);
    EXPECT_ERR(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
               MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Allreduce", NULL);
    EXPECT_ERR(MPI_Send_c(&x, 1, MPI_INT, 0, 0, MPI_COMM_SELF), MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Send_c", NULL);

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
