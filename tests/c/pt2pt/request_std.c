/* MPI_Cancel of a generalized request returns the error its cancel_fn returns, and the
 * request-status queries give the whole empty status (MPI_ERROR = MPI_SUCCESS included) for
 * null requests. */
#include "wtest.h"

static int cancel_calls = 0;

static int query(void *state, MPI_Status *s)
{
    (void)state;
    MPI_Status_set_elements(s, MPI_BYTE, 0);
    MPI_Status_set_cancelled(s, 0);
    s->MPI_SOURCE = MPI_UNDEFINED;
    s->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int free_fn(void *state) { (void)state; return MPI_SUCCESS; }
static int cancel_fn(void *state, int complete)
{
    (void)complete;
    cancel_calls++;
    return *(int *)state;
}

static void dirty(MPI_Status *s)
{
    s->MPI_SOURCE = 11;
    s->MPI_TAG = 12;
    s->MPI_ERROR = MPI_ERR_OTHER;
}

static void check_empty(const MPI_Status *s, const char *what)
{
    int count = -1, cancelled = -1;
    CHECK(s->MPI_SOURCE == MPI_ANY_SOURCE, "%s: source %d", what, s->MPI_SOURCE);
    CHECK(s->MPI_TAG == MPI_ANY_TAG, "%s: tag %d", what, s->MPI_TAG);
    CHECK(s->MPI_ERROR == MPI_SUCCESS, "%s: error %d", what, s->MPI_ERROR);
    EXPECT_OK(MPI_Get_count(s, MPI_BYTE, &count));
    CHECK(count == 0, "%s: count %d", what, count);
    EXPECT_OK(MPI_Test_cancelled(s, &cancelled));
    CHECK(cancelled == 0, "%s: cancelled", what);
}

int main(int argc, char **argv)
{
    MPI_Request greq, reqs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st, sts[3];
    int rc, cls = -1, state = MPI_ERR_BUFFER, index = -5, flag = -5, outcount = -5, ind[3];

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    /* cancel_fn's error is MPI_Cancel's. */
    EXPECT_OK(MPI_Grequest_start(query, free_fn, cancel_fn, &state, &greq));
    rc = MPI_Cancel(&greq);
    CHECK(rc != MPI_SUCCESS, "MPI_Cancel succeeded although cancel_fn failed");
    EXPECT_OK(MPI_Error_class(rc, &cls));
    CHECK_INT(cls, MPI_ERR_BUFFER);
    CHECK_INT(cancel_calls, 1);
    state = MPI_SUCCESS;
    EXPECT_OK(MPI_Cancel(&greq));
    CHECK_INT(cancel_calls, 2);
    EXPECT_OK(MPI_Grequest_complete(greq));
    EXPECT_OK(MPI_Wait(&greq, MPI_STATUS_IGNORE));

    /* Only null requests: flag true, MPI_UNDEFINED index, the empty status. */
    dirty(&st);
    EXPECT_OK(MPI_Request_get_status_any(3, reqs, &index, &flag, &st));
    CHECK_INT(index, MPI_UNDEFINED);
    CHECK_INT(flag, 1);
    check_empty(&st, "MPI_Request_get_status_any");
    dirty(&st);
    EXPECT_OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
    CHECK_INT(flag, 1);
    check_empty(&st, "MPI_Request_get_status");
    EXPECT_OK(MPI_Request_get_status_some(3, reqs, &outcount, ind, sts));
    CHECK_INT(outcount, MPI_UNDEFINED);
    for (int i = 0; i < 3; i++)
        dirty(&sts[i]);
    flag = -5;
    EXPECT_OK(MPI_Request_get_status_all(3, reqs, &flag, sts));
    CHECK_INT(flag, 1);
    for (int i = 0; i < 3; i++)
        check_empty(&sts[i], "MPI_Request_get_status_all");
    dirty(&st);
    EXPECT_OK(MPI_Waitany(3, reqs, &index, &st));
    CHECK_INT(index, MPI_UNDEFINED);
    check_empty(&st, "MPI_Waitany");
    dirty(&st);
    EXPECT_OK(MPI_Wait(&reqs[0], &st));
    check_empty(&st, "MPI_Wait");

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
