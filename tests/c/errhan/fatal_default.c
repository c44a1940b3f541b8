/* The default errhandler is MPI_ERRORS_ARE_FATAL: rank 1 passes a garbage communicator and the
 * whole job ends (rank 0 is busy in a loop and must be ended by the launcher). */
#include "wtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank = -1, r = -1;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    if (eh != MPI_ERRORS_ARE_FATAL)
        fprintf(stderr, "rank %d: the default errhandler is not MPI_ERRORS_ARE_FATAL\n", rank);
    if (rank == 1) {
        MPI_Comm_rank((MPI_Comm)WTEST_GARBAGE, &r);
        fprintf(stderr, "rank 1: MPI_Comm_rank on a garbage handle returned\n");
        return 0;
    }
    /* Rank 0 waits (up to 60 s) for the job to be ended. */
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 60.0)
        usleep(1000);
    fprintf(stderr, "rank 0: nobody ended the job\n");
    MPI_Finalize();
    return 0;
}
