/* MPI_Abort(MPI_COMM_WORLD, 7) on rank 0 as soon as its MPI_Init returns, while the other
 * ranks may still be in theirs (c/launch/abort waits in a barrier first). The node's shared
 * segment has one creator (the node's first rank) and is never created again by a rank that
 * attaches late: nothing may be left in /dev/shm (the manifest runs this several times with
 * shm-clean; issue #25). */
#include "wtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        MPI_Abort(MPI_COMM_WORLD, 7);
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 60.0)
        usleep(1000);
    fprintf(stderr, "rank %d: nobody ended the job\n", rank);
    MPI_Finalize();
    return 0;
}
