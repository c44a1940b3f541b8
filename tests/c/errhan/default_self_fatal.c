/* MPI_COMM_SELF's errhandler set by the program, even to MPI_ERRORS_ARE_FATAL, takes errors
 * without an object, whatever MPI_COMM_WORLD's is: rank 1's bad datatype call ends the job
 * (rank 0 waits in a loop and must be ended by the launcher). */
#include "wtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank = -1;
    MPI_Datatype t;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    if (rank == 1) {
        MPI_Type_contiguous(-1, MPI_INT, &t);
        fprintf(stderr, "rank 1: the error returned\n");
        return 0;
    }
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 60.0)
        usleep(1000);
    fprintf(stderr, "rank 0: nobody ended the job\n");
    return 0;
}
