/* Generalized requests: MPI_Grequest_start/complete, MPIX_Grequest_start with poll_fn and
 * wait_fn (either NULL), request classes (Waitall over 16 requests of one class calls wait_fn
 * once with all 16 states), MPI_Testall not calling query_fn over and over, free/cancel
 * callbacks, MPIX_Request_is_complete, MPIX_Stream_progress. Callbacks are counted. */
#include "pt2pt_util.h"

static int n_query, n_free, n_cancel, n_poll, n_wait, wait_count_seen, last_cancel_complete;

struct task {
    MPI_Request req;
    int polls_left; /* the task "finishes" after this many polls */
    int done;
    int value;
};

static int query_fn(void *extra, MPI_Status *status)
{
    struct task *t = extra;
    n_query++;
    MPI_Status_set_elements(status, MPI_INT, t ? t->value : 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = 3;
    status->MPI_TAG = 44;
    return MPI_SUCCESS;
}
static int free_fn(void *extra)
{
    (void)extra;
    n_free++;
    return MPI_SUCCESS;
}
static int cancel_fn(void *extra, int complete)
{
    (void)extra;
    n_cancel++;
    last_cancel_complete = complete;
    return MPI_SUCCESS;
}
static int poll_fn(void *extra, MPI_Status *status)
{
    struct task *t = extra;
    (void)status;
    n_poll++;
    if (!t->done && --t->polls_left <= 0) {
        t->done = 1;
        MPI_Grequest_complete(t->req);
    }
    return MPI_SUCCESS;
}
/* Completes every task it is given (they stand for I/O the OS finishes). */
static int wait_fn(int count, void **states, double timeout, MPI_Status *status)
{
    (void)timeout;
    (void)status;
    n_wait++;
    wait_count_seen = count;
    for (int i = 0; i < count; i++) {
        struct task *t = states[i];
        if (!t->done) {
            t->done = 1;
            MPI_Grequest_complete(t->req);
        }
    }
    return MPI_SUCCESS;
}

static void reset(void) { n_query = n_free = n_cancel = n_poll = n_wait = wait_count_seen = 0; }

int main(int argc, char **argv)
{
    MPI_Status st;
    int flag, i, count;
    struct task tasks[16];
    MPI_Request reqs[16];
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    /* 1. The standard form: completed by the program, query then free at MPI_Wait. */
    reset();
    struct task t0 = {0};
    t0.value = 5;
    EXPECT_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &t0, &t0.req));
    EXPECT_OK(MPI_Test(&t0.req, &flag, &st));
    CHECK_INT(flag, 0);
    CHECK_INT(MPIX_Request_is_complete(t0.req), 0);
    EXPECT_OK(MPI_Grequest_complete(t0.req));
    CHECK_INT(MPIX_Request_is_complete(t0.req), 1);
    CHECK_INT(n_query, 0);
    EXPECT_OK(MPI_Request_get_status(t0.req, &flag, &st));
    CHECK_INT(flag, 1);
    CHECK_INT(n_query, 1); /* get_status asks query_fn for the status */
    CHECK_INT(n_free, 0);
    EXPECT_OK(MPI_Wait(&t0.req, &st));
    CHECK(t0.req == MPI_REQUEST_NULL, "completed request is freed");
    CHECK_INT(n_query, 2);
    CHECK_INT(n_free, 1);
    CHECK_INT(st.MPI_SOURCE, 3);
    CHECK_INT(st.MPI_TAG, 44);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, 5);
    EXPECT_ERR(MPI_Grequest_complete(t0.req), MPI_ERR_REQUEST, "MPI_Grequest_complete", "request");

    /* 2. poll_fn only (wait_fn NULL): MPI_Wait drives poll_fn until the task completes. */
    reset();
    struct task t1 = {0};
    t1.polls_left = 10;
    t1.value = 1;
    EXPECT_OK(MPIX_Grequest_start(query_fn, free_fn, cancel_fn, poll_fn, NULL, &t1, &t1.req));
    EXPECT_OK(MPI_Wait(&t1.req, &st));
    CHECK_INT(n_poll, 10);
    CHECK_INT(n_query, 1);
    CHECK_INT(n_free, 1);
    CHECK_INT(n_wait, 0);

    /* 3. poll_fn driven by MPIX_Stream_progress and by progress on other requests. */
    reset();
    t1.polls_left = 3;
    t1.done = 0;
    EXPECT_OK(MPIX_Grequest_start(query_fn, free_fn, cancel_fn, poll_fn, NULL, &t1, &t1.req));
    EXPECT_OK(MPIX_Stream_progress(MPIX_STREAM_NULL));
    CHECK_INT(n_poll, 1);
    int x = 0, y = 0;
    MPI_Request other;
    EXPECT_OK(MPI_Irecv(&y, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &other));
    EXPECT_OK(MPI_Test(&other, &flag, MPI_STATUS_IGNORE)); /* progress on another request */
    CHECK_INT(flag, 0);
    CHECK_INT(n_poll, 2);
    EXPECT_OK(MPI_Send(&x, 1, MPI_INT, 0, 9, MPI_COMM_SELF));
    EXPECT_OK(MPI_Wait(&other, MPI_STATUS_IGNORE));
    EXPECT_OK(MPIX_Stream_progress(MPIX_STREAM_NULL));
    CHECK_INT(t1.done, 1);
    CHECK_INT(MPIX_Request_is_complete(t1.req), 1);
    int polls = n_poll;
    EXPECT_OK(MPIX_Stream_progress(MPIX_STREAM_NULL));
    CHECK_INT(n_poll, polls); /* a completed request is no longer polled */
    EXPECT_OK(MPI_Wait(&t1.req, MPI_STATUS_IGNORE));
    EXPECT_ERR(MPIX_Stream_progress((MPIX_Stream)WTEST_GARBAGE), MPI_ERR_ARG, "MPIX_Stream_progress", "stream");

    /* 4. A class with wait_fn and no poll_fn: MPI_Waitall over 16 requests makes ONE wait_fn
     * call with all 16 states. */
    reset();
    MPIX_Grequest_class cls;
    EXPECT_OK(MPIX_Grequest_class_create(query_fn, free_fn, cancel_fn, NULL, wait_fn, &cls));
    for (i = 0; i < 16; i++) {
        memset(&tasks[i], 0, sizeof tasks[i]);
        tasks[i].value = i;
        EXPECT_OK(MPIX_Grequest_class_allocate(cls, &tasks[i], &tasks[i].req));
        reqs[i] = tasks[i].req;
    }
    MPI_Status sts[16];
    EXPECT_OK(MPI_Waitall(16, reqs, sts));
    CHECK_INT(n_wait, 1);
    CHECK_INT(wait_count_seen, 16);
    CHECK_INT(n_query, 16);
    CHECK_INT(n_free, 16);
    for (i = 0; i < 16; i++) {
        CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d freed", i);
        MPI_Get_count(&sts[i], MPI_INT, &count);
        CHECK_INT(count, i);
    }

    /* 5. Waitany / Waitsome over a class also hand all states to one wait_fn call. */
    reset();
    for (i = 0; i < 8; i++) {
        memset(&tasks[i], 0, sizeof tasks[i]);
        EXPECT_OK(MPIX_Grequest_class_allocate(cls, &tasks[i], &tasks[i].req));
        reqs[i] = tasks[i].req;
    }
    int index = -1, outcount = 0, indices[8];
    EXPECT_OK(MPI_Waitany(8, reqs, &index, &st));
    CHECK_INT(n_wait, 1);
    CHECK_INT(wait_count_seen, 8);
    CHECK(index >= 0 && index < 8, "index %d", index);
    EXPECT_OK(MPI_Waitsome(8, reqs, &outcount, indices, sts));
    CHECK_INT(outcount, 7); /* the rest completed in the same wait_fn call */
    CHECK_INT(n_wait, 1);
    CHECK_INT(n_query, 8);

    /* 6. MPI_Testall does not call query_fn on completed requests while others are pending. */
    reset();
    for (i = 0; i < 4; i++) {
        memset(&tasks[i], 0, sizeof tasks[i]);
        EXPECT_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &tasks[i], &tasks[i].req));
        reqs[i] = tasks[i].req;
    }
    EXPECT_OK(MPI_Grequest_complete(reqs[0]));
    EXPECT_OK(MPI_Grequest_complete(reqs[1]));
    for (i = 0; i < 100; i++) {
        EXPECT_OK(MPI_Testall(4, reqs, &flag, MPI_STATUSES_IGNORE));
        CHECK_INT(flag, 0);
    }
    CHECK_INT(n_query, 0);
    EXPECT_OK(MPI_Grequest_complete(reqs[2]));
    EXPECT_OK(MPI_Grequest_complete(reqs[3]));
    EXPECT_OK(MPI_Testall(4, reqs, &flag, MPI_STATUSES_IGNORE));
    CHECK_INT(flag, 1);
    CHECK_INT(n_query, 4);
    CHECK_INT(n_free, 4);

    /* 7. Free before complete: free_fn runs at MPI_Grequest_complete, no query_fn. */
    reset();
    EXPECT_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &t0, &t0.req));
    MPI_Request keep = t0.req;
    EXPECT_OK(MPI_Request_free(&t0.req));
    CHECK_INT(n_free, 0);
    EXPECT_OK(MPI_Grequest_complete(keep));
    CHECK_INT(n_free, 1);
    CHECK_INT(n_query, 0);

    /* 8. Cancel calls cancel_fn with complete = whether MPI_Grequest_complete was called. */
    reset();
    EXPECT_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &t0, &t0.req));
    EXPECT_OK(MPI_Cancel(&t0.req));
    CHECK_INT(n_cancel, 1);
    CHECK_INT(last_cancel_complete, 0);
    EXPECT_OK(MPI_Grequest_complete(t0.req));
    EXPECT_OK(MPI_Cancel(&t0.req));
    CHECK_INT(n_cancel, 2);
    CHECK_INT(last_cancel_complete, 1);
    EXPECT_OK(MPI_Wait(&t0.req, MPI_STATUS_IGNORE));

    /* 9. Both poll_fn and wait_fn NULL, and NULL query/free/cancel: completes when told. */
    reset();
    MPI_Request r;
    EXPECT_OK(MPIX_Grequest_start(NULL, NULL, NULL, NULL, NULL, NULL, &r));
    EXPECT_OK(MPI_Grequest_complete(r));
    EXPECT_OK(MPI_Wait(&r, &st));

    /* 10. Bad handles. */
    EXPECT_ERR(MPIX_Grequest_class_allocate((MPIX_Grequest_class)WTEST_GARBAGE, NULL, &r), MPI_ERR_ARG, "MPIX_Grequest_class_allocate", "greq_class");
    EXPECT_ERR(MPI_Grequest_complete((MPI_Request)WTEST_GARBAGE), MPI_ERR_REQUEST, "MPI_Grequest_complete", "request");
    EXPECT_ERR(MPI_Grequest_complete(MPI_REQUEST_NULL), MPI_ERR_REQUEST, "MPI_Grequest_complete", "request");
    EXPECT_ERR(MPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, NULL), MPI_ERR_ARG, "MPI_Grequest_start", "request");
    CHECK_INT(MPIX_Request_is_complete(MPI_REQUEST_NULL), 1);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
