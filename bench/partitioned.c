/* Partitioned transfer vs one send (issue #22): 1 MiB in 16 partitions filled by 2 threads
 * (each computes WORK microseconds per partition, then writes it). "part": each thread readies
 * a partition as soon as it is written (MPI_Pready), so early partitions travel while later
 * ones are computed; "send": the threads finish, then one MPI_Send of 1 MiB. Rank 0 times
 * from a barrier to the receiver's zero-byte acknowledgement of the complete message, and the
 * tail: from the threads' end (every partition written and readied) to that acknowledgement,
 * what the overlap shortens (a short window, so less exposed to a loaded machine).
 *
 * The work spins by default; `sleep` makes it a wait that leaves the core (a thread waiting
 * for I/O or a device), so the overlap also shows where the two threads and the receiver
 * outnumber the cores.
 *
 *   mpiexec -n 2 ./partitioned part|send [iterations] [work_us] [spin|sleep]
 * prints: MODE median_us min_us tail_median_us tail_min_us */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BYTES (1 << 20)
#define PARTS 16
#define THREADS 2
#define PBYTES (BYTES / PARTS)

static char *buf;
static MPI_Request sreq;
static int part_mode, work_us, sleep_work;

static void compute(int us)
{
    struct timespec a, b;
    if (sleep_work) {
        struct timespec d = {0, us * 1000L};
        nanosleep(&d, NULL);
        return;
    }
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void *filler(void *arg)
{
    int t = (int)(long)arg;
    for (int p = t * (PARTS / THREADS); p < (t + 1) * (PARTS / THREADS); p++) {
        compute(work_us);
        memset(buf + (size_t)p * PBYTES, p + 1, PBYTES);
        if (part_mode)
            MPI_Pready(p, sreq);
    }
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int provided, rank, iters = argc > 2 ? atoi(argv[2]) : 200;
    part_mode = argc > 1 && strcmp(argv[1], "part") == 0;
    work_us = argc > 3 ? atoi(argv[3]) : 20;
    sleep_work = argc > 4 && strcmp(argv[4], "sleep") == 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    buf = malloc(BYTES);
    memset(buf, 0, BYTES);
    MPI_Request rreq = MPI_REQUEST_NULL;
    if (part_mode) {
        if (rank == 0)
            MPI_Psend_init(buf, PARTS, PBYTES, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &sreq);
        else
            MPI_Precv_init(buf, PARTS, PBYTES, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rreq);
    }
    double *t = malloc(sizeof(double) * iters), *tail = malloc(sizeof(double) * iters);
    for (int i = 0; i < iters + 10; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rank == 0) {
            pthread_t th[THREADS];
            if (part_mode)
                MPI_Start(&sreq);
            for (long k = 0; k < THREADS; k++)
                pthread_create(&th[k], NULL, filler, (void *)k);
            for (int k = 0; k < THREADS; k++)
                pthread_join(th[k], NULL);
            double t1 = MPI_Wtime();
            if (part_mode)
                MPI_Wait(&sreq, MPI_STATUS_IGNORE);
            else
                MPI_Send(buf, BYTES, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (i >= 10) {
                double t2 = MPI_Wtime();
                t[i - 10] = (t2 - t0) * 1e6;
                tail[i - 10] = (t2 - t1) * 1e6;
            }
        } else {
            if (part_mode) {
                MPI_Start(&rreq);
                MPI_Wait(&rreq, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, BYTES, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            for (int p = 0; p < PARTS; p++)
                if (buf[(size_t)p * PBYTES] != p + 1 || buf[(size_t)(p + 1) * PBYTES - 1] != p + 1) {
                    fprintf(stderr, "partition %d wrong\n", p);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            memset(buf, 0, BYTES);
            MPI_Send(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) {
        qsort(t, iters, sizeof(double), cmp);
        qsort(tail, iters, sizeof(double), cmp);
        printf("%s %.1f %.1f %.1f %.1f\n", part_mode ? "part" : "send", t[iters / 2], t[0],
               tail[iters / 2], tail[0]);
    }
    if (part_mode)
        MPI_Request_free(rank == 0 ? &sreq : &rreq);
    free(t);
    free(tail);
    free(buf);
    MPI_Finalize();
    return 0;
}
