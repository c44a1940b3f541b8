/* Instructions per 0-byte MPI_Send + MPI_Recv on a thread communicator (issue 17; our own
 * code): a one-thread region sends to itself and receives, N times, never waiting, so
 * callgrind's count is exact. Run with two N and divide the difference by their difference:
 *   mpicc -O2 bench/threadcomm_self.c -o threadcomm_self
 *   valgrind --tool=callgrind ./threadcomm_self 1000; valgrind --tool=callgrind ./threadcomm_self 3000 */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 1000;
    MPI_Comm tc;
    MPI_Init(&argc, &argv);
    MPIX_Threadcomm_init(MPI_COMM_SELF, 1, &tc);
    MPIX_Threadcomm_start(tc);
    for (int i = 0; i < iters; i++) {
        MPI_Send(NULL, 0, MPI_BYTE, 0, 0, tc);
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, tc, MPI_STATUS_IGNORE);
    }
    MPIX_Threadcomm_finish(tc);
    MPIX_Threadcomm_free(&tc);
    MPI_Finalize();
    return 0;
}
