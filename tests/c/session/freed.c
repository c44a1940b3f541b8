/* A finalized session's handle is invalid: with no object to take the error, the initial
 * (fatal) errhandler reports MPI_ERR_SESSION and names the call. */
#include "wtest.h"

int main(void)
{
    MPI_Session s, stale;
    int n;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    stale = s;
    MPI_Session_finalize(&s);
    MPI_Session_get_num_psets(stale, MPI_INFO_NULL, &n);
    return 0; /* not reached */
}
