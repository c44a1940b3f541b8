/* A communicator freed by a callback while a blocking receive on it is waiting: the standard
 * says pending operations complete normally after MPI_Comm_free. Rank 0 waits in MPI_Recv on
 * a duplicate of MPI_COMM_WORLD; a generalized request's poll_fn (called by the progress
 * engine during that wait) frees the duplicate; the message still arrives, with its data and
 * status, and the library keeps working (further duplicates, frees and messages). */
#include "pt2pt_util.h"

static MPI_Comm dup;
static int polls, freed_in_poll;
static MPI_Request greq;

static int query_fn(void *extra, MPI_Status *status)
{
    (void)extra;
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    return MPI_SUCCESS;
}
static int free_fn(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}
static int cancel_fn(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}
static int poll_fn(void *extra, MPI_Status *status)
{
    (void)extra;
    (void)status;
    if (++polls == 1) {
        freed_in_poll = MPI_Comm_free(&dup) == MPI_SUCCESS && dup == MPI_COMM_NULL;
        MPI_Grequest_complete(greq);
    }
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int rank, size, round;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        FAIL("needs 2 ranks");
    for (round = 0; round < 3; round++) {
        int value = -1, go = 1;
        MPI_Status st;
        EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        if (rank == 0) {
            polls = 0;
            freed_in_poll = 0;
            EXPECT_OK(MPIX_Grequest_start(query_fn, free_fn, cancel_fn, poll_fn, NULL, NULL,
                                          &greq));
            /* Rank 1 sends on the duplicate only after this, so the receive must wait. */
            EXPECT_OK(MPI_Send(&go, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
            EXPECT_OK(MPI_Recv(&value, 1, MPI_INT, 1, 7 + round, dup, &st));
            CHECK_INT(freed_in_poll, 1);
            CHECK_INT(value, 1000 + round);
            CHECK_INT(st.MPI_SOURCE, 1);
            CHECK_INT(st.MPI_TAG, 7 + round);
            CHECK(dup == MPI_COMM_NULL, "the callback's free set the handle to MPI_COMM_NULL");
            EXPECT_OK(MPI_Wait(&greq, MPI_STATUS_IGNORE));
        } else {
            value = 1000 + round;
            EXPECT_OK(MPI_Recv(&go, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            EXPECT_OK(MPI_Send(&value, 1, MPI_INT, 0, 7 + round, dup));
            EXPECT_OK(MPI_Comm_free(&dup));
        }
    }
    /* The freed duplicates' resources are given back: many more dup/free cycles and traffic
     * on a fresh duplicate work. */
    for (round = 0; round < 200; round++) {
        MPI_Comm c;
        int v = rank, w = -1;
        EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        EXPECT_OK(MPI_Sendrecv(&v, 1, MPI_INT, 1 - rank, 1, &w, 1, MPI_INT, 1 - rank, 1, c,
                               MPI_STATUS_IGNORE));
        CHECK_INT(w, 1 - rank);
        EXPECT_OK(MPI_Comm_free(&c));
    }
    MPI_Finalize();
    return wtest_finish();
}
