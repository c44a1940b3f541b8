/* What bench/enqueue.c (host queue) and bench/enqueue_cuda.c (CUDA stream) measure alike, 2
 * ranks: rank 0 sends first, rank 1 receives first; every loop starts after a barrier. */
#ifndef WEFT_BENCH_ENQUEUE_COMMON_H
#define WEFT_BENCH_ENQUEUE_COMMON_H

#include <mpi.h>
#include <stddef.h>

static double best(double a, double b) { return a < b ? a : b; }

/* Seconds the enqueuing thread spends per MPIX_Send_enqueue (rank 0) or MPIX_Recv_enqueue
 * (rank 1) of one double, `iters` calls in a row (the i-th on `base + 8 * (i % wrap)`), then
 * one MPIX_Stream_synchronize outside the time. */
static double enqueue_overhead(char *base, int wrap, int iters, int rank, MPI_Comm c,
                               MPIX_Stream s)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        char *at = base + 8 * (i % wrap);
        if (rank == 0)
            MPIX_Send_enqueue(at, 1, MPI_DOUBLE, 1, 0, c);
        else
            MPIX_Recv_enqueue(at, 1, MPI_DOUBLE, 0, 0, c, MPI_STATUS_IGNORE);
    }
    double t1 = MPI_Wtime();
    MPIX_Stream_synchronize(s);
    return (t1 - t0) / iters;
}

/* Half the round trip of `rounds` ping-pongs of one double with MPI_Send/MPI_Recv on
 * MPI_COMM_WORLD. */
static double pingpong_plain(int rank, int tag, int rounds)
{
    int peer = 1 - rank;
    double x = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < rounds; i++) {
        if (rank == 0) {
            MPI_Send(&x, 1, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD);
            MPI_Recv(&x, 1, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&x, 1, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&x, 1, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / rounds / 2;
}

/* Half the round trip of `rounds` enqueued ping-pongs of the double at `buf` on `c`, with an
 * MPIX_Stream_synchronize after each round trip (`sync_each`) or one after all of them (the
 * queue pipelines them). */
static double pingpong_enqueued(void *buf, int rank, int tag, MPI_Comm c, MPIX_Stream s,
                                int rounds, int sync_each)
{
    int peer = 1 - rank;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < rounds; i++) {
        if (rank == 0) {
            MPIX_Send_enqueue(buf, 1, MPI_DOUBLE, peer, tag, c);
            MPIX_Recv_enqueue(buf, 1, MPI_DOUBLE, peer, tag, c, MPI_STATUS_IGNORE);
        } else {
            MPIX_Recv_enqueue(buf, 1, MPI_DOUBLE, peer, tag, c, MPI_STATUS_IGNORE);
            MPIX_Send_enqueue(buf, 1, MPI_DOUBLE, peer, tag, c);
        }
        if (sync_each)
            MPIX_Stream_synchronize(s);
    }
    MPIX_Stream_synchronize(s);
    return (MPI_Wtime() - t0) / rounds / 2;
}

#endif
