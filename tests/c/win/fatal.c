/* A window's errhandler is MPI_ERRORS_ARE_FATAL until set, whatever the communicators'
 * are: rank 1 makes an error on a window and the whole job ends (rank 0 waits in a loop). */
#include "wtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank = -1, buf[2];
    MPI_Win win;

    MPI_Init(&argc, &argv);
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (rank == 1) {
        MPI_Win_set_attr(win, MPI_WIN_BASE, NULL);
        fprintf(stderr, "rank 1: the error on the window returned\n");
        return 0;
    }
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 60.0)
        usleep(1000);
    fprintf(stderr, "rank 0: nobody ended the job\n");
    return 0;
}
