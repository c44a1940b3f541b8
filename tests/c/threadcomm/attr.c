/* Attributes on a thread communicator (docs/threadcomm.md) belong to the thread rank that set
 * them: each rank sees its own value under one keyval, replacing or deleting one runs the
 * delete callback with the old value, and finish deletes what is left (the next region starts
 * with none). Outside the region the calls are refused. */
#include "wtest.h"
#include "threads.h"
#include "tcheck.h"
#include <stdatomic.h>
#include <stdint.h>

#define NT 3

static MPI_Comm tc;
static int keyval = MPI_KEYVAL_INVALID;
static atomic_int deletes_total;
/* Per thread rank: the sum of the values the delete callback saw, and how many. */
static atomic_long deleted_sum[NT];
static atomic_int deleted_count[NT];
static _Thread_local int my_rank = -1;

static int on_delete(MPI_Comm comm, int kv, void *value, void *extra)
{
    (void)extra;
    TEXPECT(comm == tc && kv == keyval);
    /* The deleting thread is the rank that set the value (values are 100 * rank + k). */
    long v = (long)(intptr_t)value;
    TEXPECT(v / 100 == my_rank);
    atomic_fetch_add(&deleted_sum[my_rank], v);
    atomic_fetch_add(&deleted_count[my_rank], 1);
    atomic_fetch_add(&deletes_total, 1);
    return MPI_SUCCESS;
}

static void region(void *unused)
{
    (void)unused;
    TEXPECT(MPIX_Threadcomm_start(tc) == MPI_SUCCESS);
    int rank = -1, flag = 1;
    MPI_Comm_rank(tc, &rank);
    my_rank = rank;
    void *got = NULL;
    /* A new region has no attributes. */
    TEXPECT(MPI_Comm_get_attr(tc, keyval, &got, &flag) == MPI_SUCCESS && flag == 0);
    TEXPECT(MPI_Comm_set_attr(tc, keyval, (void *)(intptr_t)(100 * rank + 1)) == MPI_SUCCESS);
    MPI_Barrier(tc);
    /* Every rank sees its own value after all have set theirs. */
    TEXPECT(MPI_Comm_get_attr(tc, keyval, &got, &flag) == MPI_SUCCESS);
    TEXPECT(flag == 1 && (intptr_t)got == 100 * rank + 1);
    /* Replacing runs the delete callback on the old value. */
    TEXPECT(MPI_Comm_set_attr(tc, keyval, (void *)(intptr_t)(100 * rank + 2)) == MPI_SUCCESS);
    TEXPECT(atomic_load(&deleted_count[rank]) == 1 && atomic_load(&deleted_sum[rank]) == 100 * rank + 1);
    /* Deleting runs it on the current value. */
    TEXPECT(MPI_Comm_delete_attr(tc, keyval) == MPI_SUCCESS);
    TEXPECT(atomic_load(&deleted_count[rank]) == 2);
    TEXPECT(MPI_Comm_get_attr(tc, keyval, &got, &flag) == MPI_SUCCESS && flag == 0);
    /* Left set for finish to delete. */
    TEXPECT(MPI_Comm_set_attr(tc, keyval, (void *)(intptr_t)(100 * rank + 3)) == MPI_SUCCESS);
    /* Predefined attributes read as on any communicator. */
    int *tag_ub = NULL;
    TEXPECT(MPI_Comm_get_attr(tc, MPI_TAG_UB, &tag_ub, &flag) == MPI_SUCCESS && flag == 1 &&
            tag_ub && *tag_ub >= 32767);
    /* Bad arguments are still refused. */
    TEXPECT(err_class(MPI_Comm_get_attr(tc, keyval, NULL, &flag)) == MPI_ERR_ARG);
    TEXPECT(err_class(MPI_Comm_set_attr(tc, MPI_KEYVAL_INVALID, NULL)) == MPI_ERR_KEYVAL);
    MPI_Barrier(tc);
    TEXPECT(MPIX_Threadcomm_finish(tc) == MPI_SUCCESS);
    TEXPECT(atomic_load(&deleted_count[rank]) == 3);
    TEXPECT(atomic_load(&deleted_sum[rank]) == 3 * (100 * rank) + 6);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_INT(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_delete, &keyval, NULL), MPI_SUCCESS);
    CHECK_INT(MPIX_Threadcomm_init(MPI_COMM_SELF, NT, &tc), MPI_SUCCESS);
    /* Outside the region the thread communicator is refused. */
    int flag = 0;
    void *got = NULL;
    CHECK_INT(err_class(MPI_Comm_set_attr(tc, keyval, NULL)), MPI_ERR_COMM);
    CHECK_INT(err_class(MPI_Comm_get_attr(tc, keyval, &got, &flag)), MPI_ERR_COMM);
    CHECK_INT(err_class(MPI_Comm_delete_attr(tc, keyval)), MPI_ERR_COMM);
    run_threads(NT, region, NULL);
    CHECK_INT(atomic_load(&deletes_total), 3 * NT);
    /* A second region starts with no attributes and deletes its own again. */
    for (int r = 0; r < NT; r++) {
        atomic_store(&deleted_sum[r], 0);
        atomic_store(&deleted_count[r], 0);
    }
    run_threads(NT, region, NULL);
    CHECK_INT(atomic_load(&deletes_total), 6 * NT);
    CHECK_INT(atomic_load(&errors_in_threads), 0);
    CHECK_INT(MPIX_Threadcomm_free(&tc), MPI_SUCCESS);
    MPI_Comm_free_keyval(&keyval);
    MPI_Finalize();
    if (wtest_errs == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
