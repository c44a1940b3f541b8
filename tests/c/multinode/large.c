/* Large messages between two logical nodes (2 ranks, WEFT_NODES=per-rank): past Weft's eager
 * size the data moves as one UCX message (UCP's own rendezvous). Checks the delivered values
 * for sizes around Weft's eager limit and UCP's rendezvous thresholds, both ways; receives
 * posted first and arriving late (unexpected); synchronous sends; a window of concurrent
 * sends on one tag (order kept); matched probes; non-contiguous send and receive types (a
 * vector each side, and against contiguous); a receive buffer shorter than the message
 * (MPI_ERR_TRUNCATE, the bytes that fit delivered, nothing past them written). */
#include "wtest.h"
#include <stdlib.h>
#include <string.h>

static int rank, peer;

static unsigned char pattern(size_t k, int seed)
{
    return (unsigned char)((k * 131 + (size_t)seed * 7 + (k >> 12)) & 0xff);
}

static void fill(unsigned char *b, size_t n, int seed)
{
    for (size_t k = 0; k < n; k++)
        b[k] = pattern(k, seed);
}

static void check_bytes(const unsigned char *b, size_t n, int seed, const char *what)
{
    for (size_t k = 0; k < n; k++)
        if (b[k] != pattern(k, seed)) {
            FAIL("%s: byte %zu of %zu is %d, expected %d", what, k, n, b[k], pattern(k, seed));
            return;
        }
}

/* Rank `from` sends n bytes (seed) to the other, which receives posted first or late. */
static void one_way(int from, size_t n, int seed, int late, int sync, unsigned char *buf)
{
    char what[96];
    snprintf(what, sizeof what, "%zu bytes from %d (%s, %s)", n, from, late ? "late" : "posted",
             sync ? "ssend" : "send");
    if (rank == from) {
        fill(buf, n, seed);
        MPI_Request r;
        if (sync)
            EXPECT_OK(MPI_Issend(buf, (int)n, MPI_BYTE, peer, seed, MPI_COMM_WORLD, &r));
        else
            EXPECT_OK(MPI_Isend(buf, (int)n, MPI_BYTE, peer, seed, MPI_COMM_WORLD, &r));
        MPI_Barrier(MPI_COMM_WORLD);
        EXPECT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        memset(buf, 0xee, n + 64);
        MPI_Status st;
        if (late) {
            MPI_Barrier(MPI_COMM_WORLD);
            EXPECT_OK(MPI_Recv(buf, (int)n, MPI_BYTE, from, seed, MPI_COMM_WORLD, &st));
        } else {
            MPI_Request r;
            EXPECT_OK(MPI_Irecv(buf, (int)n, MPI_BYTE, from, seed, MPI_COMM_WORLD, &r));
            MPI_Barrier(MPI_COMM_WORLD);
            EXPECT_OK(MPI_Wait(&r, &st));
        }
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == (int)n, "%s: count %d", what, count);
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == seed, "%s: source %d tag %d", what,
              st.MPI_SOURCE, st.MPI_TAG);
        check_bytes(buf, n, seed, what);
        CHECK(buf[n] == 0xee, "%s: the byte past the message was written", what);
    }
}

/* A window of `w` messages of n bytes on one tag, each with its own contents: they match in
 * the order sent. */
static void window(size_t n, int w, unsigned char *buf)
{
    MPI_Request reqs[8];
    for (int i = 0; i < w; i++) {
        if (rank == 0) {
            fill(buf + i * n, n, 100 + i);
            EXPECT_OK(MPI_Isend(buf + i * n, (int)n, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &reqs[i]));
        } else {
            memset(buf + i * n, 0, n);
            EXPECT_OK(MPI_Irecv(buf + i * n, (int)n, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &reqs[i]));
        }
    }
    EXPECT_OK(MPI_Waitall(w, reqs, MPI_STATUSES_IGNORE));
    if (rank == 1)
        for (int i = 0; i < w; i++) {
            char what[64];
            snprintf(what, sizeof what, "window of %d x %zu, message %d", w, n, i);
            check_bytes(buf + i * n, n, 100 + i, what);
        }
}

