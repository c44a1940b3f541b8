/* Communicator creation benchmark: MPI_Comm_dup and MPI_Comm_split (two colours, reversed
 * keys) of MPI_COMM_WORLD. Each sample creates BATCH communicators back to back (timed), then
 * frees them (not timed). Prints per-operation times in microseconds, the maximum over ranks
 * of each sample, one line per sample:
 *   COMM dup=<us> split=<us>
 * Usage: comm [samples] [batch] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXBATCH 1000

int main(int argc, char **argv)
{
    int samples = argc > 1 ? atoi(argv[1]) : 20;
    int batch = argc > 2 ? atoi(argv[2]) : 100;
    int rank, size, s, i;
    static MPI_Comm comms[MAXBATCH];

    if (batch > MAXBATCH)
        batch = MAXBATCH;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (s = -2; s < samples; s++) { /* two warm-up samples */
        double t[2], tmax[2];
        MPI_Barrier(MPI_COMM_WORLD);
        t[0] = MPI_Wtime();
        for (i = 0; i < batch; i++)
            MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
        t[0] = MPI_Wtime() - t[0];
        for (i = 0; i < batch; i++)
            MPI_Comm_free(&comms[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        t[1] = MPI_Wtime();
        for (i = 0; i < batch; i++)
            MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &comms[i]);
        t[1] = MPI_Wtime() - t[1];
        for (i = 0; i < batch; i++)
            MPI_Comm_free(&comms[i]);
        MPI_Reduce(t, tmax, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0 && s >= 0)
            printf("COMM dup=%.3f split=%.3f\n", tmax[0] / batch * 1e6, tmax[1] / batch * 1e6);
    }
    MPI_Finalize();
    return 0;
}
