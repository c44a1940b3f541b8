/* The cost of the instrumentation hooks (MPI_T events, WEFT_STATS timing, WEFT_TRACE) while
 * they are off: bench/hooks.py runs this program against a library with the hooks compiled in
 * and against one with them stripped, interleaved. Measures, 2 ranks:
 *   call     ns per MPI_Comm_rank (an entry point doing almost nothing but the hooks' checks)
 *   latency  8-byte ping-pong, one-way time (us)
 *   rate     8-byte messages per second, window of 64 Isend/Irecv
 * Output: "<measure> <value>" lines from rank 0.
 *   mpicc -O2 bench/hooks.c -o hooks && mpiexec -n 2 ./hooks [iterations]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define WINDOW 64

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 20000, rank, size, r;
    char buf[8] = {0}, win[WINDOW][8];
    MPI_Request reqs[WINDOW];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "hooks: run with 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    int peer = 1 - rank;

    int calls = iters * 50;
    double t0 = MPI_Wtime();
    for (int i = 0; i < calls; i++)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    double call_ns = (MPI_Wtime() - t0) / calls * 1e9;

    for (int pass = 0; pass < 2; pass++) { /* the first pass warms up */
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
        }
    }
    double lat_us = (MPI_Wtime() - t0) / iters / 2 * 1e6;

    int rounds = iters / WINDOW + 10;
    for (int pass = 0; pass < 2; pass++) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (int i = 0; i < rounds; i++) {
            for (int w = 0; w < WINDOW; w++) {
                if (rank == 0)
                    MPI_Isend(win[w], 8, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &reqs[w]);
                else
                    MPI_Irecv(win[w], 8, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &reqs[w]);
            }
            MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
            if (rank == 0)
                MPI_Recv(buf, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else
                MPI_Send(buf, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
        }
    }
    double rate = (double)rounds * WINDOW / (MPI_Wtime() - t0);
    if (rank == 0)
        printf("call %.2f\nlatency %.4f\nrate %.0f\n", call_ns, lat_us, rate);
    MPI_Finalize();
    return 0;
}
