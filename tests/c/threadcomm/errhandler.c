/* Errhandlers on a thread communicator (docs/threadcomm.md): its threads set, get and call
 * them inside the region; the errhandler belongs to the communicator (one per process, shared
 * by its thread ranks); an erroneous call on the thread communicator reaches it; outside the
 * region the calls are refused. */
#include "wtest.h"
#include "threads.h"
#include "tcheck.h"
#include <stdatomic.h>

#define NT 3

static MPI_Comm tc;
static MPI_Errhandler eh;
static _Thread_local int calls, last_code;
static _Thread_local MPI_Comm last_comm;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_code = *code;
    last_comm = *comm;
}

static void body(void *unused)
{
    (void)unused;
    calls = 0;
    TEXPECT(MPIX_Threadcomm_start(tc) == MPI_SUCCESS);
    int rank = -1, v = 0;
    MPI_Comm_rank(tc, &rank);
    if (rank == 0)
        TEXPECT(MPI_Comm_set_errhandler(tc, eh) == MPI_SUCCESS);
    MPI_Barrier(tc);
    /* Every thread rank sees the errhandler rank 0 set. */
    MPI_Errhandler got = MPI_ERRHANDLER_NULL;
    TEXPECT(MPI_Comm_get_errhandler(tc, &got) == MPI_SUCCESS);
    TEXPECT(got == eh);
    MPI_Errhandler_free(&got);
    /* MPI_Comm_call_errhandler runs it on the calling thread with the thread communicator. */
    TEXPECT(MPI_Comm_call_errhandler(tc, MPI_ERR_OTHER) == MPI_SUCCESS);
    TEXPECT(calls == 1 && last_code == MPI_ERR_OTHER && last_comm == tc);
    /* An erroneous call on the thread communicator reaches it too. */
    int rc = MPI_Send(&v, 1, MPI_INT, NT, 0, tc);
    TEXPECT(err_class(rc) == MPI_ERR_RANK);
    TEXPECT(calls == 2 && err_class(last_code) == MPI_ERR_RANK && last_comm == tc);
    MPI_Barrier(tc);
    if (rank == 1)
        TEXPECT(MPI_Comm_set_errhandler(tc, MPI_ERRORS_RETURN) == MPI_SUCCESS);
    MPI_Barrier(tc);
    TEXPECT(MPI_Comm_get_errhandler(tc, &got) == MPI_SUCCESS);
    TEXPECT(got == MPI_ERRORS_RETURN);
    rc = MPI_Send(&v, 1, MPI_INT, -5, 0, tc);
    TEXPECT(err_class(rc) == MPI_ERR_RANK);
    TEXPECT(calls == 2);
    /* Bad arguments are still refused. */
    TEXPECT(err_class(MPI_Comm_call_errhandler(tc, -12345)) == MPI_ERR_ARG);
    TEXPECT(err_class(MPI_Comm_get_errhandler(tc, NULL)) == MPI_ERR_ARG);
    MPI_Barrier(tc);
    TEXPECT(MPIX_Threadcomm_finish(tc) == MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_INT(MPI_Comm_create_errhandler(handler, &eh), MPI_SUCCESS);
    CHECK_INT(MPIX_Threadcomm_init(MPI_COMM_WORLD, NT, &tc), MPI_SUCCESS);
    /* Outside the region the thread communicator is refused. */
    MPI_Errhandler got = MPI_ERRHANDLER_NULL;
    CHECK_INT(err_class(MPI_Comm_set_errhandler(tc, eh)), MPI_ERR_COMM);
    CHECK_INT(err_class(MPI_Comm_get_errhandler(tc, &got)), MPI_ERR_COMM);
    CHECK_INT(err_class(MPI_Comm_call_errhandler(tc, MPI_ERR_OTHER)), MPI_ERR_COMM);
    run_threads(NT, body, NULL);
    /* A second region sees the errhandler the first one left. */
    run_threads(NT, body, NULL);
    CHECK_INT(atomic_load(&errors_in_threads), 0);
    CHECK_INT(MPIX_Threadcomm_free(&tc), MPI_SUCCESS);
    MPI_Errhandler_free(&eh);
    MPI_Finalize();
    if (wtest_errs == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
