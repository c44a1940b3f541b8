/* A window whose errhandler was never set, in a program that set none on MPI_COMM_SELF or
 * MPI_COMM_WORLD either: an error on it is fatal (rank 1 makes one and the whole job ends;
 * rank 0 waits in a loop). See c/win/errors_follow for a program that set one. */
#include "wtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank = -1, buf[2];
    MPI_Win win;

    MPI_Init(&argc, &argv);
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
