/* A user errhandler may call MPI, including functions that fail and so run errhandlers
 * again, and may replace the errhandler of its communicator: no lock is held while it runs. */
#include "wtest.h"

static int depth = 0, max_depth = 0, calls = 0, inner_class = -1;
static char seen_name[MPI_MAX_OBJECT_NAME];

static void handler(MPI_Comm *comm, int *code, ...)
{
    int len, cls = -1, rc;
    MPI_Info info;
    calls++;
    depth++;
    if (depth > max_depth)
        max_depth = depth;
    MPI_Comm_get_name(*comm, seen_name, &len);
    MPI_Error_class(*code, &cls);
    if (MPI_Info_create(&info) == MPI_SUCCESS)
        MPI_Info_free(&info);
    if (depth < 3) {
        /* Fails on the same communicator: this handler runs again, one level deeper. */
        rc = MPI_Comm_rank(*comm, NULL);
        MPI_Error_class(rc, &inner_class);
    }
    depth--;
}

static int replaced = 0;
static void replacing_handler(MPI_Comm *comm, int *code, ...)
{
    (void)code;
    replaced++;
    MPI_Comm_set_errhandler(*comm, MPI_ERRORS_RETURN);
}

int main(int argc, char **argv)
{
    MPI_Errhandler eh, eh2, got;
    int rc, cls = -1;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    EXPECT_OK(MPI_Comm_create_errhandler(handler, &eh));
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));

    rc = MPI_Comm_size(MPI_COMM_WORLD, NULL);
    CHECK_INT(calls, 3);
    CHECK_INT(max_depth, 3);
    CHECK_INT(depth, 0);
    CHECK_INT(inner_class, MPI_ERR_ARG);
    CHECK_STR(seen_name, "MPI_COMM_WORLD");
    EXPECT_OK(MPI_Error_class(rc, &cls));
    CHECK_INT(cls, MPI_ERR_ARG);

    /* A handler that replaces itself: it runs once, then errors return. */
    EXPECT_OK(MPI_Comm_create_errhandler(replacing_handler, &eh2));
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh2));
    EXPECT_OK(MPI_Errhandler_free(&eh2));
    rc = MPI_Comm_size(MPI_COMM_WORLD, NULL);
    CHECK_INT(replaced, 1);
    CHECK(rc != MPI_SUCCESS, "MPI_Comm_size(NULL) succeeded");
    rc = MPI_Comm_size(MPI_COMM_WORLD, NULL);
    CHECK_INT(replaced, 1);
    EXPECT_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == MPI_ERRORS_RETURN, "errhandler after replacement: %p", (void *)got);

    EXPECT_OK(MPI_Errhandler_free(&eh));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
