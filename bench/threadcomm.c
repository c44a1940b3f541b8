/* Thread-communicator benchmarks (issue 17; our own code), one process, OpenMP threads:
 *   latency   inter-thread ping-pong, 0 B, one-way time (us), 2 threads
 *   bw        inter-thread bandwidth at 1 MiB (MB/s): window of 16 Isends, then a 0 B ack
 *   barrier   MPI_Barrier on the thread communicator vs `#pragma omp barrier` (us per call)
 *   reduce    MPI_Reduce of one int vs an OpenMP reduction of one int (us per call)
 *   stream    10^6 back-to-back 4 B MPI_Send -> MPI_Recv, 2 threads (ns per message)
 * Output: one line per measurement: "<test> <threads> <value> [<openmp value> <ratio>]".
 *   mpicc -O2 -fopenmp bench/threadcomm.c -o threadcomm && ./threadcomm [threads] [iters] [tests]
 * `tests` is a comma-separated subset of latency,bw,stream,barrier,reduce (default: all).
 * OpenMP thread t is pinned to CPU t % CPUs before anything is timed, so every MPI and the
 * OpenMP comparisons run on the same placement (THREADCOMM_PIN=0: no pinning).
 * Compare with Weft's process-to-process numbers: bench/pt2pt.c on 2 processes
 * (bench/threadcomm.py runs all of them, interleaved, and prints the table). */
#define _GNU_SOURCE
#include <mpi.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 16
#define MIB (1 << 20)

static MPI_Comm tc;

/* Pin OpenMP thread t of a team of `nt` to CPU t % CPUs. The team's threads stay the same
 * from one parallel region to the next (libgomp and the other runtimes keep their pool), so
 * the later regions run on the same placement. */
static void pin_threads(int nt)
{
    const char *pin = getenv("THREADCOMM_PIN");
    if (pin && strcmp(pin, "0") == 0)
        return;
    int cpus = omp_get_num_procs();
#pragma omp parallel num_threads(nt)
    {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(omp_get_thread_num() % cpus, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0)
            perror("threadcomm: sched_setaffinity");
    }
}

/* Whether `name` is in the comma-separated `list` (NULL: every test). */
static int wanted(const char *list, const char *name)
{
    if (!list)
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

static double pingpong(int iters)
{
    double t = 0;
#pragma omp parallel num_threads(2)
    {
        int rank;
        MPIX_Threadcomm_start(tc);
        MPI_Comm_rank(tc, &rank);
        for (int i = -iters / 10; i < iters; i++) {
            if (i == 0) {
                MPI_Barrier(tc);
                if (rank == 0)
                    t = MPI_Wtime();
            }
            if (rank == 0) {
                MPI_Send(NULL, 0, MPI_BYTE, 1, 0, tc);
                MPI_Recv(NULL, 0, MPI_BYTE, 1, 0, tc, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, tc, MPI_STATUS_IGNORE);
                MPI_Send(NULL, 0, MPI_BYTE, 0, 0, tc);
            }
        }
        if (rank == 0)
            t = MPI_Wtime() - t;
        MPIX_Threadcomm_finish(tc);
    }
    return t / iters / 2 * 1e6;
}

static double bandwidth(int iters)
{
    double t = 0;
    char *bufs[2] = {malloc(MIB), malloc(MIB)};
    for (int i = 0; i < MIB; i++)
        bufs[0][i] = (char)i;
#pragma omp parallel num_threads(2)
    {
        int rank;
        MPI_Request r[WINDOW];
        MPIX_Threadcomm_start(tc);
        MPI_Comm_rank(tc, &rank);
        for (int i = -1; i < iters; i++) {
            if (i == 0) {
                MPI_Barrier(tc);
                if (rank == 0)
                    t = MPI_Wtime();
            }
            for (int w = 0; w < WINDOW; w++) {
                if (rank == 0)
                    MPI_Isend(bufs[0], MIB, MPI_BYTE, 1, w, tc, &r[w]);
                else
                    MPI_Irecv(bufs[1], MIB, MPI_BYTE, 0, w, tc, &r[w]);
            }
            MPI_Waitall(WINDOW, r, MPI_STATUSES_IGNORE);
            if (rank == 0)
                MPI_Recv(NULL, 0, MPI_BYTE, 1, 99, tc, MPI_STATUS_IGNORE);
            else
                MPI_Send(NULL, 0, MPI_BYTE, 0, 99, tc);
        }
        if (rank == 0)
            t = MPI_Wtime() - t;
        MPIX_Threadcomm_finish(tc);
    }
    free(bufs[0]);
    free(bufs[1]);
    return (double)MIB * WINDOW * iters / t / 1e6;
}

static void barriers(MPI_Comm comm, int nt, int iters)
{
    double t_mpi = 0, t_omp = 0;
#pragma omp parallel num_threads(nt)
    {
        MPIX_Threadcomm_start(comm);
        for (int i = 0; i < iters / 10; i++)
            MPI_Barrier(comm);
#pragma omp barrier
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Barrier(comm);
        double t1 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
#pragma omp barrier
        }
        double t2 = MPI_Wtime();
#pragma omp master
        {
            t_mpi = t1 - t0;
            t_omp = t2 - t1;
        }
        MPIX_Threadcomm_finish(comm);
    }
    printf("barrier %d %.3f %.3f %.2f\n", nt, t_mpi / iters * 1e6, t_omp / iters * 1e6,
           t_mpi / t_omp);
}

