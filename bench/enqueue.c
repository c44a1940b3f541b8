/* Enqueue on Weft's host queue (issue #19), 2 ranks:
 *
 *   mpicc -O2 bench/enqueue.c -o enqueue && mpiexec -n 2 ./enqueue [ITERS [BYTES]]
 *
 * 1. overhead: the time the enqueuing thread spends in MPIX_Send_enqueue (rank 0) and
 *    MPIX_Recv_enqueue (rank 1) of 8 bytes, per call (ITERS calls, then one synchronize);
 * 2. latency: 8-byte ping-pong, half the round trip: plain MPI_Send/MPI_Recv on
 *    MPI_COMM_WORLD; enqueued with MPIX_Stream_synchronize after each round trip; enqueued
 *    with one synchronize after all ITERS round trips (the queue pipelines them);
 * 3. overlap: rank 0 queues 1000 sends of BYTES (default 8) and computes while they drain
 *    (rank 1 queues the receives and waits); the time of
 *    computing alone, draining alone, and both, and the share of the shorter one hidden.
 * Best of 5 repetitions for each number. */
#include "enqueue_common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OVERLAP_SENDS 1000

static volatile double sink;
static double compute(double seconds)
{
    double t0 = MPI_Wtime(), x = 1.0;
    while (MPI_Wtime() - t0 < seconds)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    int rank, iters = argc > 1 ? atoi(argv[1]) : 20000;
    int OVERLAP_BYTES = argc > 2 ? atoi(argv[2]) : 8;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Info info;
    MPIX_Stream s;
    MPI_Comm c;
    MPI_Info_create(&info);
    MPI_Info_set(info, "type", "weft_host_queue");
    if (MPIX_Stream_create(info, &s) != MPI_SUCCESS) {
        fprintf(stderr, "no host queue\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Info_free(&info);
    MPIX_Stream_comm_create(MPI_COMM_WORLD, s, &c);
    double *v = calloc((size_t)iters, sizeof(double));
    double ovh = 1e9, lat_plain = 1e9, lat_sync = 1e9, lat_pipe = 1e9;

    for (int rep = 0; rep < 5; rep++) {
        /* 1. overhead, 2. latency */
        ovh = best(ovh, enqueue_overhead((char *)v, iters, iters, rank, c, s));
        int rounds = iters / 4;
        double x = 0;
        lat_plain = best(lat_plain, pingpong_plain(rank, 1, rounds));
        lat_sync = best(lat_sync, pingpong_enqueued(&x, rank, 2, c, s, rounds, 1));
        lat_pipe = best(lat_pipe, pingpong_enqueued(&x, rank, 3, c, s, rounds, 0));
    }

    /* 3. overlap: the compute time is calibrated to the drain time. */
    char *big = calloc(OVERLAP_BYTES, 1), *sink_buf = calloc(OVERLAP_BYTES, 1);
    double t_drain = 1e9, t_comp = 1e9, t_both = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < OVERLAP_SENDS; i++) {
            if (rank == 0)
                MPIX_Send_enqueue(big, OVERLAP_BYTES, MPI_BYTE, 1, 4, c);
            else
                MPIX_Recv_enqueue(sink_buf, OVERLAP_BYTES, MPI_BYTE, 0, 4, c, MPI_STATUS_IGNORE);
        }
        MPIX_Stream_synchronize(s);
        t_drain = best(t_drain, MPI_Wtime() - t0);
    }
    double work;
    if (rank == 0)
        work = t_drain;
    MPI_Bcast(&work, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (int rep = 0; rep < 5; rep++)
        t_comp = best(t_comp, compute(work));
    for (int rep = 0; rep < 5; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < OVERLAP_SENDS; i++) {
            if (rank == 0)
                MPIX_Send_enqueue(big, OVERLAP_BYTES, MPI_BYTE, 1, 5, c);
            else
                MPIX_Recv_enqueue(sink_buf, OVERLAP_BYTES, MPI_BYTE, 0, 5, c, MPI_STATUS_IGNORE);
        }
        if (rank == 0)
            compute(work);
        MPIX_Stream_synchronize(s);
        t_both = best(t_both, MPI_Wtime() - t0);
    }

    double r1[1];
    MPI_Reduce(&ovh, r1, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double shorter = t_comp < t_drain ? t_comp : t_drain;
        double hidden = (t_comp + t_drain - t_both) / shorter;
        printf("enqueue overhead (8 B, slower rank)   %8.3f us/op\n", r1[0] * 1e6);
        printf("latency MPI_Send/MPI_Recv             %8.3f us\n", lat_plain * 1e6);
        printf("latency enqueue + synchronize         %8.3f us\n", lat_sync * 1e6);
        printf("latency enqueue, pipelined            %8.3f us\n", lat_pipe * 1e6);
        printf("overlap: drain %d x %d B  %8.3f ms, compute %8.3f ms, both %8.3f ms: %.0f%% hidden\n",
               OVERLAP_SENDS, OVERLAP_BYTES, t_drain * 1e3, t_comp * 1e3, t_both * 1e3,
               hidden * 100);
    }
    MPI_Comm_free(&c);
    MPIX_Stream_free(&s);
    free(v);
    free(big);
    free(sink_buf);
    MPI_Finalize();
    return 0;
}
