/* MPI_Comm_call_errhandler with the default errhandler (fatal) ends the job. */
#include "wtest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
    fprintf(stderr, "MPI_Comm_call_errhandler returned under MPI_ERRORS_ARE_FATAL\n");
    MPI_Finalize();
    return 0;
}
