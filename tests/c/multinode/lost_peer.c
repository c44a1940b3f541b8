/* A peer on another logical node dies while this rank waits on it: the UCX failure must come
 * back as an MPI error (MPI_ERR_PROC_ABORTED), not a hang or a crash. Both ranks ignore
 * SIGTERM, so the launcher's first signal (sent when rank 1 dies) leaves rank 0 its grace
 * period to see the error; rank 0 then reports and leaves without MPI_Finalize (its peer is
 * gone). Run with WEFT_NODES=per-rank and UCX over TCP, which sees a dead peer at once. */
#include "wtest.h"
#include <signal.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank = -1, x = 0, y = 0;
    signal(SIGTERM, SIG_IGN);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    wtest_world_rank();
    wtest_errors_return();
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the UCX endpoints are in use */
    if (rank == 1) {
        raise(SIGKILL);
        return 1;
    }
    if (rank == 0) {
        MPI_Request req;
        EXPECT_OK(MPI_Irecv(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &req));
        /* The pending receive fails once UCX reports the peer lost. */
        EXPECT_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_PROC_ABORTED);
        /* A send to the lost peer fails at once, naming it. */
        EXPECT_ERR(MPI_Send(&y, 1, MPI_INT, 1, 8, MPI_COMM_WORLD), MPI_ERR_PROC_ABORTED, "rank 1", NULL);
        /* So does a large one (rendezvous). */
        static int big[100000];
        EXPECT_CLASS(MPI_Send(big, 100000, MPI_INT, 1, 9, MPI_COMM_WORLD), MPI_ERR_PROC_ABORTED);
        if (wtest_finish() == 0)
            printf("rank 0 saw its peer lost as MPI_ERR_PROC_ABORTED\n");
        fflush(stdout);
        fflush(stderr);
        _exit(0);
    }
    return 1;
}
