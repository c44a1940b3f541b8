/* Enqueue on a CUDA stream (issue #19), 2 ranks, device buffers; needs a GPU (exits 77
 * with "SKIP: why" where libcudart or a device is absent: scripts/cuda-check.sh):
 *
 *   mpicc -O2 -Itests/c/enqueue bench/enqueue_cuda.c -o enqueue_cuda
 *   mpiexec -n 2 ./enqueue_cuda [ITERS (4000)]
 *
 * 1. overhead: the time the enqueuing thread spends per MPIX_Send_enqueue (rank 0) or
 *    MPIX_Recv_enqueue (rank 1) of 8 bytes of device memory on a cudaStream_t (ITERS calls,
 *    then one MPIX_Stream_synchronize; the slower rank), and per cudaMemcpyAsync of 8 bytes
 *    for scale;
 * 2. latency, 8 bytes, half a round trip: plain MPI_Send/MPI_Recv of host memory; enqueued on
 *    the CUDA stream with device buffers, MPIX_Stream_synchronize after each round trip, and
 *    pipelined (one synchronize after ITERS/4 round trips);
 * 3. sizes 8 B .. 4 MiB, device buffers, half a round trip: enqueued (synchronize after each
 *    round trip) against the program staging by hand (cudaMemcpy to host, MPI_Send/MPI_Recv,
 *    cudaMemcpy back).
 * 0. (rank 0, before the rest) what the CUDA calls the path makes cost: per call of
 *    cudaPointerGetAttributes, cudaLaunchHostFunc (an empty function), cudaMemcpyAsync of
 *    8 bytes; the round trip of an empty host function (launch + cudaStreamSynchronize) and of
 *    an 8-byte copy to the host (cudaMemcpyAsync + cudaStreamSynchronize); cudaMallocHost +
 *    cudaFreeHost of 8 bytes.
 * Best of 3 repetitions for each number. */
#include "enqueue_common.h"
#include "wcuda.h"
#include <stdio.h>
#include <stdlib.h>

static void empty_fn(void *p) { (void)p; }
static void spin(double s)
{
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < s)
        ;
}

