/* A rank blocked in MPI_Recv while other traffic arrives first: messages for another
 * communicator, another tag, a synchronous send, a rendezvous-sized message and a truncated
 * one. Each must reach the receive it belongs to, in order, with the right status (a
 * blocking receive that waits with nothing else pending copies a matching eager message
 * straight from the transport and hands everything else to the general path). */
#include "pt2pt_util.h"

#define BIG (1 << 20)

int main(int argc, char **argv)
{
    int rank, v, round;
    MPI_Status st;
    MPI_Comm other;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &other));
    int *big = malloc(BIG * sizeof(int));

    for (round = 0; round < 20; round++) {
        pair_sync(1 - rank);
        if (rank == 0) {
            /* Everything below arrives while rank 1 waits for (WORLD, tag 5). */
            v = 11 + round;
            EXPECT_OK(MPI_Send(&v, 1, MPI_INT, 1, 5, other));
            v = 22 + round;
            EXPECT_OK(MPI_Send(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD));
            for (int i = 0; i < BIG; i++)
                big[i] = i ^ round;
            MPI_Request big_req;
            EXPECT_OK(MPI_Isend(big, BIG, MPI_INT, 1, 9, MPI_COMM_WORLD, &big_req));
            v = 33 + round;
            EXPECT_OK(MPI_Ssend(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
            v = 44 + round;
            EXPECT_OK(MPI_Send(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
            int pair[2] = {55, 66};
            EXPECT_OK(MPI_Send(pair, 2, MPI_INT, 1, 6, MPI_COMM_WORLD));
            EXPECT_OK(MPI_Wait(&big_req, MPI_STATUS_IGNORE));
        } else {
            EXPECT_OK(MPI_Recv(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &st));
            CHECK_INT(v, 33 + round);
            CHECK_INT(st.MPI_TAG, 5);
            EXPECT_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st));
            CHECK_INT(v, 44 + round);
            CHECK_INT(st.MPI_SOURCE, 0);
            /* Too small a buffer: truncated, and the call says so. */
            v = -1;
            EXPECT_CLASS(MPI_Recv(&v, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
            CHECK_INT(v, 55);
            EXPECT_OK(MPI_Recv(&v, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK_INT(v, 22 + round);
            CHECK_INT(st.MPI_TAG, 7);
            for (int i = 0; i < BIG; i++)
                big[i] = -1;
            EXPECT_OK(MPI_Recv(big, BIG, MPI_INT, 0, 9, MPI_COMM_WORLD, &st));
            int count = -1;
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK_INT(count, BIG);
            for (int i = 0; i < BIG; i++)
                if (big[i] != (i ^ round)) {
                    FAIL("round %d: big[%d] = %d", round, i, big[i]);
                    break;
                }
            EXPECT_OK(MPI_Recv(&v, 1, MPI_INT, 0, 5, other, &st));
            CHECK_INT(v, 11 + round);
        }
    }
    free(big);
    EXPECT_OK(MPI_Comm_free(&other));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
