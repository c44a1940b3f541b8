/* Peer-failure mode (WEFT_UCX_PEER_FAILURE=1) takes a peer that finished for a lost one
 * unless the peer says goodbye: rank 1 ends its only session and exits (its UCX connections
 * close) while rank 0 waits for a message from rank 2. Rank 0's wait must complete with the
 * message, not fail with MPI_ERR_PROC_ABORTED ("UCX lost job rank 1: Endpoint timeout"),
 * and ranks 0 and 2 go on talking. Run with every rank its own logical node, UCX over TCP
 * (which reports a closed connection at once). */
#include "wtest.h"
#include <unistd.h>

int main(void)
{
    MPI_Session s;
    MPI_Group g;
    MPI_Comm c;
    int rank, size, peer, in, out;
    EXPECT_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    EXPECT_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    EXPECT_OK(MPI_Comm_create_from_group(g, "weft.test.goodbye", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    EXPECT_OK(MPI_Group_free(&g));
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    wtest_rank = rank;
    CHECK_INT(size, 3);
    /* Every pair talks both ways: every rank has an endpoint to every other. */
    for (peer = 0; peer < size; peer++) {
        if (peer == rank)
            continue;
        out = 10 * rank + peer;
        in = -1;
        EXPECT_OK(MPI_Sendrecv(&out, 1, MPI_INT, peer, 1, &in, 1, MPI_INT, peer, 1, c, MPI_STATUS_IGNORE));
        CHECK_INT(in, 10 * peer + rank);
    }
    if (rank == 0) {
        /* Waiting while rank 1 leaves. */
        in = -1;
        EXPECT_OK(MPI_Recv(&in, 1, MPI_INT, 2, 2, c, MPI_STATUS_IGNORE));
        CHECK_INT(in, 222);
        out = 333;
        EXPECT_OK(MPI_Send(&out, 1, MPI_INT, 2, 3, c));
    } else if (rank == 2) {
        /* Give rank 1 time to exit and its connections to close before rank 0 gets this. */
        sleep(2);
        out = 222;
        EXPECT_OK(MPI_Send(&out, 1, MPI_INT, 0, 2, c));
        in = -1;
        EXPECT_OK(MPI_Recv(&in, 1, MPI_INT, 0, 3, c, MPI_STATUS_IGNORE));
        CHECK_INT(in, 333);
    }
    EXPECT_OK(MPI_Comm_free(&c));
    EXPECT_OK(MPI_Session_finalize(&s));
    return wtest_finish();
}
