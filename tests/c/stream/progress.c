/* Progress control. (1) MPIX_Stream_progress(s) advances only the stream's VCI: a message
 * waiting on the implicit VCI stays unreceived however often the stream is progressed, and
 * MPIX_Stream_progress(MPIX_STREAM_NULL) receives it. (2) With a progress thread (argument
 * "null": on the implicit VCIs; "stream": on a stream), a rendezvous send and a nonblocking
 * allreduce complete at the peer while this rank computes without calling MPI: the peer's
 * completion time is earlier than the end of the computation (one clock on one node).
 * Without the thread they could only complete once this rank calls MPI again. */
#include <string.h>
#include <time.h>
#include "wtest.h"

#define BIG (1 << 20) /* ints: 4 MiB */
#define NRED (1 << 18)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Compute for `seconds` without calling MPI. */
static double compute(double seconds)
{
    volatile double x = 0;
    double end = now() + seconds;
    while (now() < end)
        for (int i = 0; i < 1000; i++)
            x += i * 0.5;
    return now();
}

int main(int argc, char **argv)
{
    int rank, provided, i;
    int on_stream = argc > 1 && strcmp(argv[1], "stream") == 0;
    EXPECT_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    wtest_world_rank();
    wtest_errors_return();
    EXPECT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    int peer = 1 - rank;
    MPIX_Stream s;
    MPI_Comm sc, wc;
    EXPECT_OK(MPIX_Stream_create(MPI_INFO_NULL, &s));
    EXPECT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, s, &sc));
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &wc));

    /* (1) */
    if (rank == 1) {
        int v = 77, done = 1, go = 0;
        /* Sent once rank 0's receive is posted, so no earlier progress pass of rank 0 can
         * have taken it. */
        EXPECT_OK(MPI_Recv(&go, 1, MPI_INT, 0, 0, sc, MPI_STATUS_IGNORE));
        EXPECT_OK(MPI_Send(&v, 1, MPI_INT, 0, 1, wc));
        EXPECT_OK(MPI_Send(&done, 1, MPI_INT, 0, 2, sc));
    } else {
        int v = -1, done = 0;
        MPI_Request r;
        EXPECT_OK(MPI_Irecv(&v, 1, MPI_INT, 1, 1, wc, &r));
        EXPECT_OK(MPI_Send(&done, 1, MPI_INT, 1, 0, sc));
        EXPECT_OK(MPI_Recv(&done, 1, MPI_INT, 1, 2, sc, MPI_STATUS_IGNORE));
        CHECK_INT(done, 1);
        for (i = 0; i < 1000; i++)
            EXPECT_OK(MPIX_Stream_progress(s));
        CHECK(!MPIX_Request_is_complete(r), "stream progress received a message of the implicit VCI");
        for (i = 0; i < 1000000 && !MPIX_Request_is_complete(r); i++)
            EXPECT_OK(MPIX_Stream_progress(MPIX_STREAM_NULL));
        CHECK(MPIX_Request_is_complete(r), "MPIX_Stream_progress(MPIX_STREAM_NULL) receives it");
        EXPECT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK_INT(v, 77);
    }
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* (2) */
    MPI_Comm c = on_stream ? sc : wc;
    MPIX_Stream ps = on_stream ? s : MPIX_STREAM_NULL;
    int *buf = malloc(BIG * sizeof(int));
    double *red = malloc(NRED * sizeof(double)), *sum = malloc(NRED * sizeof(double));
    double t_end = 0, t_peer = 0;
    for (i = 0; i < NRED; i++)
        red[i] = rank + i;
    if (rank == 0) {
        MPI_Request r;
        for (i = 0; i < BIG; i++)
            buf[i] = i * 3;
        EXPECT_OK(MPIX_Start_progress_thread(ps));
        EXPECT_OK(MPI_Isend(buf, BIG, MPI_INT, 1, 3, c, &r));
        t_end = compute(1.0);
        EXPECT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        EXPECT_OK(MPI_Recv(&t_peer, 1, MPI_DOUBLE, 1, 4, c, MPI_STATUS_IGNORE));
        CHECK(t_peer < t_end, "the rendezvous completed at the receiver %.3f s after this rank's computation ended", t_peer - t_end);
        EXPECT_OK(MPI_Barrier(c));
        EXPECT_OK(MPI_Iallreduce(red, sum, NRED, MPI_DOUBLE, MPI_SUM, c, &r));
        t_end = compute(1.0);
        EXPECT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        EXPECT_OK(MPI_Recv(&t_peer, 1, MPI_DOUBLE, 1, 5, c, MPI_STATUS_IGNORE));
        CHECK(t_peer < t_end, "the allreduce completed at the peer %.3f s after this rank's computation ended", t_peer - t_end);
        EXPECT_OK(MPIX_Stop_progress_thread(ps));
    } else {
        MPI_Request r;
        EXPECT_OK(MPI_Recv(buf, BIG, MPI_INT, 0, 3, c, MPI_STATUS_IGNORE));
        t_peer = now();
        for (i = 0; i < BIG; i++)
            if (buf[i] != i * 3) {
                FAIL("buf[%d] = %d", i, buf[i]);
                break;
            }
        EXPECT_OK(MPI_Send(&t_peer, 1, MPI_DOUBLE, 0, 4, c));
        EXPECT_OK(MPI_Barrier(c));
        EXPECT_OK(MPI_Iallreduce(red, sum, NRED, MPI_DOUBLE, MPI_SUM, c, &r));
        EXPECT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        t_peer = now();
        EXPECT_OK(MPI_Send(&t_peer, 1, MPI_DOUBLE, 0, 5, c));
    }
    for (i = 0; i < NRED; i++)
        if (sum[i] != 1.0 + 2.0 * i) {
            FAIL("sum[%d] = %g", i, sum[i]);
            break;
        }
    (void)peer;
    free(buf);
    free(red);
    free(sum);
    EXPECT_OK(MPI_Comm_free(&sc));
    EXPECT_OK(MPI_Comm_free(&wc));
    EXPECT_OK(MPIX_Stream_free(&s));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
