/* Cancel of a posted receive (cancelled) and of an unmatched send (cancelled: withdrawn),
 * truncation (MPI_ERR_TRUNCATE with the status filled, eager and large), synchronous sends
 * that do not complete before the match, Isendrecv/Isendrecv_replace and the MPI 4.1
 * MPI_Request_get_status_any/_some/_all. */
#include "pt2pt_util.h"

#define BIG 100000

int main(int argc, char **argv)
{
    int rank, flag, i, count, v = 0, w[4];
    MPI_Status st;
    MPI_Request req, reqs[3];
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int peer = rank ^ 1;
    int *big = malloc(BIG * sizeof(int));

    /* Cancel a posted receive. */
    EXPECT_OK(MPI_Irecv(&v, 1, MPI_INT, peer, 99, MPI_COMM_WORLD, &req));
    EXPECT_OK(MPI_Cancel(&req));
    EXPECT_OK(MPI_Wait(&req, &st));
    EXPECT_OK(MPI_Test_cancelled(&st, &flag));
    CHECK_INT(flag, 1);
    /* Cancel a send no receive matched: withdrawn (the status says cancelled and the
     * message never arrives; more cases in cancel_send.c). */
    v = 31;
    EXPECT_OK(MPI_Isend(&v, 1, MPI_INT, peer, 98, MPI_COMM_WORLD, &req));
    EXPECT_OK(MPI_Cancel(&req));
    EXPECT_OK(MPI_Wait(&req, &st));
    EXPECT_OK(MPI_Test_cancelled(&st, &flag));
    CHECK_INT(flag, 1);
    pair_sync(peer);
    EXPECT_OK(MPI_Iprobe(peer, 98, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK_INT(flag, 0);
    EXPECT_ERR(MPI_Cancel(NULL), MPI_ERR_ARG, "MPI_Cancel", "request");
    MPI_Request nul = MPI_REQUEST_NULL;
    EXPECT_CLASS(MPI_Cancel(&nul), MPI_ERR_REQUEST);

    /* Truncation: 4 ints into room for 2 (eager), BIG ints into BIG/2 (rendezvous). */
    if (rank == 0) {
        int a[4] = {1, 2, 3, 4};
        EXPECT_OK(MPI_Send(a, 4, MPI_INT, 1, 5, MPI_COMM_WORLD));
        for (i = 0; i < BIG; i++)
            big[i] = i;
        EXPECT_OK(MPI_Send(big, BIG, MPI_INT, 1, 6, MPI_COMM_WORLD));
    } else {
        st.MPI_SOURCE = st.MPI_TAG = -5;
        w[2] = -1;
        EXPECT_ERR(MPI_Recv(w, 2, MPI_INT, 0, 5, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE, "MPI_Recv", "truncated");
        CHECK_INT(st.MPI_SOURCE, 0);
        CHECK_INT(st.MPI_TAG, 5);
        CHECK_INT(w[0], 1);
        CHECK_INT(w[1], 2);
        CHECK_INT(w[2], -1); /* nothing written past the buffer */
        EXPECT_OK(MPI_Irecv(big, BIG / 2, MPI_INT, 0, 6, MPI_COMM_WORLD, &req));
        EXPECT_ERR(MPI_Wait(&req, &st), MPI_ERR_TRUNCATE, "MPI_Wait", NULL);
        CHECK_INT(st.MPI_TAG, 6);
        CHECK_INT(big[BIG / 2 - 1], BIG / 2 - 1);
    }
    pair_sync(peer);

    /* Ssend does not complete before the receive is posted. Rank 0 Issends, tests many
     * times (must stay incomplete), then tells rank 1 to post the receive. */
    if (rank == 0) {
        for (int size_case = 0; size_case < 2; size_case++) {
            int n = size_case ? BIG : 1;
            EXPECT_OK(MPI_Issend(big, n, MPI_INT, 1, 20 + size_case, MPI_COMM_WORLD, &req));
            for (i = 0; i < 2000; i++) {
                EXPECT_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
                if (flag)
                    break;
            }
            CHECK(!flag, "Issend of %d ints completed before the receive was posted", n);
            EXPECT_OK(MPI_Send(&v, 1, MPI_INT, 1, 30, MPI_COMM_WORLD)); /* "post it now" */
            EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        /* The blocking form with a receive posted first. */
        EXPECT_OK(MPI_Ssend(&v, 1, MPI_INT, 1, 22, MPI_COMM_WORLD));
    } else {
        for (int size_case = 0; size_case < 2; size_case++) {
            EXPECT_OK(MPI_Recv(&v, 1, MPI_INT, 0, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            EXPECT_OK(MPI_Recv(big, BIG, MPI_INT, 0, 20 + size_case, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        EXPECT_OK(MPI_Recv(&v, 1, MPI_INT, 0, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }

    /* Isendrecv: exchange ranks; Isendrecv_replace: exchange in place (large too). */
    int mine = rank + 100, theirs = -1;
    EXPECT_OK(MPI_Isendrecv(&mine, 1, MPI_INT, peer, 40, &theirs, 1, MPI_INT, peer, 40, MPI_COMM_WORLD, &req));
    EXPECT_OK(MPI_Wait(&req, &st));
    CHECK_INT(theirs, peer + 100);
    CHECK_INT(st.MPI_SOURCE, peer);
    CHECK_INT(st.MPI_TAG, 40);
    for (i = 0; i < BIG; i++)
        big[i] = rank * BIG + i;
    EXPECT_OK(MPI_Isendrecv_replace(big, BIG, MPI_INT, peer, 41, peer, 41, MPI_COMM_WORLD, &req));
    EXPECT_OK(MPI_Wait(&req, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, BIG);
    for (i = 0; i < BIG; i++)
        if (big[i] != peer * BIG + i) {
            FAIL("replace: big[%d] = %d", i, big[i]);
            break;
        }
    EXPECT_OK(MPI_Isendrecv_replace_c(&mine, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req));
    EXPECT_OK(MPI_Wait(&req, &st));
    CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
    CHECK_INT(mine, rank + 100);

    /* MPI_Request_get_status_any/_some/_all do not free the requests. */
    int r1 = -1, r2 = -1;
    EXPECT_OK(MPI_Irecv(&r1, 1, MPI_INT, peer, 50, MPI_COMM_WORLD, &reqs[0]));
    EXPECT_OK(MPI_Irecv(&r2, 1, MPI_INT, peer, 51, MPI_COMM_WORLD, &reqs[1]));
    reqs[2] = MPI_REQUEST_NULL;
    int index = -2, outcount = -2, indices[3];
    MPI_Status sts[3];
    pair_sync(peer);
    EXPECT_OK(MPI_Request_get_status_all(3, reqs, &flag, sts));
    CHECK_INT(flag, 0);
    EXPECT_OK(MPI_Request_get_status_some(3, reqs, &outcount, indices, sts));
    CHECK_INT(outcount, 0);
    pair_sync(peer);
    EXPECT_OK(MPI_Send(&mine, 1, MPI_INT, peer, 51, MPI_COMM_WORLD));
    flag = 0;
    while (!flag)
        EXPECT_OK(MPI_Request_get_status_any(3, reqs, &index, &flag, &st));
    CHECK_INT(index, 1);
    CHECK_INT(st.MPI_TAG, 51);
    CHECK(reqs[1] != MPI_REQUEST_NULL, "get_status_any leaves the request");
    pair_sync(peer);
    EXPECT_OK(MPI_Send(&mine, 1, MPI_INT, peer, 50, MPI_COMM_WORLD));
    flag = 0;
    while (!flag)
        EXPECT_OK(MPI_Request_get_status_all(3, reqs, &flag, sts));
    CHECK_INT(sts[0].MPI_TAG, 50);
    CHECK_INT(sts[2].MPI_SOURCE, MPI_ANY_SOURCE);
    EXPECT_OK(MPI_Request_get_status_some(3, reqs, &outcount, indices, sts));
    CHECK_INT(outcount, 2);
    EXPECT_OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
    CHECK_INT(r1, peer + 100);
    EXPECT_OK(MPI_Request_get_status_some(3, reqs, &outcount, indices, sts));
    CHECK_INT(outcount, MPI_UNDEFINED);
    EXPECT_OK(MPI_Request_get_status_any(3, reqs, &index, &flag, &st));
    CHECK_INT(flag, 1);
    CHECK_INT(index, MPI_UNDEFINED);
    EXPECT_ERR(MPI_Request_get_status_all(-1, reqs, &flag, sts), MPI_ERR_COUNT, "MPI_Request_get_status_all", "count");
    pair_sync(peer);
    free(big);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