static void reduces(MPI_Comm comm, int nt, int iters)
{
    double t_mpi = 0, t_omp = 0;
    long check = 0;
    int omp_sum = 0;
#pragma omp parallel num_threads(nt)
    {
        int rank, sum = 0;
        MPIX_Threadcomm_start(comm);
        MPI_Comm_rank(comm, &rank);
#pragma omp barrier
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            int v = rank + i;
            MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_SUM, 0, comm);
        }
        MPI_Barrier(comm);
        double t1 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
#pragma omp for reduction(+ : omp_sum) schedule(static)
            for (int t = 0; t < nt; t++)
                omp_sum += t + i;
        }
        double t2 = MPI_Wtime();
        if (rank == 0) {
            t_mpi = t1 - t0;
            t_omp = t2 - t1;
            check = sum;
        }
        MPIX_Threadcomm_finish(comm);
    }
    long expect = (long)nt * (iters - 1) + (long)nt * (nt - 1) / 2;
    if (check != expect)
        printf("reduce: WRONG RESULT %ld, expected %ld\n", check, expect);
    printf("reduce %d %.3f %.3f %.2f\n", nt, t_mpi / iters * 1e6, t_omp / iters * 1e6,
           t_mpi / t_omp);
}

/* One-way stream of `n` back-to-back 4-byte messages, no acknowledgement: ns per message. */
static double stream(int n)
{
    double t = 0;
#pragma omp parallel num_threads(2)
    {
        int rank, v = 0;
        MPIX_Threadcomm_start(tc);
        MPI_Comm_rank(tc, &rank);
        MPI_Barrier(tc);
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            if (rank == 0)
                MPI_Send(&i, 1, MPI_INT, 1, 0, tc);
            else
                MPI_Recv(&v, 1, MPI_INT, 0, 0, tc, MPI_STATUS_IGNORE);
        }
        if (rank == 1)
            t = MPI_Wtime() - t0;
        MPIX_Threadcomm_finish(tc);
    }
    return t / n * 1e9;
}

int main(int argc, char **argv)
{
    int nt = argc > 1 ? atoi(argv[1]) : omp_get_num_procs();
    int iters = argc > 2 ? atoi(argv[2]) : 100000;
    const char *tests = argc > 3 ? argv[3] : NULL;
    MPI_Init(&argc, &argv);
    pin_threads(nt > 2 ? nt : 2);
    MPIX_Threadcomm_init(MPI_COMM_SELF, 2, &tc);
    if (wanted(tests, "latency"))
        printf("latency 2 %.3f\n", pingpong(iters));
    if (wanted(tests, "bw"))
        printf("bw 2 %.1f\n", bandwidth(iters / 1000 > 10 ? iters / 1000 : 10));
    if (wanted(tests, "stream"))
        printf("stream 2 %.1f\n", stream(1000000));
    MPIX_Threadcomm_free(&tc);
    MPI_Comm comm;
    MPIX_Threadcomm_init(MPI_COMM_SELF, nt, &comm);
    if (wanted(tests, "barrier"))
        barriers(comm, nt, iters);
    if (wanted(tests, "reduce"))
        reduces(comm, nt, iters);
    MPIX_Threadcomm_free(&comm);
    MPI_Finalize();
    return 0;
}
