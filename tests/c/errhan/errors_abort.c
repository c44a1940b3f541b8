/* MPI_ERRORS_ABORT on MPI_COMM_WORLD: an error on rank 1 ends the job. */
#include "wtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank = -1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT);
    if (rank == 1) {
        MPI_Comm_size(MPI_COMM_WORLD, NULL);
        fprintf(stderr, "rank 1: the error returned\n");
        return 0;
    }
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 60.0)
        usleep(1000);
    fprintf(stderr, "rank 0: nobody ended the job\n");
    MPI_Finalize();
    return 0;
}
