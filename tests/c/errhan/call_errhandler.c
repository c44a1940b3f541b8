/* MPI_Comm_call_errhandler runs the communicator's errhandler with the given code. */
#include "wtest.h"

static int calls = 0, last_code = -1;
static MPI_Comm last_comm = MPI_COMM_NULL;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_comm = *comm;
    last_code = *code;
}

int main(int argc, char **argv)
{
    MPI_Errhandler eh;
    int uclass = -1, ucode = -1;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    EXPECT_OK(MPI_Comm_create_errhandler(handler, &eh));
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));

    EXPECT_OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER));
    CHECK_INT(calls, 1);
    CHECK_INT(last_code, MPI_ERR_OTHER);
    CHECK(last_comm == MPI_COMM_WORLD, "handler saw %p", (void *)last_comm);

    /* A user-defined code reaches the handler unchanged. */
    EXPECT_OK(MPI_Add_error_class(&uclass));
    EXPECT_OK(MPI_Add_error_code(uclass, &ucode));
    EXPECT_OK(MPI_Add_error_string(ucode, "raised by the test"));
    EXPECT_OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, ucode));
    CHECK_INT(calls, 2);
    CHECK_INT(last_code, ucode);
    EXPECT_OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, uclass));
    CHECK_INT(calls, 3);
    CHECK_INT(last_code, uclass);

    /* On SELF with the user handler. */
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
    EXPECT_OK(MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_TAG));
    CHECK_INT(calls, 4);
    CHECK_INT(last_code, MPI_ERR_TAG);
    CHECK(last_comm == MPI_COMM_SELF, "handler saw %p", (void *)last_comm);
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    /* With MPI_ERRORS_RETURN the call returns MPI_SUCCESS: the handler was called. */
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT_OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER));
    CHECK_INT(calls, 4);

    /* Mistakes: an invalid code, an invalid communicator. */
    EXPECT_ERR(MPI_Comm_call_errhandler(MPI_COMM_WORLD, -5), MPI_ERR_ARG, "MPI_Comm_call_errhandler",
               "errorcode");
    EXPECT_ERR(MPI_Comm_call_errhandler((MPI_Comm)WTEST_GARBAGE, MPI_ERR_OTHER), MPI_ERR_COMM,
               "MPI_Comm_call_errhandler", "comm");
    EXPECT_ERR(MPI_Comm_call_errhandler(MPI_COMM_NULL, MPI_ERR_OTHER), MPI_ERR_COMM,
               "MPI_Comm_call_errhandler", "comm");
    CHECK_INT(calls, 4);

    EXPECT_OK(MPI_Errhandler_free(&eh));
    EXPECT_OK(MPI_Remove_error_string(ucode));
    EXPECT_OK(MPI_Remove_error_code(ucode));
    EXPECT_OK(MPI_Remove_error_class(uclass));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
