/* A message that ends inside a basic element of a non-contiguous receive datatype (3 chars
 * into ints) cannot match the type signature: the receive fails with MPI_ERR_TYPE (MPICH's
 * errors/pt2pt/truncmsg2 got MPI_SUCCESS), by the eager, the pipelined and the single-copy
 * path, blocking and nonblocking. A shorter message that ends on an element is fine. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int rank;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    /* Receive type: 2 ints, every other int (non-contiguous). */
    MPI_Datatype every_other;
    EXPECT_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &every_other));
    EXPECT_OK(MPI_Type_commit(&every_other));
    const int big = 20000; /* instances: 160000 bytes, past the eager limit */
    int *rbuf = calloc(4 * big, sizeof(int));
    char *sbuf = malloc(8 * big);
    for (int i = 0; i < 8 * big; i++)
        sbuf[i] = (char)i;

    int sizes[] = {3, 8 * big - 1, 8, 12};
    for (int k = 0; k < 4; k++) {
        int n = sizes[k];
        if (rank == 1) {
            EXPECT_OK(MPI_Send(sbuf, n, MPI_CHAR, 0, k, MPI_COMM_WORLD));
            EXPECT_OK(MPI_Send(sbuf, n, MPI_CHAR, 0, 100 + k, MPI_COMM_WORLD));
        } else if (rank == 0) {
            MPI_Status st;
            int ok = n % 4 == 0;
            int rc = MPI_Recv(rbuf, big, every_other, 1, k, MPI_COMM_WORLD, &st);
            if (ok) {
                EXPECT_OK(rc);
                int count = -1;
                MPI_Get_elements(&st, MPI_INT, &count);
                CHECK_INT(count, n / 4);
            } else {
                EXPECT_ERR(rc, MPI_ERR_TYPE, "MPI_Recv", "signature");
            }
            MPI_Request req;
            EXPECT_OK(MPI_Irecv(rbuf, big, every_other, 1, 100 + k, MPI_COMM_WORLD, &req));
            rc = MPI_Wait(&req, &st);
            if (ok)
                EXPECT_OK(rc);
            else
                EXPECT_ERR(rc, MPI_ERR_TYPE, "MPI_Wait", NULL);
        }
    }
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
    free(rbuf);
    free(sbuf);
    EXPECT_OK(MPI_Type_free(&every_other));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
