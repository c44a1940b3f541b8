/* Instructions of small receives posted before their messages arrive (bench/README.md,
 * Point-to-point: the UCX path): rank 1 posts 32 8-byte `MPI_Irecv`s (collected), tells rank
 * 0, which sends the 32 messages; rank 1 then sleeps (not collected) so that they have
 * arrived, and collects its `MPI_Waitall` of the 32: the cost of taking each arrival from the
 * transport and completing its posted receive. Rank 0 collects its `MPI_Isend` + `MPI_Wait`s.
 * Run under valgrind --collect-atstart=no. Usage: recv_instructions N (N a multiple of 32). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <valgrind/callgrind.h>
int main(int argc, char **argv)
{
    int rank, n = atoi(argv[1]);
    double v[32] = {0};
    MPI_Request r[32];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 100; i++) {  /* warm up */
        if (rank == 0) MPI_Send(v, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
        else MPI_Recv(v, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < 32; k++) v[k] = (double)k;
    for (int i = 0; i < n; i += 32) {
        if (rank == 0) {
            MPI_Recv(v, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CALLGRIND_TOGGLE_COLLECT;
            for (int k = 0; k < 32; k++) {
                MPI_Isend(&v[k], 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, &r[k]);
                MPI_Wait(&r[k], MPI_STATUS_IGNORE);
            }
            CALLGRIND_TOGGLE_COLLECT;
            MPI_Recv(v, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            CALLGRIND_TOGGLE_COLLECT;
            for (int k = 0; k < 32; k++)
                MPI_Irecv(&v[k], 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, &r[k]);
            CALLGRIND_TOGGLE_COLLECT;
            MPI_Send(v, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            usleep(50000);
            CALLGRIND_TOGGLE_COLLECT;
            MPI_Waitall(32, r, MPI_STATUSES_IGNORE);
            CALLGRIND_TOGGLE_COLLECT;
            for (int k = 0; k < 32; k++)
                if (v[k] != (double)(i + k)) {
                    fprintf(stderr, "message %d: got %g\n", i + k, v[k]);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            MPI_Send(v, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
        if (rank == 0)
            for (int k = 0; k < 32; k++) v[k] = (double)(i + 32 + k);
    }
    MPI_Finalize();
    return 0;
}
