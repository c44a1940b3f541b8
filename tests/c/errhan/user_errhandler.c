/* A user communicator errhandler runs with the failing communicator and the error code, is
 * counted, can be got back, set on another communicator and freed while in use. */
#include "wtest.h"

static int calls = 0, last_code = -1;
static MPI_Comm last_comm = MPI_COMM_NULL;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_comm = *comm;
    last_code = *code;
}

/* A handler that rewrites the code: the failing call returns what it left (MPICH does;
 * MPICH's io/fileerrret relies on it). */
static int rewrite_to = MPI_SUCCESS;
static void rewriting_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    *code = rewrite_to;
}

static int other_calls = 0;
static void other_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    other_calls++;
}

int main(int argc, char **argv)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, eh2 = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
    MPI_Errhandler copy;
    int rc, cls = -1, v = -9;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    EXPECT_OK(MPI_Comm_create_errhandler(handler, &eh));
    CHECK(eh != MPI_ERRHANDLER_NULL && eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_RETURN &&
              eh != MPI_ERRORS_ABORT,
          "new errhandler handle %p", (void *)eh);
    EXPECT_OK(MPI_Comm_create_errhandler(other_handler, &eh2));
    CHECK(eh2 != eh, "two errhandlers share a handle");
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));

    /* The handler runs once per failing call, with the code the call returns. */
    rc = MPI_Comm_size(MPI_COMM_WORLD, NULL);
    CHECK_INT(calls, 1);
    CHECK(last_comm == MPI_COMM_WORLD, "handler saw comm %p", (void *)last_comm);
    CHECK_INT(last_code, rc);
    EXPECT_OK(MPI_Error_class(last_code, &cls));
    CHECK_INT(cls, MPI_ERR_ARG);
    CHECK_CONTAINS(wtest_string(last_code), "MPI_Comm_size");

    rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v, &cls);
    CHECK_INT(calls, 2);
    CHECK_INT(last_code, rc);
    EXPECT_OK(MPI_Error_class(last_code, &cls));
    CHECK_INT(cls, MPI_ERR_KEYVAL);

    /* Successful calls do not run it. */
    EXPECT_OK(MPI_Comm_size(MPI_COMM_WORLD, &v));
    CHECK_INT(calls, 2);
    CHECK_INT(other_calls, 0);

    /* MPI_Comm_get_errhandler gives a handle for the same errhandler: set on SELF it runs
     * the same function, with MPI_COMM_SELF. */
    EXPECT_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got != MPI_ERRHANDLER_NULL && got != MPI_ERRORS_RETURN && got != MPI_ERRORS_ARE_FATAL,
          "got %p", (void *)got);
    /* ... the very handle it was created with (programs compare them: MPICH's commerrf). */
    CHECK(got == eh, "MPI_Comm_get_errhandler gave %p, the errhandler is %p", (void *)got, (void *)eh);
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, got));
    EXPECT_OK(MPI_Errhandler_free(&got));
    CHECK(got == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not null the handle");
    rc = MPI_Comm_rank(MPI_COMM_SELF, NULL);
    CHECK_INT(calls, 3);
    CHECK(last_comm == MPI_COMM_SELF, "handler saw comm %p", (void *)last_comm);
    CHECK_INT(last_code, rc);

    /* Freeing the handle does not take the errhandler off the communicators using it. */
    copy = eh;
    EXPECT_OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not null the handle");
    rc = MPI_Comm_size(MPI_COMM_WORLD, NULL);
    CHECK_INT(calls, 4);
    CHECK_INT(last_code, rc);
    /* ... but the freed handle is no longer valid. */
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    EXPECT_ERR(MPI_Errhandler_free(&copy), MPI_ERR_ARG, "MPI_Errhandler_free", "errhandler");
    CHECK_INT(calls, 4);
    /* With every handle freed, getting it from the communicator using it gives a valid
     * handle again, which is freed once. */
    EXPECT_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, got));
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    copy = got;
    EXPECT_OK(MPI_Errhandler_free(&got));
    EXPECT_ERR(MPI_Errhandler_free(&copy), MPI_ERR_ARG, "MPI_Errhandler_free", "errhandler");

    /* Replacing the errhandler: the new one runs, the old one does not. */
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh2));
    rc = MPI_Comm_size(MPI_COMM_WORLD, NULL);
    CHECK_INT(calls, 4);
    CHECK_INT(other_calls, 1);
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT_OK(MPI_Errhandler_free(&eh2));
    rc = MPI_Comm_size(MPI_COMM_WORLD, NULL);
    CHECK_INT(other_calls, 1);
    CHECK(rc != MPI_SUCCESS, "MPI_Comm_size(NULL) succeeded");

    /* The call returns the code the handler left: MPI_SUCCESS, or another valid code. */
    EXPECT_OK(MPI_Comm_create_errhandler(rewriting_handler, &eh));
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    rewrite_to = MPI_SUCCESS;
    rc = MPI_Comm_size(MPI_COMM_WORLD, NULL);
    CHECK_INT(rc, MPI_SUCCESS);
    rewrite_to = MPI_ERR_OTHER;
    rc = MPI_Comm_size(MPI_COMM_WORLD, NULL);
    CHECK_INT(rc, MPI_ERR_OTHER);
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT_OK(MPI_Errhandler_free(&eh));

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
