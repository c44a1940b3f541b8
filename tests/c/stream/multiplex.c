/* Multiplex stream communicators: each process attaches N streams plus MPIX_STREAM_NULL;
 * messages between every pair of stream indexes, receives that select the sender's stream
 * (and -1 = any stream), plain operations and collectives on the communicator, its
 * duplicates (MPI_Comm_dup and MPI_Comm_idup), and MPIX_Comm_get_stream. Rank 0 talks to every other rank. */
#include "wtest.h"

#define N 3

static int rank, size;

/* Rank 0 sends from its stream `si` to stream `di` of `peer`, which echoes it back. */
static void exchange(MPI_Comm c, int peer, int si, int di)
{
    int v = 1000 * si + 10 * di + peer, got = -1;
    if (rank == 0) {
        MPI_Request r[2];
        EXPECT_OK(MPIX_Stream_isend(&v, 1, MPI_INT, peer, 1, c, si, di, &r[0]));
        EXPECT_OK(MPIX_Stream_irecv(&got, 1, MPI_INT, peer, 1, c, di, si, &r[1]));
        EXPECT_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        CHECK_INT(got, v + 1);
    } else if (rank == peer) {
        MPI_Status st;
        EXPECT_OK(MPIX_Stream_recv(&got, 1, MPI_INT, 0, 1, c, si, di, &st));
        CHECK_INT(got, v);
        CHECK_INT(st.MPI_SOURCE, 0);
        got++;
        EXPECT_OK(MPIX_Stream_send(&got, 1, MPI_INT, 0, 1, c, di, si));
    }
}

int main(int argc, char **argv)
{
    int i, j, p;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    EXPECT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    EXPECT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPIX_Stream s[N + 1];
    for (i = 0; i < N; i++)
        EXPECT_OK(MPIX_Stream_create(MPI_INFO_NULL, &s[i]));
    s[N] = MPIX_STREAM_NULL;
    MPI_Comm c;
    EXPECT_OK(MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, N + 1, s, &c));
    EXPECT_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    for (i = 0; i <= N; i++) {
        MPIX_Stream got = (MPIX_Stream)0x77;
        EXPECT_OK(MPIX_Comm_get_stream(c, i, &got));
        CHECK(got == s[i], "MPIX_Comm_get_stream(%d)", i);
    }
    for (p = 1; p < size; p++)
        for (i = 0; i <= N; i++)
            for (j = 0; j <= N; j++)
                exchange(c, p, i, j);

    /* A receive naming the sender's stream takes that stream's message even when another
     * stream's message with the same tag arrived first; -1 takes any. */
    if (rank == 1) {
        int a = 11, b = 22;
        EXPECT_OK(MPIX_Stream_send(&a, 1, MPI_INT, 0, 5, c, 0, 1));
        EXPECT_OK(MPIX_Stream_send(&b, 1, MPI_INT, 0, 5, c, 2, 1));
        EXPECT_OK(MPIX_Stream_send(&a, 1, MPI_INT, 0, 6, c, 1, 0));
    } else if (rank == 0) {
        int x = -1, y = -1, z = -1;
        EXPECT_OK(MPIX_Stream_recv(&z, 1, MPI_INT, 1, 6, c, 1, 0, MPI_STATUS_IGNORE));
        CHECK_INT(z, 11);
        EXPECT_OK(MPIX_Stream_recv(&y, 1, MPI_INT, 1, 5, c, 2, 1, MPI_STATUS_IGNORE));
        CHECK_INT(y, 22);
        EXPECT_OK(MPIX_Stream_recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 5, c, -1, 1, MPI_STATUS_IGNORE));
        CHECK_INT(x, 11);
    }

    /* Plain operations use each process's first stream. */
    int v = rank, sum = -1;
    if (rank == 0) {
        for (p = 1; p < size; p++) {
            int w = -1;
            EXPECT_OK(MPI_Recv(&w, 1, MPI_INT, p, 3, c, MPI_STATUS_IGNORE));
            CHECK_INT(w, p);
        }
    } else {
        EXPECT_OK(MPI_Send(&v, 1, MPI_INT, 0, 3, c));
    }
    EXPECT_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK_INT(sum, size * (size - 1) / 2);
    MPI_Comm d;
    EXPECT_OK(MPI_Comm_dup(c, &d));
    sum = -1;
    EXPECT_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_MAX, d));
    CHECK_INT(sum, size - 1);
    if (size > 1)
        exchange(d, 1, 2, N);
    EXPECT_OK(MPI_Comm_free(&d));

    /* MPI_Comm_idup attaches the duplicate to the same streams too. */
    MPI_Request r;
    EXPECT_OK(MPI_Comm_idup(c, &d, &r));
    EXPECT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (i = 0; i <= N; i++) {
        MPIX_Stream got = (MPIX_Stream)0x77;
        EXPECT_OK(MPIX_Comm_get_stream(d, i, &got));
        CHECK(got == s[i], "MPIX_Comm_get_stream(idup, %d)", i);
    }
    EXPECT_ERR(MPIX_Stream_free(&s[0]), MPI_ERR_OTHER, "MPIX_Stream_free", "stream");
    sum = -1;
    EXPECT_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, d));
    CHECK_INT(sum, size * (size - 1) / 2);
    if (size > 1)
        exchange(d, 1, 1, 0);
    EXPECT_OK(MPI_Comm_free(&d));
    EXPECT_OK(MPI_Comm_free(&c));
    for (i = 0; i < N; i++)
        EXPECT_OK(MPIX_Stream_free(&s[i]));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
