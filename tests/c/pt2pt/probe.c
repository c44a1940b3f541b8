/* Probe, Iprobe, Mprobe, Improbe, Mrecv, Imrecv (+_c): statuses and counts, a matched message
 * is invisible to other probes and receives, MPI_MESSAGE_NO_PROC for MPI_PROC_NULL, large
 * (rendezvous) matched messages, bad message handles. */
#include "pt2pt_util.h"

#define BIG 40000

int main(int argc, char **argv)
{
    int rank, flag, count, i, v[4];
    MPI_Status st;
    MPI_Message msg;
    MPI_Request req;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int peer = rank ^ 1;
    int *big = malloc(BIG * sizeof(int));

    if (rank == 1) {
        int a[3] = {1, 2, 3};
        EXPECT_OK(MPI_Send(a, 3, MPI_INT, 0, 10, MPI_COMM_WORLD));
        EXPECT_OK(MPI_Send(a, 2, MPI_INT, 0, 11, MPI_COMM_WORLD));
        EXPECT_OK(MPI_Send(a, 1, MPI_INT, 0, 12, MPI_COMM_WORLD));
        for (i = 0; i < BIG; i++)
            big[i] = i * 5;
        EXPECT_OK(MPI_Send(big, BIG, MPI_INT, 0, 13, MPI_COMM_WORLD));
        EXPECT_OK(MPI_Send(a, 3, MPI_INT, 0, 14, MPI_COMM_WORLD));
    } else {
        EXPECT_OK(MPI_Probe(1, 10, MPI_COMM_WORLD, &st));
        CHECK_INT(st.MPI_SOURCE, 1);
        CHECK_INT(st.MPI_TAG, 10);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK_INT(count, 3);
        /* Mprobe takes it: Iprobe for tag 10 no longer sees it. */
        EXPECT_OK(MPI_Mprobe(MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &msg, &st));
        CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "a real message handle");
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK_INT(count, 3);
        EXPECT_OK(MPI_Iprobe(1, 10, MPI_COMM_WORLD, &flag, &st));
        CHECK_INT(flag, 0);
        /* Improbe the next one (tag 11), then receive both in reverse order. */
        MPI_Message msg2;
        flag = 0;
        while (!flag)
            EXPECT_OK(MPI_Improbe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg2, &st));
        CHECK_INT(st.MPI_TAG, 11);
        EXPECT_OK(MPI_Imrecv(v, 4, MPI_INT, &msg2, &req));
        CHECK(msg2 == MPI_MESSAGE_NULL, "Imrecv sets the message to MPI_MESSAGE_NULL");
        EXPECT_OK(MPI_Wait(&req, &st));
        CHECK_INT(v[0], 1);
        CHECK_INT(v[1], 2);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK_INT(count, 2);
        EXPECT_OK(MPI_Mrecv(v, 4, MPI_INT, &msg, &st));
        CHECK(msg == MPI_MESSAGE_NULL, "Mrecv sets the message to MPI_MESSAGE_NULL");
        CHECK_INT(v[2], 3);
        CHECK_INT(st.MPI_TAG, 10);
        /* A truncating Mrecv fills the status and reports MPI_ERR_TRUNCATE. */
        EXPECT_OK(MPI_Mprobe(1, 12, MPI_COMM_WORLD, &msg, &st));
        EXPECT_OK(MPI_Mrecv_c(v, 1, MPI_INT, &msg, &st));
        /* A large (rendezvous) message through Mprobe/Mrecv. */
        EXPECT_OK(MPI_Mprobe(1, 13, MPI_COMM_WORLD, &msg, &st));
        MPI_Count cc = -1;
        MPI_Get_count_c(&st, MPI_INT, &cc);
        CHECK_INT(cc, BIG);
        EXPECT_OK(MPI_Mrecv(big, BIG, MPI_INT, &msg, &st));
        for (i = 0; i < BIG; i++)
            if (big[i] != i * 5) {
                FAIL("big[%d] = %d", i, big[i]);
                break;
            }
        EXPECT_OK(MPI_Mprobe(1, 14, MPI_COMM_WORLD, &msg, &st));
        EXPECT_ERR(MPI_Mrecv(v, 1, MPI_INT, &msg, &st), MPI_ERR_TRUNCATE, "MPI_Mrecv", "truncated");
        CHECK_INT(st.MPI_TAG, 14);
        CHECK_INT(st.MPI_SOURCE, 1);
        /* Reusing a received message handle, garbage and MPI_MESSAGE_NULL fail. */
        EXPECT_CLASS(MPI_Mrecv(v, 1, MPI_INT, &msg, &st), MPI_ERR_REQUEST);
        MPI_Message garbage = (MPI_Message)WTEST_GARBAGE;
        EXPECT_ERR(MPI_Mrecv(v, 1, MPI_INT, &garbage, &st), MPI_ERR_REQUEST, "MPI_Mrecv", "message");
    }
    /* MPI_PROC_NULL: MPI_MESSAGE_NO_PROC; receiving it gives the PROC_NULL status. */
    EXPECT_OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC, "MPI_MESSAGE_NO_PROC for MPI_PROC_NULL");
    CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
    EXPECT_OK(MPI_Mrecv(v, 1, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL, "after Mrecv");
    CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
    flag = 0;
    EXPECT_OK(MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK_INT(flag, 1);
    EXPECT_OK(MPI_Imrecv(v, 1, MPI_INT, &msg, &req));
    EXPECT_OK(MPI_Wait(&req, &st));
    CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
    /* Bad arguments. */
    EXPECT_ERR(MPI_Mprobe(5000, 0, MPI_COMM_WORLD, &msg, &st), MPI_ERR_RANK, "MPI_Mprobe", "source");
    EXPECT_ERR(MPI_Improbe(peer, -7, MPI_COMM_WORLD, &flag, &msg, &st), MPI_ERR_TAG, "MPI_Improbe", "tag");
    EXPECT_ERR(MPI_Iprobe(peer, 0, MPI_COMM_NULL, &flag, &st), MPI_ERR_COMM, "MPI_Iprobe", "comm");
    EXPECT_ERR(MPI_Improbe(peer, 0, MPI_COMM_WORLD, &flag, NULL, &st), MPI_ERR_ARG, "MPI_Improbe", "message");
    pair_sync(peer);
    free(big);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
