/* Misuse of thread communicators gets clear errors: a thread communicator used outside its
 * region, more threads starting it than num_threads, finish with a request pending, freeing
 * it while active or with MPI_Comm_free, start on an ordinary communicator, bad arguments. */
#include "wtest.h"
#include "threads.h"
#include <sched.h>
#include <string.h>
#include <stdatomic.h>

#define NT 3

static MPI_Comm tc;

static int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}
static atomic_int started_ok, start_refused, errors_in_threads;

#define TCHECK_CLASS(call, cls)                                                          \
    do {                                                                                 \
        int c_ = -1, rc_ = (call);                                                       \
        MPI_Error_class(rc_, &c_);                                                       \
        if (c_ != (cls)) {                                                               \
            atomic_fetch_add(&errors_in_threads, 1);                                     \
            fprintf(stderr, "%s:%d: %s gave class %d, expected %s\n", __FILE__, __LINE__, \
                    #call, c_, #cls);                                                    \
        }                                                                                \
    } while (0)

/* NT + 1 threads start a communicator made for NT: exactly one is refused. */
static void too_many(void *unused)
{
    (void)unused;
    int rc = MPIX_Threadcomm_start(tc);
    if (rc != MPI_SUCCESS) {
        int c = -1;
        MPI_Error_class(rc, &c);
        if (c != MPI_ERR_COMM)
            atomic_fetch_add(&errors_in_threads, 1);
        atomic_fetch_add(&start_refused, 1);
        return;
    }
    atomic_fetch_add(&started_ok, 1);
    int rank = -1;
    MPI_Comm_rank(tc, &rank);
    MPI_Barrier(tc);
    /* Freeing the active communicator is refused; so is starting it twice. */
    if (rank == 0) {
        MPI_Comm copy = tc;
        TCHECK_CLASS(MPIX_Threadcomm_free(&copy), MPI_ERR_COMM);
        TCHECK_CLASS(MPIX_Threadcomm_start(tc), MPI_ERR_COMM);
        TCHECK_CLASS(MPI_Send(&rank, 1, MPI_INT, NT, 0, tc), MPI_ERR_RANK);
        TCHECK_CLASS(MPI_Bcast(&rank, 1, MPI_INT, -1, tc), MPI_ERR_ROOT);
        /* What is not done on a thread communicator says so, with its own class. */
        MPI_Comm made = MPI_COMM_NULL;
        int rc = MPI_Comm_create_group(tc, MPI_GROUP_EMPTY, 0, &made);
        TCHECK_CLASS(rc, MPI_ERR_UNSUPPORTED_OPERATION);
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        if (!strstr(msg, "MPI_Comm_create_group") || !strstr(msg, "thread communicator")) {
            atomic_fetch_add(&errors_in_threads, 1);
            fprintf(stderr, "unclear message: %s\n", msg);
        }
    }
    /* Finish with a receive pending is refused; complete it and finish. */
    int v = -1, one = 1;
    MPI_Request r;
    MPI_Irecv(&v, 1, MPI_INT, rank, 5, tc, &r);
    TCHECK_CLASS(MPIX_Threadcomm_finish(tc), MPI_ERR_PENDING);
    MPI_Send(&one, 1, MPI_INT, rank, 5, tc);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (v != 1)
        atomic_fetch_add(&errors_in_threads, 1);
    /* The refused thread must have tried before this region ends (else it could start
     * the next one). */
    while (atomic_load(&start_refused) == 0)
        sched_yield();
    MPIX_Threadcomm_finish(tc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm bad = MPI_COMM_NULL;
    CHECK_INT(err_class(MPIX_Threadcomm_init(MPI_COMM_SELF, 0, &bad)), MPI_ERR_ARG);
    CHECK_INT(err_class(MPIX_Threadcomm_start(MPI_COMM_SELF)), MPI_ERR_COMM);
    CHECK_INT(err_class(MPIX_Threadcomm_finish(MPI_COMM_WORLD)), MPI_ERR_COMM);
    CHECK_INT(MPIX_Threadcomm_init(MPI_COMM_SELF, NT, &tc), MPI_SUCCESS);
    /* Outside its region the thread communicator is refused. */
    int rank = -1, v = 0;
    CHECK_INT(err_class(MPI_Comm_rank(tc, &rank)), MPI_ERR_COMM);
    CHECK_INT(err_class(MPI_Send(&v, 1, MPI_INT, 0, 0, tc)), MPI_ERR_COMM);
    CHECK_INT(err_class(MPI_Barrier(tc)), MPI_ERR_COMM);
    CHECK_INT(err_class(MPIX_Threadcomm_finish(tc)), MPI_ERR_COMM);
    MPI_Comm copy = tc;
    CHECK_INT(err_class(MPI_Comm_free(&copy)), MPI_ERR_COMM);
    run_threads(NT + 1, too_many, NULL);
    CHECK_INT(atomic_load(&started_ok), NT);
    CHECK_INT(atomic_load(&start_refused), 1);
    CHECK_INT(atomic_load(&errors_in_threads), 0);
    CHECK_INT(MPIX_Threadcomm_free(&tc), MPI_SUCCESS);
    CHECK_INT(err_class(MPIX_Threadcomm_free(&tc)), MPI_ERR_COMM);
    MPI_Finalize();
    if (wtest_errs == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
