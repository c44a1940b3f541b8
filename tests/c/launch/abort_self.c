/* MPI_Abort(MPI_COMM_SELF, 3) on one rank of four ends the job too (Weft aborts the whole
 * job, as the standard allows), with the code. */
#include "wtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 2)
        MPI_Abort(MPI_COMM_SELF, 3);
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 60.0)
        usleep(1000);
    fprintf(stderr, "rank %d: nobody ended the job\n", rank);
    MPI_Finalize();
    return 0;
}
