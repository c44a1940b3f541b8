/* Entry points Rust cannot define: variadic functions (stable Rust cannot write them). */
#include "mpi.h"

/* MPI_Pcontrol: profiling control. Weft has no built-in profiling levels, so every level is
 * accepted and ignored, as the standard allows. */
int PMPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}

#pragma weak MPI_Pcontrol
int MPI_Pcontrol(const int level, ...)
{
    return PMPI_Pcontrol(level);
}
