/* Latency of 8-byte RMA operations + MPI_Win_flush on an allocated window, 2 ranks (rank 0
 * the origin, rank 1 the target), as the minimum over batches of 1000: on a machine shared
 * with other work the minimum is the number least disturbed by preemption, where a mean
 * over one long loop (bench/rma.c) picks up whichever row the other load hit. Each line:
 * "<row> <microseconds per operation>"; rows put, get, acc (MPI_SUM on a long), fop
 * (MPI_Fetch_and_op MPI_SUM), cas (MPI_Compare_and_swap), flush (the flush alone).
 * Usage: mpiexec -n 2 rma_atomics [batches (300)] [rows to run, e.g. "fop,cas" (all)] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, batches = argc > 1 ? atoi(argv[1]) : 300, n = 1000;
    const char *only = argc > 2 ? argv[2] : "";
    long *base, one = 1, res, cmp = 0;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, 4096);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock_all(0, win);
#define ROW(name, op)                                                                    \
    if (!*only || strstr(only, name)) {                                                  \
        double best = 1e9;                                                               \
        for (int k = 0; k < batches; k++) {                                              \
            double t = MPI_Wtime();                                                      \
            for (int i = 0; i < n; i++) {                                                \
                op;                                                                      \
                MPI_Win_flush(1, win);                                                   \
            }                                                                            \
            t = (MPI_Wtime() - t) * 1e6 / n;                                             \
            best = t < best ? t : best;                                                  \
        }                                                                                \
        printf("%s %.4f\n", name, best);                                                 \
    }
        ROW("put", MPI_Put(&one, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win));
        ROW("get", MPI_Get(&res, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win));
        ROW("acc", MPI_Accumulate(&one, 1, MPI_LONG, 1, 0, 1, MPI_LONG, MPI_SUM, win));
        ROW("fop", MPI_Fetch_and_op(&one, &res, MPI_LONG, 1, 0, MPI_SUM, win));
        ROW("cas", MPI_Compare_and_swap(&one, &cmp, &res, MPI_LONG, 1, 0, win));
        ROW("flush", (void)0);
        MPI_Win_unlock_all(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
