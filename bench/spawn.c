/* Time of MPI_Comm_spawn of 2 children until the intercommunicator is usable: from the call
 * to the end of a first MPI_Barrier over the intercommunicator (the children's MPI_Init,
 * connection and that barrier included), on a parent job of 1 process. Each round then
 * disconnects; the children finalize and exit. Prints the median and minimum of ROUNDS
 * rounds (after one warm-up) in milliseconds.
 *
 *   mpicc -O2 bench/spawn.c -o /tmp/spawn && mpiexec -n 1 /tmp/spawn [ROUNDS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Comm parent, inter;
    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        MPI_Barrier(parent);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    double *t = calloc(rounds + 1, sizeof *t);
    for (int i = 0; i <= rounds; i++) {
        double t0 = MPI_Wtime();
        MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
                       MPI_ERRCODES_IGNORE);
        MPI_Barrier(inter);
        t[i] = (MPI_Wtime() - t0) * 1e3;
        MPI_Comm_disconnect(&inter);
    }
    qsort(t + 1, rounds, sizeof *t, cmp); /* t[0] is the warm-up */
    printf("spawn 2 children until usable: median %.2f ms, min %.2f ms (%d rounds)\n",
           t[1 + rounds / 2], t[1], rounds);
    MPI_Finalize();
    return 0;
}
