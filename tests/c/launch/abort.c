/* MPI_Abort(MPI_COMM_WORLD, 7) on rank 0 while rank 1 waits: the job exits with 7.
 * The barrier first lets every rank finish MPI_Init (abort_early.c aborts without it). */
#include "wtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Abort(MPI_COMM_WORLD, 7);
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 60.0)
        usleep(1000);
    fprintf(stderr, "rank %d: nobody ended the job\n", rank);
    MPI_Finalize();
    return 0;
}
