/* MPI's order between two thread ranks across the transport's two ways (issue 17): small
 * messages go through the pair's slot when it is free, others (full slot, over 32 bytes,
 * synchronous, large) through the receiver's queue. Senders 1..N-1 each send K messages to
 * rank 0 of lengths 4..47 bytes, every 5th with MPI_Ssend and every 13th of 20000 bytes
 * (MPI_Isend); rank 0 receives them by MPI_ANY_SOURCE/MPI_ANY_TAG in turn with MPI_Recv,
 * MPI_Probe + MPI_Recv, MPI_Irecv + MPI_Wait and MPI_Mprobe + MPI_Mrecv, and checks each
 * sender's sequence numbers, lengths and bytes. Then tag selection past a slot message:
 * rank 1 sends tags 1, 2, 1 (4, 40, 4 bytes); rank 0 takes tag 2 first, then both tag 1 in
 * order, then the same with a receive posted before the messages come.
 *   ./pairorder [threads] [messages per sender]   (defaults 3, 2000) */
#include "wtest.h"
#include "threads.h"

#define BIG 20000

static MPI_Comm tc;
static int nt = 3, k = 2000;

static int length(int seq)
{
    return seq % 13 == 12 ? BIG : 4 + (seq * 7) % 44;
}

static void fill(unsigned char *b, int src, int seq)
{
    int len = length(seq);
    memcpy(b, &seq, 4);
    for (int i = 4; i < len; i++)
        b[i] = (unsigned char)(src * 31 + seq + i);
}

static void sender(int r)
{
    static _Thread_local unsigned char buf[BIG];
    for (int seq = 0; seq < k; seq++) {
        fill(buf, r, seq);
        if (length(seq) == BIG) {
            MPI_Request q;
            MPI_Isend(buf, BIG, MPI_BYTE, 0, seq % 3, tc, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else if (seq % 5 == 4) {
            MPI_Ssend(buf, length(seq), MPI_BYTE, 0, seq % 3, tc);
        } else {
            MPI_Send(buf, length(seq), MPI_BYTE, 0, seq % 3, tc);
        }
    }
}

static void receiver(void)
{
    static unsigned char buf[BIG], want[BIG];
    int next[64] = {0};
    for (int i = 0; i < (nt - 1) * k; i++) {
        MPI_Status st;
        switch (i % 4) {
        case 0:
            MPI_Recv(buf, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &st);
            break;
        case 1:
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &st);
            MPI_Recv(buf, BIG, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, tc, &st);
            break;
        case 2: {
            MPI_Request q;
            MPI_Irecv(buf, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &q);
            MPI_Wait(&q, &st);
            break;
        }
        default: {
            MPI_Message m;
            MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &m, &st);
            MPI_Mrecv(buf, BIG, MPI_BYTE, &m, &st);
        }
        }
        int src = st.MPI_SOURCE, seq, count;
        CHECK(src >= 1 && src < nt, "source %d", src);
        if (src < 1 || src >= nt)
            return;
        memcpy(&seq, buf, 4);
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (seq != next[src] || count != length(seq) || st.MPI_TAG != seq % 3) {
            FAIL("from %d: seq %d (expected %d), %d bytes, tag %d", src, seq, next[src], count,
                 st.MPI_TAG);
            return;
        }
        fill(want, src, seq);
        CHECK(memcmp(buf, want, count) == 0, "bytes of message %d from %d", seq, src);
        next[src]++;
    }
}

/* Tags 1, 2, 1 from rank 1; rank 0 takes tag 2 first (`posted`: its receive of tag 2 is
 * posted before rank 1 sends). */
static void tags(int r, int posted)
{
    int v[10] = {0};
    if (r == 1) {
        MPI_Barrier(tc);
        for (int i = 0; i < 3; i++) {
            v[0] = 100 + i;
            MPI_Send(v, i == 1 ? 10 : 1, MPI_INT, 0, i == 1 ? 2 : 1, tc);
        }
    } else if (r == 0) {
        MPI_Request q = MPI_REQUEST_NULL;
        MPI_Status st;
        if (posted)
            MPI_Irecv(v, 10, MPI_INT, 1, 2, tc, &q);
        MPI_Barrier(tc);
        if (posted)
            MPI_Wait(&q, &st);
        else
            MPI_Recv(v, 10, MPI_INT, 1, 2, tc, &st);
        CHECK(v[0] == 101 && st.MPI_TAG == 2, "tag 2 message %d (posted %d)", v[0], posted);
        for (int i = 0; i < 2; i++) {
            MPI_Recv(v, 10, MPI_INT, 1, 1, tc, &st);
            int count;
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(v[0] == 100 + 2 * i && count == 1, "tag 1 message %d: %d, %d ints", i,
                  v[0], count);
        }
    } else {
        MPI_Barrier(tc);
    }
}

static void region(void *unused)
{
    (void)unused;
    int r = -1;
    MPIX_Threadcomm_start(tc);
    MPI_Comm_rank(tc, &r);
    if (r == 0)
        receiver();
    else
        sender(r);
    MPI_Barrier(tc);
    tags(r, 0);
    tags(r, 1);
    MPIX_Threadcomm_finish(tc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc > 1)
        nt = atoi(argv[1]);
    if (argc > 2)
        k = atoi(argv[2]);
    if (nt < 2 || nt > 64)
        nt = 3;
    MPIX_Threadcomm_init(MPI_COMM_SELF, nt, &tc);
    run_threads(nt, region, NULL);
    MPIX_Threadcomm_free(&tc);
    MPI_Finalize();
    if (wtest_errs == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