/* 0. the costs of the CUDA calls, on rank 0 alone. */
static void probe(wcuda_stream cs, char *d, char *h, int iters)
{
    double attr = 1e9, launch = 1e9, copy = 1e9, fn_rt = 1e9, copy_rt = 1e9, pin = 1e9;
    unsigned long long attrs[32];
    for (int rep = 0; rep < 3; rep++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            wcuda.PointerGetAttributes(attrs, d);
        attr = best(attr, (MPI_Wtime() - t0) / iters);
        t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            wcuda.LaunchHostFunc(cs, empty_fn, NULL);
        launch = best(launch, (MPI_Wtime() - t0) / iters);
        wcuda.StreamSynchronize(cs);
        t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            wcuda.MemcpyAsync(h, d, 8, WCUDA_D2H, cs);
        copy = best(copy, (MPI_Wtime() - t0) / iters);
        wcuda.StreamSynchronize(cs);
        int n = iters / 10;
        t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            wcuda.LaunchHostFunc(cs, empty_fn, NULL);
            wcuda.StreamSynchronize(cs);
        }
        fn_rt = best(fn_rt, (MPI_Wtime() - t0) / n);
        t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            wcuda.MemcpyAsync(h, d, 8, WCUDA_D2H, cs);
            wcuda.StreamSynchronize(cs);
        }
        copy_rt = best(copy_rt, (MPI_Wtime() - t0) / n);
        t0 = MPI_Wtime();
        for (int i = 0; i < 100; i++) {
            void *p;
            wcuda.MallocHost(&p, 8);
            wcuda.FreeHost(p);
        }
        pin = best(pin, (MPI_Wtime() - t0) / 100);
    }
    printf("# CUDA call costs (rank 0 alone, best of 3)\n");
    printf("cudaPointerGetAttributes                    %9.2f us\n", attr * 1e6);
    printf("cudaLaunchHostFunc (empty function)         %9.2f us\n", launch * 1e6);
    printf("cudaMemcpyAsync 8 B D2H call                %9.2f us\n", copy * 1e6);
    printf("host function round trip (+ synchronize)    %9.2f us\n", fn_rt * 1e6);
    printf("8 B D2H copy round trip (+ synchronize)     %9.2f us\n", copy_rt * 1e6);
    printf("cudaMallocHost + cudaFreeHost 8 B           %9.2f us\n", pin * 1e6);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 4000;
    const char *why = wcuda_load();
    if (why)
        wcuda_skip(rank, why);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int peer = 1 - rank;
    wcuda_stream cs;
    CU(wcuda.StreamCreate(&cs));
    MPIX_Stream s;
    MPI_Comm c;
    if (wcuda_mpix_stream(cs, &s) != MPI_SUCCESS) {
        fprintf(stderr, "MPIX_Stream_create(cudaStream_t) failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPIX_Stream_comm_create(MPI_COMM_WORLD, s, &c);
    const size_t maxb = 4 << 20;
    char *d, *h;
    CU(wcuda.Malloc((void **)&d, maxb));
    CU(wcuda.MallocHost((void **)&h, maxb));
    if (rank == 0)
        probe(cs, d, h, iters);
    MPI_Barrier(MPI_COMM_WORLD);
    double ovh = 1e9, copy = 1e9, lat_plain = 1e9, lat_sync = 1e9, lat_pipe = 1e9;

    for (int rep = 0; rep < 3; rep++) {
        /* 1. overhead, then a cudaMemcpyAsync for scale; 2. latency */
        ovh = best(ovh, enqueue_overhead(d, 1024, iters, rank, c, s));
        double t0 = MPI_Wtime(), t1;
        for (int i = 0; i < iters; i++)
            wcuda.MemcpyAsync(h, d, 8, WCUDA_D2H, cs);
        t1 = MPI_Wtime();
        wcuda.StreamSynchronize(cs);
        copy = best(copy, (t1 - t0) / iters);

        int rounds = iters / 4;
        lat_plain = best(lat_plain, pingpong_plain(rank, 1, rounds));
        lat_sync = best(lat_sync, pingpong_enqueued(d, rank, 2, c, s, rounds, 1));
        lat_pipe = best(lat_pipe, pingpong_enqueued(d, rank, 2, c, s, rounds, 0));
    }
    /* The by-hand pattern of 3. at 8 bytes with each cudaMemcpy replaced by a busy wait as
     * long as a copy round trip (no GPU): what the MPI part costs when the peer is late. */
    double lat_late = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        int rounds = iters / 20;
        double x = 0, t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (int i = 0; i < rounds; i++) {
            if (rank == 0) {
                spin(6e-6);
                MPI_Send(&x, 1, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD);
                MPI_Recv(&x, 1, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                spin(6e-6);
            } else {
                MPI_Recv(&x, 1, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                spin(12e-6);
                MPI_Send(&x, 1, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD);
            }
        }
        lat_late = best(lat_late, (MPI_Wtime() - t0) / rounds / 2);
    }
    double r[2] = {ovh, copy}, rmax[2];
    MPI_Reduce(r, rmax, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# enqueue on a cudaStream_t, device buffers, 2 ranks, %d iterations, best of 3\n",
               iters);
        printf("enqueue overhead per 8 B send/recv call     %9.2f us\n", rmax[0] * 1e6);
        printf("cudaMemcpyAsync 8 B call (for scale)        %9.2f us\n", rmax[1] * 1e6);
        printf("latency 8 B plain MPI_Send/Recv (host)      %9.2f us\n", lat_plain * 1e6);
        printf("latency 8 B enqueued, sync each round trip  %9.2f us\n", lat_sync * 1e6);
        printf("latency 8 B enqueued, pipelined             %9.2f us\n", lat_pipe * 1e6);
        printf("8 B by-hand pattern, copies replaced by 6 us busy waits (no GPU) %9.2f us\n",
               lat_late * 1e6);
        printf("%10s %14s %14s %12s\n", "bytes", "enqueued_us", "by_hand_us", "enq_MB/s");
    }

    /* 3. sizes */
    for (size_t b = 8; b <= maxb; b *= 8) {
        size_t bytes = b > maxb ? maxb : b;
        int n = bytes >= (1 << 20) ? 20 : 200;
        double t_enq = 1e9, t_hand = 1e9;
        for (int rep = 0; rep < 3; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < n; i++) {
                if (rank == 0) {
                    MPIX_Send_enqueue_c(d, (MPI_Count)bytes, MPI_BYTE, peer, 3, c);
                    MPIX_Recv_enqueue_c(d, (MPI_Count)bytes, MPI_BYTE, peer, 3, c,
                                        MPI_STATUS_IGNORE);
                } else {
                    MPIX_Recv_enqueue_c(d, (MPI_Count)bytes, MPI_BYTE, peer, 3, c,
                                        MPI_STATUS_IGNORE);
                    MPIX_Send_enqueue_c(d, (MPI_Count)bytes, MPI_BYTE, peer, 3, c);
                }
                MPIX_Stream_synchronize(s);
            }
            t_enq = best(t_enq, (MPI_Wtime() - t0) / n / 2);
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            for (int i = 0; i < n; i++) {
                if (rank == 0) {
                    wcuda.Memcpy(h, d, bytes, WCUDA_D2H);
                    MPI_Send_c(h, (MPI_Count)bytes, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
                    MPI_Recv_c(h, (MPI_Count)bytes, MPI_BYTE, peer, 4, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE);
                    wcuda.Memcpy(d, h, bytes, WCUDA_H2D);
                } else {
                    MPI_Recv_c(h, (MPI_Count)bytes, MPI_BYTE, peer, 4, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE);
                    wcuda.Memcpy(d, h, bytes, WCUDA_H2D);
                    wcuda.Memcpy(h, d, bytes, WCUDA_D2H);
                    MPI_Send_c(h, (MPI_Count)bytes, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
                }
            }
            t_hand = best(t_hand, (MPI_Wtime() - t0) / n / 2);
        }
        if (rank == 0)
            printf("%10zu %14.2f %14.2f %12.1f\n", bytes, t_enq * 1e6, t_hand * 1e6,
                   bytes / t_enq / 1e6);
        if (b == maxb)
            break;
        if (b * 8 > maxb)
            b = maxb / 8;
    }
    MPI_Comm_free(&c);
    MPIX_Stream_free(&s);
    CU(wcuda.StreamDestroy(cs));
    CU(wcuda.Free(d));
    CU(wcuda.FreeHost(h));
    MPI_Finalize();
    return 0;
}
