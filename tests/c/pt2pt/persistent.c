/* Persistent requests: Send_init/Recv_init/Ssend_init/Rsend_init/Bsend_init, Start, Startall;
 * a completed persistent request becomes inactive (not freed), waiting on an inactive one
 * returns the empty status, and MPI_Request_free frees an inactive one. */
#include "pt2pt_util.h"

#define ITERS 20
#define N 64

int main(int argc, char **argv)
{
    int rank, size, buf[N], in[N], i, it, flag;
    MPI_Request reqs[4];
    MPI_Status st;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;

    /* Ping-pong with one send and one receive request reused ITERS times. */
    EXPECT_OK(MPI_Send_init(buf, N, MPI_INT, peer, 7, MPI_COMM_WORLD, &reqs[0]));
    EXPECT_OK(MPI_Recv_init(in, N, MPI_INT, peer, 7, MPI_COMM_WORLD, &reqs[1]));
    MPI_Request saved0 = reqs[0], saved1 = reqs[1];
    for (it = 0; it < ITERS; it++) {
        for (i = 0; i < N; i++) {
            buf[i] = rank * 100000 + it * 100 + i;
            in[i] = -1;
        }
        EXPECT_OK(MPI_Startall(2, reqs));
        MPI_Status sts[2];
        EXPECT_OK(MPI_Waitall(2, reqs, sts));
        CHECK(reqs[0] == saved0 && reqs[1] == saved1, "persistent handles stay valid after completion");
        CHECK_INT(sts[1].MPI_SOURCE, peer);
        CHECK_INT(sts[1].MPI_TAG, 7);
        int count = -1;
        MPI_Get_count(&sts[1], MPI_INT, &count);
        CHECK_INT(count, N);
        for (i = 0; i < N; i++)
            if (in[i] != peer * 100000 + it * 100 + i) {
                FAIL("iteration %d: in[%d] = %d", it, i, in[i]);
                break;
            }
    }
    /* Waiting on an inactive persistent request returns at once with the empty status. */
    st.MPI_SOURCE = 99;
    st.MPI_TAG = 99;
    EXPECT_OK(MPI_Wait(&reqs[1], &st));
    CHECK(reqs[1] == saved1, "an inactive persistent request keeps its handle");
    CHECK_INT(st.MPI_SOURCE, MPI_ANY_SOURCE);
    CHECK_INT(st.MPI_TAG, MPI_ANY_TAG);
    flag = 0;
    EXPECT_OK(MPI_Test(&reqs[1], &flag, &st));
    CHECK_INT(flag, 1);
    int index = 5;
    EXPECT_OK(MPI_Waitany(2, reqs, &index, &st));
    CHECK_INT(index, MPI_UNDEFINED);
    EXPECT_OK(MPI_Request_get_status(reqs[0], &flag, &st));
    CHECK_INT(flag, 1);
    /* Starting an active request is an error; an inactive one may be freed. */
    EXPECT_OK(MPI_Start(&reqs[1]));
    EXPECT_ERR(MPI_Start(&reqs[1]), MPI_ERR_REQUEST, "MPI_Start", "request");
    buf[0] = 4242;
    EXPECT_OK(MPI_Start(&reqs[0]));
    EXPECT_OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
    EXPECT_OK(MPI_Wait(&reqs[1], &st));
    CHECK_INT(in[0], 4242);
    EXPECT_OK(MPI_Request_free(&reqs[0]));
    EXPECT_OK(MPI_Request_free(&reqs[1]));
    CHECK(reqs[0] == MPI_REQUEST_NULL, "freed handle is MPI_REQUEST_NULL");
    EXPECT_ERR(MPI_Start(&saved0), MPI_ERR_REQUEST, "MPI_Start", "request");
    /* A non-persistent request cannot be started. */
    EXPECT_OK(MPI_Irecv(in, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, &reqs[2]));
    EXPECT_ERR(MPI_Start(&reqs[2]), MPI_ERR_REQUEST, "MPI_Start", "persistent");
    EXPECT_OK(MPI_Send(buf, 1, MPI_INT, peer, 8, MPI_COMM_WORLD));
    EXPECT_OK(MPI_Wait(&reqs[2], MPI_STATUS_IGNORE));

    /* Ssend_init / Rsend_init / Bsend_init, large messages (rendezvous) included. */
    int big = 100000;
    int *bs = malloc(sizeof(int) * big), *br = malloc(sizeof(int) * big);
    char *bbuf = malloc(big * sizeof(int) + MPI_BSEND_OVERHEAD);
    EXPECT_OK(MPI_Buffer_attach(bbuf, big * (int)sizeof(int) + MPI_BSEND_OVERHEAD));
    MPI_Request sreq[3], rreq;
    EXPECT_OK(MPI_Ssend_init(bs, big, MPI_INT, peer, 11, MPI_COMM_WORLD, &sreq[0]));
    EXPECT_OK(MPI_Rsend_init(bs, big, MPI_INT, peer, 11, MPI_COMM_WORLD, &sreq[1]));
    EXPECT_OK(MPI_Bsend_init(bs, big, MPI_INT, peer, 11, MPI_COMM_WORLD, &sreq[2]));
    EXPECT_OK(MPI_Recv_init(br, big, MPI_INT, peer, 11, MPI_COMM_WORLD, &rreq));
    for (it = 0; it < 3; it++) {
        for (i = 0; i < big; i++)
            bs[i] = i * 3 + it + rank;
        EXPECT_OK(MPI_Start(&rreq));
        pair_sync(peer); /* the receive is posted before the ready send */
        EXPECT_OK(MPI_Start(&sreq[it]));
        EXPECT_OK(MPI_Wait(&sreq[it], MPI_STATUS_IGNORE));
        EXPECT_OK(MPI_Wait(&rreq, &st));
        CHECK_INT(st.MPI_SOURCE, peer);
        for (i = 0; i < big; i++)
            if (br[i] != i * 3 + it + peer) {
                FAIL("mode %d: br[%d] = %d", it, i, br[i]);
                break;
            }
    }
    for (i = 0; i < 3; i++)
        EXPECT_OK(MPI_Request_free(&sreq[i]));
    EXPECT_OK(MPI_Request_free(&rreq));
    void *addr;
    int bsize;
    EXPECT_OK(MPI_Buffer_detach(&addr, &bsize));
    CHECK(addr == bbuf, "detach returns the attached address");

    /* MPI_PROC_NULL peers: complete at once with source MPI_PROC_NULL. */
    EXPECT_OK(MPI_Recv_init(in, N, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &reqs[0]));
    EXPECT_OK(MPI_Start(&reqs[0]));
    EXPECT_OK(MPI_Wait(&reqs[0], &st));
    CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
    CHECK_INT(st.MPI_TAG, MPI_ANY_TAG);
    EXPECT_OK(MPI_Request_free(&reqs[0]));

    /* Freeing an active persistent receive: it still completes (the peer's send matches it). */
    EXPECT_OK(MPI_Recv_init(in, 1, MPI_INT, peer, 12, MPI_COMM_WORLD, &reqs[0]));
    EXPECT_OK(MPI_Start(&reqs[0]));
    EXPECT_OK(MPI_Request_free(&reqs[0]));
    buf[0] = 5;
    EXPECT_OK(MPI_Send(buf, 1, MPI_INT, peer, 12, MPI_COMM_WORLD));
    pair_sync(peer);

    /* Bad arguments. */
    EXPECT_ERR(MPI_Send_init(buf, -1, MPI_INT, peer, 0, MPI_COMM_WORLD, &reqs[0]), MPI_ERR_COUNT, "MPI_Send_init", "count");
    EXPECT_ERR(MPI_Recv_init(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &reqs[0]), MPI_ERR_RANK, "MPI_Recv_init", "source");
    EXPECT_ERR(MPI_Send_init(buf, 1, MPI_INT, peer, -3, MPI_COMM_WORLD, &reqs[0]), MPI_ERR_TAG, "MPI_Send_init", "tag");
    EXPECT_ERR(MPI_Send_init(buf, 1, MPI_INT, peer, 0, (MPI_Comm)WTEST_GARBAGE, &reqs[0]), MPI_ERR_COMM, "MPI_Send_init", "comm");
    EXPECT_ERR(MPI_Startall(-1, reqs), MPI_ERR_COUNT, "MPI_Startall", "count");
    MPI_Request bad = (MPI_Request)WTEST_GARBAGE;
    EXPECT_ERR(MPI_Start(&bad), MPI_ERR_REQUEST, "MPI_Start", "request");
    free(bs);
    free(br);
    free(bbuf);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
