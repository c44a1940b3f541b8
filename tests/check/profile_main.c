/* The program a profiling tool wraps: it checks that the tool's MPI_Init, MPI_Comm_rank and
 * MPI_Finalize ran (and only once each), that the PMPI_ calls underneath did their work, and
 * that functions the tool does not define still reach the library. */
#include <mpi.h>
#include <stdio.h>

extern int tool_init_calls, tool_finalize_calls, tool_rank_calls, tool_init_result;

int main(int argc, char **argv)
{
    int errs = 0, flag = 0, rank = -1, size = -1;

    MPI_Init(&argc, &argv);
    if (tool_init_calls != 1 || tool_init_result != MPI_SUCCESS) {
        fprintf(stderr, "tool MPI_Init: %d calls, PMPI_Init returned %d\n", tool_init_calls, tool_init_result);
        errs++;
    }
    MPI_Initialized(&flag);
    if (!flag) {
        fprintf(stderr, "PMPI_Init did not initialize MPI\n");
        errs++;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank); /* not counted: the tool does not see PMPI_ calls */
    MPI_Comm_size(MPI_COMM_WORLD, &size);  /* not wrapped: straight to the library */
    if (tool_rank_calls != 1 || rank != 0 || size != 1) {
        fprintf(stderr, "MPI_Comm_rank: %d tool calls, rank %d, size %d\n", tool_rank_calls, rank, size);
        errs++;
    }
    MPI_Finalize();
    flag = 0;
    PMPI_Finalized(&flag);
    if (tool_finalize_calls != 1 || !flag) {
        fprintf(stderr, "tool MPI_Finalize: %d calls, finalized %d\n", tool_finalize_calls, flag);
        errs++;
    }
    if (errs == 0)
        printf(" No Errors\n");
    return errs != 0;
}
