/* A rank on the second logical node kills itself while the others wait for a message from it
 * (through UCX) and a barrier: the launcher must end the whole job promptly, non-zero. */
#include "wtest.h"
#include <signal.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank = -1, size = -1, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD); /* the UCX endpoints are in use */
    if (rank == size - 1) {
        usleep(200 * 1000);
        raise(SIGKILL);
    }
    if (rank == 0)
        MPI_Recv(&x, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
        MPI_Barrier(MPI_COMM_WORLD);
    fprintf(stderr, "rank %d: nobody ended the job\n", rank);
    MPI_Finalize();
    return 0;
}
