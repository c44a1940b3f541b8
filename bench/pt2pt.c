/* Point-to-point benchmarks between 2 ranks, OSU-style (our own code):
 *   latency   ping-pong, one-way time (us), sizes 0 B .. 4 MiB
 *   bw        unidirectional bandwidth (MB/s): window of 64 Isends, then a 1-byte ack
 *   bibw      bidirectional bandwidth (MB/s): both ranks send a window of 64 at once
 *   rate      message rate (messages/s) of 8-byte messages, window 64
 * Output: one line per measurement: "<test> <bytes> <value>".
 *   mpicc -O2 bench/pt2pt.c -o pt2pt && mpiexec -n 2 ./pt2pt [max_bytes]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

static int rank, peer;

static int iters_for(size_t n, int small)
{
    if (n <= 8192)
        return small;
    if (n <= 262144)
        return small / 10 > 100 ? small / 10 : 100;
    return 50;
}

static double latency(char *buf, size_t n, int iters)
{
    int warm = iters / 10 + 10, i;
    double t0 = 0;
    for (i = 0; i < iters + warm; i++) {
        if (i == warm)
            t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

/* Seconds for `iters` windows of WINDOW messages of n bytes from rank 0 to 1 (both ways if bi). */
static double windows(char *sbuf, char *rbuf, size_t n, int iters, int bi)
{
    MPI_Request req[2 * WINDOW];
    int warm = iters / 10 + 2, i, w;
    char ack = 0;
    double t0 = 0;
    for (i = 0; i < iters + warm; i++) {
        if (i == warm) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        int k = 0;
        if (rank == 1 || bi)
            for (w = 0; w < WINDOW; w++)
                MPI_Irecv(rbuf + (bi ? 0 : 0), (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req[k++]);
        if (rank == 0 || bi)
            for (w = 0; w < WINDOW; w++)
                MPI_Isend(sbuf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req[k++]);
        MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
        if (!bi) {
            if (rank == 1)
                MPI_Send(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
            else
                MPI_Recv(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    size_t max = argc > 1 ? (size_t)atol(argv[1]) : (4u << 20), n;
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "pt2pt: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    peer = 1 - rank;
    char *sbuf = malloc(max ? max : 1), *rbuf = malloc(max ? max : 1);
    memset(sbuf, 1, max ? max : 1);
    memset(rbuf, 0, max ? max : 1);

    for (n = 0; n <= max; n = n ? n * 2 : 1) {
        double us = latency(sbuf, n, iters_for(n, 20000));
        if (rank == 0)
            printf("latency %zu %.3f\n", n, us);
    }
    for (n = 1; n <= max; n *= 2) {
        int it = iters_for(n, 200) / 2 + 5;
        double s = windows(sbuf, rbuf, n, it, 0);
        if (rank == 0)
            printf("bw %zu %.1f\n", n, (double)n * WINDOW * it / s / 1e6);
    }
    for (n = 1; n <= max; n *= 2) {
        int it = iters_for(n, 200) / 2 + 5;
        double s = windows(sbuf, rbuf, n, it, 1);
        if (rank == 0)
            printf("bibw %zu %.1f\n", n, 2.0 * n * WINDOW * it / s / 1e6);
    }
    {
        int it = 3000;
        double s = windows(sbuf, rbuf, 8, it, 0);
        if (rank == 0)
            printf("rate 8 %.0f\n", (double)WINDOW * it / s);
    }
    fflush(stdout);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
