/* A communicator derived before the program chose any errhandler (MPI_Comm_dup,
 * MPI_Comm_split of MPI_COMM_WORLD while it still had its initial one) sends its errors
 * where errors without an object go, decided when they happen: after
 * MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) they are returned, as MPICH
 * does and its errors/comm/..._nullarg tests expect (they aborted with "newcomm=NULL").
 * Once an errhandler is set on a communicator, its descendants inherit it.
 *
 * MPI_Comm_free discards messages sent on the communicator that were never received and
 * says so (MPICH's errors/comm/unmatched), so a later communicator with the same context id
 * does not see them. */
#include "wtest.h"

static int calls = 0;
static void count_handler(MPI_Comm *c, int *code, ...)
{
    (void)c;
    (void)code;
    calls++;
}

int main(int argc, char **argv)
{
    int rank, size;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Derived while MPI_COMM_WORLD has its initial errhandler. */
    MPI_Comm dup, split, scomm;
    MPI_Group group;
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    EXPECT_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split));
    EXPECT_OK(MPI_Comm_dup(split, &scomm)); /* a grandchild */
    EXPECT_OK(MPI_Comm_group(dup, &group));
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    EXPECT_OK(MPI_Comm_get_errhandler(dup, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "a duplicate of MPI_COMM_WORLD starts with MPI_ERRORS_ARE_FATAL");

    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT_ERR(MPI_Comm_split(dup, 0, rank, NULL), MPI_ERR_ARG, "MPI_Comm_split", "newcomm");
    EXPECT_ERR(MPI_Comm_create(dup, group, NULL), MPI_ERR_ARG, "MPI_Comm_create", "newcomm");
    EXPECT_ERR(MPI_Comm_create_group(dup, group, 10, NULL), MPI_ERR_ARG, "MPI_Comm_create_group",
               "newcomm");
    EXPECT_ERR(MPI_Comm_split_type(scomm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, NULL),
               MPI_ERR_ARG, "MPI_Comm_split_type", "newcomm");
    EXPECT_ERR(MPI_Comm_dup(split, NULL), MPI_ERR_ARG, "MPI_Comm_dup", "newcomm");

    /* MPI_COMM_SELF's errhandler, once set, is the default (MPI 4). */
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Errhandler counting;
    EXPECT_OK(MPI_Comm_create_errhandler(count_handler, &counting));
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, counting));
    int r = MPI_Comm_split(dup, 0, rank, NULL);
    CHECK(r != MPI_SUCCESS, "MPI_Comm_split(newcomm=NULL) succeeded");
    CHECK_INT(calls, 1);
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    /* A communicator whose errhandler was set passes it on: the duplicate keeps counting. */
    MPI_Comm counted, counted_dup;
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &counted));
    EXPECT_OK(MPI_Comm_set_errhandler(counted, counting));
    EXPECT_OK(MPI_Comm_dup(counted, &counted_dup));
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    calls = 0;
    r = MPI_Comm_split(counted_dup, 0, rank, NULL);
    CHECK(r != MPI_SUCCESS, "MPI_Comm_split(newcomm=NULL) succeeded");
    CHECK_INT(calls, 1);
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    /* Unmatched messages at MPI_Comm_free. */
    if (size >= 2) {
        MPI_Comm c;
        EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        EXPECT_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
        int v = 42;
        if (rank == 0)
            EXPECT_OK(MPI_Send(&v, 1, MPI_INT, 1, 7, c));
        EXPECT_OK(MPI_Barrier(c));
        int rc = MPI_Comm_free(&c);
        if (rank == 1) {
            EXPECT_ERR(rc, MPI_ERR_OTHER, "MPI_Comm_free", "never received");
        } else {
            EXPECT_OK(rc);
        }
        CHECK(c == MPI_COMM_NULL, "MPI_Comm_free left the handle");
        /* The next communicator (likely the same context id) sees nothing. */
        EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        int flag = -1;
        MPI_Status st;
        EXPECT_OK(MPI_Barrier(c));
        EXPECT_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &flag, &st));
        CHECK_INT(flag, 0);
        EXPECT_OK(MPI_Comm_free(&c));
    }

    EXPECT_OK(MPI_Errhandler_free(&counting));
    EXPECT_OK(MPI_Group_free(&group));
    EXPECT_OK(MPI_Comm_free(&counted_dup));
    EXPECT_OK(MPI_Comm_free(&counted));
    EXPECT_OK(MPI_Comm_free(&scomm));
    EXPECT_OK(MPI_Comm_free(&split));
    EXPECT_OK(MPI_Comm_free(&dup));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
