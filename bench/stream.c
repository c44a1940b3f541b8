/* MPIX stream benchmarks (issue #15), 2 ranks.
 *
 *   stream MODE [ITERS]   message rate of 8-byte messages, window 64 (like pt2pt.c's `rate`),
 *                         on a communicator chosen by MODE:
 *       single    MPI_THREAD_SINGLE, an MPI_Comm_dup of MPI_COMM_WORLD
 *       implicit  MPI_THREAD_MULTIPLE, an MPI_Comm_dup of MPI_COMM_WORLD (per-VCI locks)
 *       stream    MPI_THREAD_MULTIPLE, a stream communicator (MPIX_Stream_comm_create)
 *     prints "rate MODE <messages per second>" (best of 7 timed repetitions).
 *   overlap [BYTES]       progress-thread overlap: rank 0 posts MPI_Isend of BYTES (4 MiB),
 *                         computes for 10 ms without calling MPI, then waits; rank 1 receives.
 *                         Run three ways: compute alone, transfer alone, and send+compute with
 *                         and without MPIX_Start_progress_thread(MPIX_STREAM_NULL). Prints
 *                         "overlap compute|transfer|without|with <microseconds>" (medians of 21).
 *   idle [SECONDS]        an idle progress thread: rank 0 starts one, sleeps SECONDS (1) in
 *                         nanosleep, and prints "idle cpu <percent of one core>" measured from
 *                         the process's CPU time.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WINDOW 64
#define REPS 7

static int rank;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Seconds for `iters` windows of WINDOW 8-byte messages from rank 0 to 1, 1-byte ack each.
 * Not inlined: bench/stream_locks.py has callgrind count inside this function only. */
__attribute__((noinline)) static double windows(MPI_Comm c, int iters)
{
    MPI_Request req[WINDOW];
    double buf[WINDOW];
    char ack = 0;
    int i, w;
    MPI_Barrier(c);
    double t0 = now();
    for (i = 0; i < iters; i++) {
        if (rank == 0) {
            for (w = 0; w < WINDOW; w++)
                MPI_Isend(&buf[w], 1, MPI_DOUBLE, 1, w, c, &req[w]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_CHAR, 1, 999, c, MPI_STATUS_IGNORE);
        } else {
            for (w = 0; w < WINDOW; w++)
                MPI_Irecv(&buf[w], 1, MPI_DOUBLE, 0, w, c, &req[w]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Send(&ack, 1, MPI_CHAR, 0, 999, c);
        }
    }
    return now() - t0;
}

static int rate(const char *mode, int iters)
{
    int provided, r;
    int multiple = strcmp(mode, "single") != 0;
    MPI_Init_thread(NULL, NULL, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm c;
    MPIX_Stream s = MPIX_STREAM_NULL;
    if (strcmp(mode, "stream") == 0) {
        if (MPIX_Stream_create(MPI_INFO_NULL, &s) != MPI_SUCCESS) {
            fprintf(stderr, "MPIX_Stream_create failed\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPIX_Stream_comm_create(MPI_COMM_WORLD, s, &c);
    } else {
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
    }
    windows(c, iters / 10 + 1); /* warm-up */
    double best = 1e30;
    for (r = 0; r < REPS; r++) {
        double t = windows(c, iters);
        if (t < best)
            best = t;
    }
    if (rank == 0)
        printf("rate %s %.0f\n", mode, (double)iters * WINDOW / best);
    MPI_Comm_free(&c);
    if (s != MPIX_STREAM_NULL)
        MPIX_Stream_free(&s);
    MPI_Finalize();
    return 0;
}

static void compute(double seconds)
{
    volatile double x = 0;
    double end = now() + seconds;
    while (now() < end)
        x += 1.0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One trial: rank 0's seconds from posting the send to completing it (with `send`), computing
 * `work` seconds in between; rank 1 receives. */
static double trial(char *buf, int bytes, int send, double work)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    if (rank == 0) {
        MPI_Request r = MPI_REQUEST_NULL;
        if (send)
            MPI_Isend(buf, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, &r);
        if (work > 0)
            compute(work);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (send) {
        MPI_Recv(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    double t = now() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    return t;
}

static double median_trial(char *buf, int bytes, int send, double work)
{
    double t[21];
    int i;
    for (i = 0; i < 21; i++)
        t[i] = trial(buf, bytes, send, work);
    qsort(t, 21, sizeof t[0], cmp);
    return t[10];
}

static int overlap(int bytes)
{
    int provided;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *buf = malloc(bytes);
    memset(buf, rank, bytes);
    double work = 0.010;
    double c = median_trial(buf, bytes, 0, work);
    double x = median_trial(buf, bytes, 1, 0);
    double without = median_trial(buf, bytes, 1, work);
    MPIX_Start_progress_thread(MPIX_STREAM_NULL);
    double with = median_trial(buf, bytes, 1, work);
    MPIX_Stop_progress_thread(MPIX_STREAM_NULL);
    if (rank == 0) {
        printf("overlap compute %.0f\noverlap transfer %.0f\n", c * 1e6, x * 1e6);
        printf("overlap without %.0f\noverlap with %.0f\n", without * 1e6, with * 1e6);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}

static int idle(double seconds)
{
    int provided;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPIX_Start_progress_thread(MPIX_STREAM_NULL);
        struct timespec nap = {0, 100 * 1000 * 1000};
        double c0 = cpu_now(), t0 = now();
        while (now() - t0 < seconds)
            nanosleep(&nap, NULL);
        double cpu = cpu_now() - c0, wall = now() - t0;
        MPIX_Stop_progress_thread(MPIX_STREAM_NULL);
        printf("idle cpu %.2f\n", 100.0 * cpu / wall);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s rate single|implicit|stream [ITERS] | overlap [BYTES] | idle [S]\n",
                argv[0]);
        return 1;
    }
    if (strcmp(argv[1], "rate") == 0 && argc >= 3)
        return rate(argv[2], argc > 3 ? atoi(argv[3]) : 2000);
    if (strcmp(argv[1], "overlap") == 0)
        return overlap(argc > 2 ? atoi(argv[2]) : 4 << 20);
    if (strcmp(argv[1], "idle") == 0)
        return idle(argc > 2 ? atof(argv[2]) : 1.0);
    fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 1;
}
