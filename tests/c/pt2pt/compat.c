/* Corner cases other implementations accept and that portable programs rely on: an empty
 * message described by MPI_DATATYPE_NULL (count 0) to or from MPI_PROC_NULL and to a real
 * peer; a nonzero count with MPI_DATATYPE_NULL is still an error. */
#include "pt2pt_util.h"

int main(int argc, char **argv)
{
    int rank;
    MPI_Request req;
    MPI_Status st;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int peer = rank ^ 1;

    st.MPI_SOURCE = 77;
    st.MPI_TAG = 77;
    EXPECT_OK(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &req));
    EXPECT_OK(MPI_Wait(&req, &st));
    CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
    CHECK_INT(st.MPI_TAG, MPI_ANY_TAG);
    st.MPI_SOURCE = 77;
    EXPECT_OK(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &st));
    CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
    EXPECT_OK(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 10, MPI_COMM_WORLD));

    /* A real empty message with no type on either side. */
    if (rank == 0) {
        EXPECT_OK(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, peer, 5, MPI_COMM_WORLD));
    } else {
        int count = -1;
        EXPECT_OK(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, peer, 5, MPI_COMM_WORLD, &st));
        CHECK_INT(st.MPI_SOURCE, peer);
        CHECK_INT(st.MPI_TAG, 5);
        EXPECT_OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK_INT(count, 0);
    }

    int v = 3;
    EXPECT_ERR(MPI_Send(&v, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Send", "datatype");
    EXPECT_ERR(MPI_Irecv(&v, 2, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req), MPI_ERR_TYPE, "MPI_Irecv", "datatype");
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
