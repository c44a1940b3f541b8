/* Helpers shared by the point-to-point tests (no collectives: they come with their issue). */
#ifndef PT2PT_UTIL_H
#define PT2PT_UTIL_H
#include "wtest.h"

/* Both ranks of a pair reach this point before either goes on. */
static WTEST_UNUSED void pair_sync(int peer)
{
    char a = 0, b = 0;
    MPI_Sendrecv(&a, 1, MPI_CHAR, peer, 32000, &b, 1, MPI_CHAR, peer, 32000, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
}

/* Every rank reaches this point before any goes on (a ring token twice round). */
static WTEST_UNUSED void all_sync(void)
{
    int rank, size, t = 0, r;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size == 1)
        return;
    for (r = 0; r < 2; r++) {
        if (rank == 0) {
            MPI_Send(&t, 1, MPI_INT, 1, 32001, MPI_COMM_WORLD);
            MPI_Recv(&t, 1, MPI_INT, size - 1, 32001, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&t, 1, MPI_INT, rank - 1, 32001, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&t, 1, MPI_INT, (rank + 1) % size, 32001, MPI_COMM_WORLD);
        }
    }
}
#endif
