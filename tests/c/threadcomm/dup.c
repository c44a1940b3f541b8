/* MPI_Comm_dup of a thread communicator inside its region (docs/threadcomm.md): collective
 * over its thread ranks; the duplicate has the same ranks and size, is born active, keeps its
 * own traffic apart from the original's, copies each rank's attributes by their copy
 * callbacks, inherits the errhandler, and is freed with MPI_Comm_free before finish. Run on
 * one or several processes with argv[1] threads each. */
#include "wtest.h"
#include "threads.h"
#include "tcheck.h"
#include <stdint.h>
#include <stdlib.h>

static MPI_Comm tc;
static int keyval = MPI_KEYVAL_INVALID;
static atomic_int copies;

static int on_copy(MPI_Comm old, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)kv, (void)extra;
    *(void **)out = (void *)((intptr_t)in + 1000);
    *flag = 1;
    atomic_fetch_add(&copies, 1);
    return MPI_SUCCESS;
}

static void one_dup(int rank, int size, int round)
{
    MPI_Comm d = MPI_COMM_NULL;
    TEXPECT(MPI_Comm_dup(tc, &d) == MPI_SUCCESS);
    TEXPECT(d != MPI_COMM_NULL && d != tc);
    int drank = -1, dsize = -1, flag = 0;
    MPI_Comm_rank(d, &drank);
    MPI_Comm_size(d, &dsize);
    TEXPECT(drank == rank && dsize == size);
    flag = 0;
    TEXPECT(MPIX_Comm_test_threadcomm(d, &flag) == MPI_SUCCESS && flag == 1);
    /* The attribute was copied (value + 1000) for this rank. */
    void *got = NULL;
    TEXPECT(MPI_Comm_get_attr(d, keyval, &got, &flag) == MPI_SUCCESS && flag == 1 &&
            (intptr_t)got == 100 * rank + 1000 + round);
    /* Traffic apart: the same tag on both, the duplicate's receive gets the duplicate's
     * message although the original's was sent first. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int a = 10 * rank + 1, b = 10 * rank + 2, in = -1;
    TEXPECT(MPI_Send(&a, 1, MPI_INT, right, 5, tc) == MPI_SUCCESS);
    TEXPECT(MPI_Send(&b, 1, MPI_INT, right, 5, d) == MPI_SUCCESS);
    TEXPECT(MPI_Recv(&in, 1, MPI_INT, left, 5, d, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    TEXPECT(in == 10 * left + 2);
    TEXPECT(MPI_Recv(&in, 1, MPI_INT, left, 5, tc, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    TEXPECT(in == 10 * left + 1);
    /* Collectives on the duplicate. */
    int sum = -1;
    TEXPECT(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, d) == MPI_SUCCESS);
    TEXPECT(sum == size * (size - 1) / 2);
    TEXPECT(MPI_Barrier(d) == MPI_SUCCESS);
    /* The errhandler came with it: a bad rank returns, no abort. */
    TEXPECT(err_class(MPI_Send(&a, 1, MPI_INT, size, 0, d)) == MPI_ERR_RANK);
    TEXPECT(MPI_Comm_free(&d) == MPI_SUCCESS);
    TEXPECT(d == MPI_COMM_NULL);
}

static void region(void *arg)
{
    int round = *(int *)arg;
    TEXPECT(MPIX_Threadcomm_start(tc) == MPI_SUCCESS);
    int rank = -1, size = -1;
    MPI_Comm_rank(tc, &rank);
    MPI_Comm_size(tc, &size);
    MPI_Comm_set_errhandler(tc, MPI_ERRORS_RETURN);
    TEXPECT(MPI_Comm_set_attr(tc, keyval, (void *)(intptr_t)(100 * rank + round)) == MPI_SUCCESS);
    /* Twice in one region: each duplicate is freed before the next. */
    one_dup(rank, size, round);
    one_dup(rank, size, round);
    /* The original thread communicator cannot be freed with MPI_Comm_free. */
    MPI_Comm copy = tc;
    TEXPECT(err_class(MPI_Comm_free(&copy)) == MPI_ERR_COMM);
    TEXPECT(MPIX_Threadcomm_finish(tc) == MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int nt = argc > 1 ? atoi(argv[1]) : 2, nprocs = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_INT(MPI_Comm_create_keyval(on_copy, MPI_COMM_NULL_DELETE_FN, &keyval, NULL), MPI_SUCCESS);
    CHECK_INT(MPIX_Threadcomm_init(MPI_COMM_WORLD, nt, &tc), MPI_SUCCESS);
    for (int round = 0; round < 3; round++) {
        atomic_store(&copies, 0);
        run_threads(nt, region, &round);
        CHECK_INT(atomic_load(&copies), 2 * nt);
    }
    CHECK_INT(atomic_load(&errors_in_threads), 0);
    CHECK_INT(MPIX_Threadcomm_free(&tc), MPI_SUCCESS);
    MPI_Comm_free_keyval(&keyval);
    MPI_Finalize();
    if (wtest_errs == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
