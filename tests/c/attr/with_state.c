/* MPICH's _x extensions (what libmpifort builds Fortran callbacks on): a user op, errhandlers
 * and keyvals whose functions receive an extra state, and whose destructor receives it once,
 * when the object goes (an op or errhandler on its last reference, a keyval once freed and no
 * attribute holds it). Arguments are checked like the standard forms'. */
#include "wtest.h"

static int destroyed[8];
static int op_calls, eh_calls, eh_code, copies, deletes;

static void destroy(void *state) { destroyed[*(int *)state]++; }

static void sum_x(void *in, void *inout, MPI_Count len, MPI_Datatype dt, void *state)
{
    CHECK(*(int *)state == 0, "the op receives its state");
    CHECK(dt == MPI_INT, "the op receives its datatype by value");
    for (MPI_Count i = 0; i < len; i++)
        ((int *)inout)[i] += 10 * ((int *)in)[i];
    op_calls++;
}

static void comm_eh(MPI_Comm comm, int code, void *state)
{
    CHECK(*(int *)state == 1, "the errhandler receives its state");
    CHECK(comm == MPI_COMM_SELF, "and the communicator by value");
    eh_code = code;
    eh_calls++;
}

static void win_eh(MPI_Win win, int code, void *state) { (void)win; (void)code; (void)state; }

static int copy_x(MPI_Comm c, int k, void *state, void *in, void *out, int *flag)
{
    (void)c; (void)k;
    CHECK(*(int *)state == 2, "the copy callback receives its state");
    *(intptr_t *)out = (intptr_t)in + 1;
    *flag = 1;
    copies++;
    return MPI_SUCCESS;
}

static int delete_x(MPI_Comm c, int k, void *v, void *state)
{
    (void)c; (void)k; (void)v;
    CHECK(*(int *)state == 2, "the delete callback receives its state");
    deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    static int states[] = {0, 1, 2, 3};
    int size, in[3] = {1, 2, 3}, out[3], key, flag;
    MPI_Op op;
    MPI_Errhandler eh;
    MPI_Comm dup;
    void *v;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* op: applied with its state; the destructor runs when the op is freed */
    EXPECT_OK(MPIX_Op_create_x(sum_x, destroy, 1, &states[0], &op));
    EXPECT_OK(MPI_Allreduce(in, out, 3, MPI_INT, op, MPI_COMM_WORLD));
    for (int i = 0; i < 3; i++) /* ((r0 + 10 r1) + 10 r2) ... with equal inputs */
        CHECK_INT(out[i], size == 1 ? in[i] : in[i] * (1 + 10 * (size - 1)));
    CHECK(size == 1 || op_calls > 0, "the op ran");
    CHECK_INT(destroyed[0], 0);
    EXPECT_OK(MPI_Op_free(&op));
    CHECK_INT(destroyed[0], 1);
    EXPECT_ERR(MPIX_Op_create_x(NULL, destroy, 1, &states[0], &op), MPI_ERR_ARG, "MPIX_Op_create_x", "user_fn");
    EXPECT_ERR(MPIX_Op_create_x(sum_x, NULL, 1, NULL, NULL), MPI_ERR_ARG, "MPIX_Op_create_x", "op");

    /* errhandler: called with the handle, the code and its state; destroyed with the last
     * reference (the communicator's), not at MPI_Errhandler_free */
    EXPECT_OK(MPIX_Comm_create_errhandler_x(comm_eh, destroy, &states[1], &eh));
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
    EXPECT_OK(MPI_Errhandler_free(&eh));
    CHECK_INT(destroyed[1], 0);
    int rc = MPI_Send(NULL, 1, MPI_INT, 5, 0, MPI_COMM_SELF);
    CHECK(rc != MPI_SUCCESS, "a send to rank 5 of MPI_COMM_SELF fails");
    CHECK_INT(eh_calls, 1);
    CHECK_INT(eh_code, rc);
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK_INT(destroyed[1], 1);
    /* a window errhandler does not fit a communicator */
    EXPECT_OK(MPIX_Win_create_errhandler_x(win_eh, NULL, NULL, &eh));
    EXPECT_CLASS(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh), MPI_ERR_ARG);
    EXPECT_OK(MPI_Errhandler_free(&eh));
    EXPECT_ERR(MPIX_Comm_create_errhandler_x(NULL, NULL, NULL, &eh), MPI_ERR_ARG,
               "MPIX_Comm_create_errhandler_x", NULL);

    /* keyval: callbacks with the state; destroyed once freed and no attribute holds it */
    EXPECT_OK(MPIX_Comm_create_keyval_x(copy_x, delete_x, destroy, &key, &states[2]));
    int saved = key;
    EXPECT_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, (void *)(intptr_t)41));
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    EXPECT_OK(MPI_Comm_get_attr(dup, key, &v, &flag));
    CHECK(flag && (intptr_t)v == 42, "the copy callback's value is on the duplicate");
    EXPECT_OK(MPI_Comm_free_keyval(&key));
    EXPECT_OK(MPI_Comm_free(&dup));
    CHECK_INT(copies, 1);
    CHECK_INT(deletes, 1);
    CHECK_INT(destroyed[2], 0);
    EXPECT_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, saved));
    CHECK_INT(deletes, 2);
    key = saved;
    EXPECT_CLASS(MPI_Comm_free_keyval(&key), MPI_ERR_KEYVAL);
    CHECK_INT(destroyed[2], 1);
    EXPECT_OK(MPIX_Type_create_keyval_x(NULL, NULL, destroy, &key, &states[3]));
    EXPECT_OK(MPI_Type_free_keyval(&key));
    CHECK_INT(destroyed[3], 1);
    EXPECT_OK(MPIX_Win_create_keyval_x(NULL, NULL, NULL, &key, NULL));
    EXPECT_OK(MPI_Win_free_keyval(&key));
    EXPECT_ERR(MPIX_Comm_create_keyval_x(NULL, NULL, NULL, NULL, NULL), MPI_ERR_ARG,
               "MPIX_Comm_create_keyval_x", "keyval");

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
