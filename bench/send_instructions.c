/* Instructions of small sends (bench/README.md, Point-to-point): rank 0 makes N 8-byte
 * `MPI_Isend` + `MPI_Wait` (mode isend) or `MPI_Send` (mode send), rank 1 N `MPI_Recv`; only
 * those calls run between CALLGRIND_TOGGLE_COLLECTs (valgrind --collect-atstart=no).
 * Usage: send_instructions isend|send N (N a multiple of 32). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>
int main(int argc, char **argv)
{
    int rank, n = atoi(argv[2]);
    int isend = strcmp(argv[1], "isend") == 0;
    double v = 1.0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* warm up */
    for (int i = 0; i < 100; i++) {
        if (rank == 0) { MPI_Request r; MPI_Isend(&v, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, &r); MPI_Wait(&r, MPI_STATUS_IGNORE); }
        else MPI_Recv(&v, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* Batches of 32: rank 0's messages all fit in the receiver's ring (it is empty at the
     * start of each batch), and rank 1's receives find them there (already arrived). */
    for (int i = 0; i < n; i += 32) {
        if (rank == 0) {
            CALLGRIND_TOGGLE_COLLECT;
            for (int k = 0; k < 32; k++) {
                if (isend) {
                    MPI_Request r;
                    MPI_Isend(&v, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, &r);
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                } else {
                    MPI_Send(&v, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
                }
            }
            CALLGRIND_TOGGLE_COLLECT;
            MPI_Send(&v, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(&v, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&v, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CALLGRIND_TOGGLE_COLLECT;
            for (int k = 0; k < 32; k++)
                MPI_Recv(&v, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CALLGRIND_TOGGLE_COLLECT;
            MPI_Send(&v, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
