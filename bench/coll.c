/* Collective latency: barrier, allreduce and bcast of 8 B and 1 MiB. Each measure runs a
 * warm-up, then timed batches; a batch's time is the slowest rank's average per call, and the
 * line printed is the best batch (the least disturbed by other load on the machine).
 * Output: one line per measure, "name bytes microseconds". Standard MPI only: it is compiled
 * with each implementation's own mpicc. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

static double batch(int which, void *a, void *b, int count, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        switch (which) {
        case 0:
            MPI_Barrier(MPI_COMM_WORLD);
            break;
        case 1:
            MPI_Allreduce(a, b, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            break;
        case 2:
            MPI_Bcast(a, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            break;
        }
    }
    double mine = (MPI_Wtime() - t0) / iters, worst = 0;
    MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

static void measure(const char *name, int which, int bytes, double seconds)
{
    int count = bytes / 8;
    double *a = calloc(count + 1, 8), *b = calloc(count + 1, 8);
    for (int i = 0; i < count; i++)
        a[i] = rank + i;
    /* Calibrate: iterations for about `seconds` per batch. */
    double t = batch(which, a, b, count, 10);
    t = batch(which, a, b, count, 10);
    int iters = (int)(seconds / (t > 1e-9 ? t : 1e-9));
    if (iters < 5)
        iters = 5;
    MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
    double best = 1e30;
    for (int k = 0; k < 7; k++) {
        double x = batch(which, a, b, count, iters);
        if (x < best)
            best = x;
    }
    if (rank == 0)
        printf("%s %d %.3f\n", name, bytes, best * 1e6);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.05;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    measure("barrier", 0, 0, seconds);
    measure("allreduce", 1, 8, seconds);
    measure("allreduce", 1, 1 << 20, seconds);
    measure("bcast", 2, 8, seconds);
    measure("bcast", 2, 1 << 20, seconds);
    MPI_Finalize();
    return 0;
}
