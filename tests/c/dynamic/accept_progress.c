/* A process blocked in MPI_Comm_accept still makes progress (issue 22): rank 0 opens a
 * port, sends its name to rank 1, starts an MPI_Isend of 4 MiB to rank 1 (past the eager
 * size: the sender's progress moves it) and calls MPI_Comm_accept. Rank 1 receives the whole
 * message first and only then connects to the port: if the accept made no progress, neither
 * would finish. */
#include "wtest.h"
#include <stdlib.h>

#define N (1 << 20)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char port[MPI_MAX_PORT_NAME] = {0};
    int *big = malloc(N * sizeof(int));
    MPI_Comm other;
    if (rank == 0) {
        for (int i = 0; i < N; i++)
            big[i] = i * 7 + 3;
        CHECK_INT(MPI_Open_port(MPI_INFO_NULL, port), MPI_SUCCESS);
        MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        MPI_Request r;
        MPI_Isend(big, N, MPI_INT, 1, 2, MPI_COMM_WORLD, &r);
        CHECK_INT(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &other), MPI_SUCCESS);
        CHECK_INT(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        int v = -1;
        MPI_Recv(&v, 1, MPI_INT, 0, 3, other, MPI_STATUS_IGNORE);
        CHECK_INT(v, 77);
        MPI_Close_port(port);
    } else if (rank == 1) {
        MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(big, N, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += big[i] != i * 7 + 3;
        CHECK_INT(bad, 0);
        CHECK_INT(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &other), MPI_SUCCESS);
        int v = 77;
        MPI_Send(&v, 1, MPI_INT, 0, 3, other);
    }
    MPI_Comm_disconnect(&other);
    free(big);
    MPI_Finalize();
    if (wtest_errs == 0 && rank == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
