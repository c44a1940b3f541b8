/* Errors go to the right errhandler: a session's own, set at init or later; a communicator
 * made from a session group uses the errhandler given at its creation; errors of one session
 * never reach another's handler. */
#include "wtest.h"

static int calls_a, calls_b, last_code;

static void handler_a(MPI_Session *s, int *code, ...)
{
    (void)s;
    calls_a++;
    last_code = *code;
}

static void handler_b(MPI_Session *s, int *code, ...)
{
    (void)s;
    (void)code;
    calls_b++;
}

static int comm_calls;
static void comm_handler(MPI_Comm *c, int *code, ...)
{
    (void)c;
    (void)code;
    comm_calls++;
}

int main(void)
{
    MPI_Errhandler ea, eb, ec, got;
    MPI_Session a, b;
    MPI_Group g;
    MPI_Comm c;
    int n;
    MPI_Session_create_errhandler(handler_a, &ea);
    MPI_Session_create_errhandler(handler_b, &eb);
    MPI_Comm_create_errhandler(comm_handler, &ec);
    EXPECT_OK(MPI_Session_init(MPI_INFO_NULL, ea, &a));
    EXPECT_OK(MPI_Session_init(MPI_INFO_NULL, eb, &b));

    /* A bad argument on session a reaches a's handler only. */
    MPI_Session_get_nth_pset(a, MPI_INFO_NULL, 9999, &n, NULL);
    CHECK_INT(calls_a, 1);
    CHECK_INT(calls_b, 0);
    CHECK_INT(last_code & 0xffff, MPI_ERR_ARG);
    MPI_Session_call_errhandler(b, MPI_ERR_OTHER);
    CHECK_INT(calls_b, 1);
    CHECK_INT(calls_a, 1);

    /* get/set errhandler. */
    EXPECT_OK(MPI_Session_get_errhandler(a, &got));
    EXPECT_OK(MPI_Errhandler_free(&got));
    EXPECT_OK(MPI_Session_set_errhandler(a, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Session_get_pset_info(a, "app://missing", NULL), MPI_ERR_ARG);
    CHECK_INT(calls_a, 1);
    /* A communicator errhandler is not a session errhandler. */
    EXPECT_CLASS(MPI_Session_set_errhandler(a, ec), MPI_ERR_ARG);

    /* A communicator from a session group gets the errhandler given at creation. */
    MPI_Group_from_session_pset(b, "mpi://SELF", &g);
    EXPECT_OK(MPI_Comm_create_from_group(g, "weft.test.eh", MPI_INFO_NULL, ec, &c));
    MPI_Send(NULL, -1, MPI_INT, 0, 0, c);
    CHECK_INT(comm_calls, 1);
    CHECK_INT(calls_b, 1);
    MPI_Comm_free(&c);
    MPI_Group_free(&g);

    MPI_Session_finalize(&b);
    CHECK(b == MPI_SESSION_NULL, "finalize resets the handle");
    MPI_Session_finalize(&a);
    MPI_Errhandler_free(&ea);
    MPI_Errhandler_free(&eb);
    MPI_Errhandler_free(&ec);
    return wtest_finish();
}
