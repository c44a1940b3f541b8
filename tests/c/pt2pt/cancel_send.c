/* MPI_Cancel of send requests (issue #25; MPICH pt2pt/scancel, pscancel, cancelrecv,
 * scancel_unmatch). A send whose message no receive matched yet is withdrawn (Test_cancelled
 * true, the receiver never sees it); one already matched completes normally (false). Eager,
 * rendezvous, synchronous and persistent sends, a send to this process, many sends queued
 * behind a full ring (every other one cancelled: the rest arrive in order), and a cancel
 * racing a matching receive (the receive has the data exactly when the cancel failed), and
 * eager sends that returned the shared completed request (cancelled through its generation,
 * not once it is too old). */
#include "pt2pt_util.h"

#define BIG (256 * 1024)
#define MANY 3000
#define ROUNDS 200

static int cancelled(MPI_Request *req)
{
    MPI_Status st;
    int flag = -1;
    EXPECT_OK(MPI_Cancel(req));
    EXPECT_OK(MPI_Wait(req, &st));
    EXPECT_OK(MPI_Test_cancelled(&st, &flag));
    return flag;
}

/* The receiver: nothing with `tag` from rank 0 is there (after the sender's cancel). */
static void nothing_there(int tag)
{
    int flag = -1;
    EXPECT_OK(MPI_Iprobe(0, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 0, "a cancelled message with tag %d is still there", tag);
}

/* Unmatched sends of each kind: cancelled, and gone at the receiver. */
static void unmatched(int rank, char *buf)
{
    MPI_Request req;
    if (rank == 0) {
        EXPECT_OK(MPI_Isend(buf, 40, MPI_CHAR, 1, 10, MPI_COMM_WORLD, &req));
        CHECK(cancelled(&req) == 1, "eager Isend not cancelled");
        EXPECT_OK(MPI_Isend(buf, BIG, MPI_CHAR, 1, 11, MPI_COMM_WORLD, &req));
        CHECK(cancelled(&req) == 1, "rendezvous Isend not cancelled");
        EXPECT_OK(MPI_Issend(buf, 40, MPI_CHAR, 1, 12, MPI_COMM_WORLD, &req));
        CHECK(cancelled(&req) == 1, "eager Issend not cancelled");
        EXPECT_OK(MPI_Issend(buf, BIG, MPI_CHAR, 1, 13, MPI_COMM_WORLD, &req));
        CHECK(cancelled(&req) == 1, "rendezvous Issend not cancelled");
        /* Persistent: cancelled once, then started again and received. */
        EXPECT_OK(MPI_Send_init(buf, 40, MPI_CHAR, 1, 14, MPI_COMM_WORLD, &req));
        EXPECT_OK(MPI_Start(&req));
        CHECK(cancelled(&req) == 1, "persistent send not cancelled");
        buf[0] = 77;
        EXPECT_OK(MPI_Start(&req));
        MPI_Status st;
        int flag = -1;
        EXPECT_OK(MPI_Wait(&req, &st));
        EXPECT_OK(MPI_Test_cancelled(&st, &flag));
        CHECK_INT(flag, 0);
        EXPECT_OK(MPI_Request_free(&req));
        EXPECT_OK(MPI_Ssend_init(buf, BIG, MPI_CHAR, 1, 15, MPI_COMM_WORLD, &req));
        EXPECT_OK(MPI_Start(&req));
        CHECK(cancelled(&req) == 1, "persistent rendezvous ssend not cancelled");
        EXPECT_OK(MPI_Request_free(&req));
        /* To this process. */
        EXPECT_OK(MPI_Isend(buf, 40, MPI_CHAR, 0, 16, MPI_COMM_WORLD, &req));
        CHECK(cancelled(&req) == 1, "Isend to self not cancelled");
        EXPECT_OK(MPI_Isend(buf, BIG, MPI_CHAR, 0, 17, MPI_COMM_WORLD, &req));
        CHECK(cancelled(&req) == 1, "rendezvous Isend to self not cancelled");
        nothing_there(16);
        nothing_there(17);
        /* Buffered: the request is complete at once, and still cancellable; the buffer's
         * space comes back (detach does not wait for a withdrawn rendezvous message). */
        int size = 2 * BIG + 200 + 4 * MPI_BSEND_OVERHEAD;
        char *attached = malloc(size);
        EXPECT_OK(MPI_Buffer_attach(attached, size));
        EXPECT_OK(MPI_Ibsend(buf, 40, MPI_CHAR, 1, 18, MPI_COMM_WORLD, &req));
        CHECK(cancelled(&req) == 1, "eager Ibsend not cancelled");
        EXPECT_OK(MPI_Ibsend(buf, BIG, MPI_CHAR, 1, 19, MPI_COMM_WORLD, &req));
        CHECK(cancelled(&req) == 1, "rendezvous Ibsend not cancelled");
        EXPECT_OK(MPI_Bsend_init(buf, BIG, MPI_CHAR, 1, 18, MPI_COMM_WORLD, &req));
        EXPECT_OK(MPI_Start(&req));
        CHECK(cancelled(&req) == 1, "persistent bsend not cancelled");
        EXPECT_OK(MPI_Request_free(&req));
        void *back;
        EXPECT_OK(MPI_Buffer_detach(&back, &size));
        CHECK(back == attached, "detach gave another buffer");
        free(attached);
        pair_sync(1);
    } else {
        pair_sync(0);
        for (int tag = 10; tag <= 19; tag++)
            if (tag != 14 && tag != 16 && tag != 17)
                nothing_there(tag);
        char small[40];
        MPI_Status st;
        EXPECT_OK(MPI_Recv(small, 40, MPI_CHAR, 0, 14, MPI_COMM_WORLD, &st));
        CHECK_INT(small[0], 77);
        nothing_there(14);
    }
}

/* Matched before the cancel: the cancel fails and the data arrived. */
static void matched(int rank, char *buf)
{
    const int lens[2] = {40, BIG};
    for (int i = 0; i < 4; i++) {
        int len = lens[i & 1], tag = 20 + i;
        if (rank == 0) {
            MPI_Request req;
            memset(buf, i + 1, len);
            if (i < 2)
                EXPECT_OK(MPI_Isend(buf, len, MPI_CHAR, 1, tag, MPI_COMM_WORLD, &req));
            else
                EXPECT_OK(MPI_Issend(buf, len, MPI_CHAR, 1, tag, MPI_COMM_WORLD, &req));
            int got;
            EXPECT_OK(MPI_Recv(&got, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(cancelled(&req) == 0, "a received send (case %d) reported cancelled", i);
        } else {
            char *in = malloc(len);
            MPI_Status st;
            EXPECT_OK(MPI_Recv(in, len, MPI_CHAR, 0, tag, MPI_COMM_WORLD, &st));
            CHECK(in[0] == i + 1 && in[len - 1] == i + 1, "case %d: wrong data", i);
            int got = 1;
            EXPECT_OK(MPI_Send(&got, 1, MPI_INT, 0, 99, MPI_COMM_WORLD));
            free(in);
        }
    }
}

/* Many sends, more than the peer's ring holds: every other one cancelled. A send that went
 * straight into the ring and is no longer among the last 64 such sends is not cancellable
 * (its cancel fails); the later ones, and those that waited for room, are. The receiver gets
 * exactly the messages whose cancel failed or that were not cancelled, in order. */
static void queued(int rank)
{
    static int vals[MANY][64];
    static MPI_Request reqs[MANY];
    static int flags[MANY];
    if (rank == 0) {
        for (int i = 0; i < MANY; i++) {
            for (int k = 0; k < 64; k++)
                vals[i][k] = i * 64 + k;
            EXPECT_OK(MPI_Isend(vals[i], 64, MPI_INT, 1, 30, MPI_COMM_WORLD, &reqs[i]));
        }
        for (int i = 0; i < MANY; i += 2)
            EXPECT_OK(MPI_Cancel(&reqs[i]));
        int n_cancelled = 0;
        for (int i = 0; i < MANY; i++) {
            MPI_Status st;
            flags[i] = -1;
            EXPECT_OK(MPI_Wait(&reqs[i], &st));
            EXPECT_OK(MPI_Test_cancelled(&st, &flags[i]));
            if (i & 1)
                CHECK(flags[i] == 0, "send %d (not cancelled) says cancelled", i);
            else if (i >= MANY - 64)
                CHECK(flags[i] == 1, "one of the last sends, %d, not cancelled", i);
            n_cancelled += flags[i];
        }
        CHECK(n_cancelled >= 32, "only %d sends cancelled", n_cancelled);
        EXPECT_OK(MPI_Send(flags, MANY, MPI_INT, 1, 31, MPI_COMM_WORLD));
    } else {
        EXPECT_OK(MPI_Recv(flags, MANY, MPI_INT, 0, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < MANY; i++) {
            if (flags[i])
                continue;
            int in[64];
            EXPECT_OK(MPI_Recv(in, 64, MPI_INT, 0, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(in[0] == i * 64 && in[63] == i * 64 + 63, "message %d: got %d", i, in[0]);
        }
        nothing_there(30);
    }
}

/* Eager nonblocking sends that went straight into the peer's ring (they share one complete
 * request, told apart by its generation): cancelled once or twice, taken by MPI_Test,
 * MPI_Request_get_status, MPI_Waitall or freed; one cancelled after 100 later sends is no
 * longer cancellable and arrives. */
static void straight(int rank)
{
    int v[4] = {1, 2, 3, 4}, flag = -1, done = 0;
    MPI_Request req, reqs[3];
    MPI_Status st, sts[3];
    if (rank == 0) {
        /* Cancelled twice, completed by MPI_Test. */
        EXPECT_OK(MPI_Isend(&v[0], 1, MPI_INT, 1, 50, MPI_COMM_WORLD, &req));
        EXPECT_OK(MPI_Cancel(&req));
        EXPECT_OK(MPI_Cancel(&req));
        while (!done)
            EXPECT_OK(MPI_Test(&req, &done, &st));
        CHECK(req == MPI_REQUEST_NULL, "MPI_Test left the request");
        EXPECT_OK(MPI_Test_cancelled(&st, &flag));
        CHECK_INT(flag, 1);
        /* MPI_Request_get_status sees it, then MPI_Wait takes it. */
        EXPECT_OK(MPI_Isend(&v[1], 1, MPI_INT, 1, 51, MPI_COMM_WORLD, &req));
        EXPECT_OK(MPI_Cancel(&req));
        for (done = 0; !done;)
            EXPECT_OK(MPI_Request_get_status(req, &done, &st));
        EXPECT_OK(MPI_Test_cancelled(&st, &flag));
        CHECK_INT(flag, 1);
        EXPECT_OK(MPI_Wait(&req, &st));
        EXPECT_OK(MPI_Test_cancelled(&st, &flag));
        CHECK_INT(flag, 1);
        /* Freed while its cancel is on the way (the message is withdrawn all the same). */
        EXPECT_OK(MPI_Isend(&v[2], 1, MPI_INT, 1, 52, MPI_COMM_WORLD, &req));
        EXPECT_OK(MPI_Cancel(&req));
        EXPECT_OK(MPI_Request_free(&req));
        /* Waitall over cancelled and plain ones. */
        for (int i = 0; i < 3; i++)
            EXPECT_OK(MPI_Isend(&v[i], 1, MPI_INT, 1, 53 + i, MPI_COMM_WORLD, &reqs[i]));
        EXPECT_OK(MPI_Cancel(&reqs[0]));
        EXPECT_OK(MPI_Cancel(&reqs[2]));
        EXPECT_OK(MPI_Waitall(3, reqs, sts));
        for (int i = 0; i < 3; i++) {
            EXPECT_OK(MPI_Test_cancelled(&sts[i], &flag));
            CHECK(flag == (i != 1), "Waitall: send %d cancelled=%d", i, flag);
            CHECK(reqs[i] == MPI_REQUEST_NULL, "Waitall left request %d", i);
        }
        /* Too old: 100 sends later its cancel fails and the message arrives. */
        EXPECT_OK(MPI_Isend(&v[3], 1, MPI_INT, 1, 56, MPI_COMM_WORLD, &req));
        for (int i = 0; i < 100; i++) {
            MPI_Request r;
            EXPECT_OK(MPI_Isend(&v[0], 1, MPI_INT, 1, 57, MPI_COMM_WORLD, &r));
            EXPECT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        }
        CHECK(cancelled(&req) == 0, "a forgotten send was cancelled");
        pair_sync(1);
    } else {
        pair_sync(0);
        for (int tag = 50; tag <= 55; tag++)
            if (tag != 54)
                nothing_there(tag);
        EXPECT_OK(MPI_Recv(&flag, 1, MPI_INT, 0, 54, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_INT(flag, 2);
        EXPECT_OK(MPI_Recv(&flag, 1, MPI_INT, 0, 56, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_INT(flag, 4);
        for (int i = 0; i < 100; i++)
            EXPECT_OK(MPI_Recv(&flag, 1, MPI_INT, 0, 57, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        nothing_there(57);
    }
}

/* A cancel racing a receive posted at the same time: the receive has the data exactly when
 * the cancel failed. */
static void racing(int rank, char *buf)
{
    char *in = malloc(BIG);
    for (int r = 0; r < ROUNDS; r++) {
        int len = (r & 1) ? BIG : 40, tag = 40 + (r & 3), flag = -1;
        pair_sync(1 - rank);
        if (rank == 0) {
            MPI_Request req;
            memset(buf, r & 0x7f, len);
            if (r & 2)
                EXPECT_OK(MPI_Issend(buf, len, MPI_CHAR, 1, tag, MPI_COMM_WORLD, &req));
            else
                EXPECT_OK(MPI_Isend(buf, len, MPI_CHAR, 1, tag, MPI_COMM_WORLD, &req));
            flag = cancelled(&req);
            EXPECT_OK(MPI_Send(&flag, 1, MPI_INT, 1, 98, MPI_COMM_WORLD));
        } else {
            MPI_Request req;
            MPI_Status st;
            int done = 0;
            in[0] = in[len - 1] = -1;
            EXPECT_OK(MPI_Irecv(in, len, MPI_CHAR, 0, tag, MPI_COMM_WORLD, &req));
            EXPECT_OK(MPI_Recv(&flag, 1, MPI_INT, 0, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            if (flag == 0) {
                EXPECT_OK(MPI_Wait(&req, &st));
                CHECK(in[0] == (r & 0x7f) && in[len - 1] == (r & 0x7f), "round %d: wrong data",
                      r);
            } else {
                CHECK(flag == 1, "round %d: flag %d", r, flag);
                EXPECT_OK(MPI_Test(&req, &done, &st));
                CHECK(!done, "round %d: the receive completed though the send was cancelled", r);
                EXPECT_OK(MPI_Cancel(&req));
                EXPECT_OK(MPI_Wait(&req, &st));
                EXPECT_OK(MPI_Test_cancelled(&st, &done));
                CHECK(done == 1, "round %d: the receive was not cancelled", r);
            }
        }
    }
    free(in);
}

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_errors_return();
    int rank = wtest_world_rank();
    char *buf = malloc(BIG);
    memset(buf, 5, BIG);
    unmatched(rank, buf);
    matched(rank, buf);
    queued(rank);
    straight(rank);
    racing(rank, buf);
    free(buf);
    pair_sync(1 - rank);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
