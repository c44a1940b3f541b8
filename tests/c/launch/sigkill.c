/* The last rank kills itself with SIGKILL while the others spin in a loop: the launcher must
 * end the job promptly with a non-zero status. */
#include "wtest.h"
#include <signal.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank = -1, size = -1;
    volatile unsigned long spins = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == size - 1) {
        usleep(200 * 1000);
        raise(SIGKILL);
    }
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 60.0)
        spins++;
    fprintf(stderr, "rank %d: nobody ended the job\n", rank);
    MPI_Finalize();
    return 0;
}
