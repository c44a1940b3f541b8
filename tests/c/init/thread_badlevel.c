/* MPI_Init_thread with a value that is no MPI_THREAD_* level: an error before MPI is
 * initialized goes to the default errhandler (fatal), so the job ends with a message. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int provided = -1;
    int rc = MPI_Init_thread(&argc, &argv, 7, &provided);
    /* Not reached when the error is fatal. */
    fprintf(stderr, "MPI_Init_thread(required=7) returned %d, provided %d\n", rc, provided);
    if (rc == MPI_SUCCESS)
        MPI_Finalize();
    return 0;
}
