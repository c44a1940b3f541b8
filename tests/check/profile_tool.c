/* A profiling tool: it defines MPI_Init, MPI_Finalize and MPI_Comm_rank, counts the calls and
 * forwards them to the PMPI_ entry points. Linked into a program before -lmpi, its
 * definitions replace the library's weak MPI_ symbols. */
#include <mpi.h>

int tool_init_calls = 0, tool_finalize_calls = 0, tool_rank_calls = 0;
int tool_init_result = -1;

int MPI_Init(int *argc, char ***argv)
{
    tool_init_calls++;
    tool_init_result = PMPI_Init(argc, argv);
    return tool_init_result;
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    tool_rank_calls++;
    return PMPI_Comm_rank(comm, rank);
}

int MPI_Finalize(void)
{
    tool_finalize_calls++;
    return PMPI_Finalize();
}