/* Ints through a vector type (every other int) on either side or both. */
static void vectors(int count, int send_vec, int recv_vec)
{
    MPI_Datatype vec;
    MPI_Type_vector(count, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *b = malloc(2 * (size_t)count * sizeof(int));
    char what[64];
    snprintf(what, sizeof what, "%d ints, vector send %d, vector receive %d", count, send_vec,
             recv_vec);
    if (rank == 0) {
        for (int k = 0; k < 2 * count; k++)
            b[k] = send_vec ? (k % 2 ? -1 : k / 2 * 3 + 1) : k * 3 + 1;
        if (send_vec)
            EXPECT_OK(MPI_Send(b, 1, vec, peer, 9, MPI_COMM_WORLD));
        else
            EXPECT_OK(MPI_Send(b, count, MPI_INT, peer, 9, MPI_COMM_WORLD));
    } else {
        for (int k = 0; k < 2 * count; k++)
            b[k] = -7;
        MPI_Status st;
        if (recv_vec)
            EXPECT_OK(MPI_Recv(b, 1, vec, peer, 9, MPI_COMM_WORLD, &st));
        else
            EXPECT_OK(MPI_Recv(b, count, MPI_INT, peer, 9, MPI_COMM_WORLD, &st));
        int got;
        MPI_Get_count(&st, MPI_INT, &got);
        CHECK(got == count || (recv_vec && got == MPI_UNDEFINED), "%s: count %d", what, got);
        for (int i = 0; i < count; i++) {
            int at = recv_vec ? 2 * i : i;
            if (b[at] != i * 3 + 1) {
                FAIL("%s: element %d is %d, expected %d", what, i, b[at], i * 3 + 1);
                break;
            }
            if (recv_vec && b[at + 1] != -7) {
                FAIL("%s: the gap after element %d was written (%d)", what, i, b[at + 1]);
                break;
            }
        }
        if (!recv_vec)
            CHECK(b[count] == -7, "%s: the int past the message was written", what);
    }
    free(b);
    MPI_Type_free(&vec);
}

/* n bytes into a receive buffer of room < n bytes: MPI_ERR_TRUNCATE, the first room bytes. */
static void truncated(size_t n, size_t room, unsigned char *buf)
{
    char what[64];
    snprintf(what, sizeof what, "%zu bytes into %zu", n, room);
    if (rank == 0) {
        fill(buf, n, 55);
        EXPECT_OK(MPI_Send(buf, (int)n, MPI_BYTE, peer, 11, MPI_COMM_WORLD));
    } else {
        memset(buf, 0xee, n);
        MPI_Status st;
        int rc = MPI_Recv(buf, (int)room, MPI_BYTE, peer, 11, MPI_COMM_WORLD, &st);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "%s: error class %d, expected MPI_ERR_TRUNCATE", what, cls);
        check_bytes(buf, room, 55, what);
        CHECK(buf[room] == 0xee, "%s: the byte past the receive buffer was written", what);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A matched probe of a large message, then its receive. */
static void mprobe(size_t n, unsigned char *buf)
{
    if (rank == 0) {
        fill(buf, n, 77);
        EXPECT_OK(MPI_Send(buf, (int)n, MPI_BYTE, peer, 13, MPI_COMM_WORLD));
    } else {
        MPI_Message m;
        MPI_Status st;
        EXPECT_OK(MPI_Mprobe(peer, 13, MPI_COMM_WORLD, &m, &st));
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == (int)n, "mprobe of %zu bytes: count %d", n, count);
        memset(buf, 0, n);
        EXPECT_OK(MPI_Mrecv(buf, (int)n, MPI_BYTE, &m, MPI_STATUS_IGNORE));
        check_bytes(buf, n, 77, "mrecv");
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    wtest_world_rank();
    peer = 1 - rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    static const size_t sizes[] = {16000, 16320, 16384, 16385, 32768, 65535, 65536, 65537,
                                   131072 + 3, 262144, 1 << 20, (4 << 20) + 5};
    unsigned char *buf = malloc((8 << 20) + 64);
    int seed = 1;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int from = 0; from < 2; from++)
            for (int late = 0; late < 2; late++)
                one_way(from, sizes[i], seed++, late, (int)i % 3 == 1, buf);
    window(65536, 8, buf);
    window(1 << 20, 8, buf);
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < 2; r++)
            vectors(100000, s, r);
    truncated(200000, 150000, buf);
    truncated(1 << 20, 20000, buf);
    mprobe(300000, buf);
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
