/* MPI_Cancel of notification requests (MPIX_Win_notify_request, issue #18): a pending
 * request is cancelled (MPI_Test_cancelled true) and gives its claim back, so later requests
 * on the index complete with fewer notifications; a request whose notifications arrived is
 * not cancelled. Rank 0 notifies, rank 1 is the target; other ranks only take part in the
 * collective calls. */
#include "wtest.h"

#define IDX 3

/* Rank 0: `n` notifications on IDX at rank 1, between two barriers. */
static void send_notes(int rank, int n, MPI_Win win)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long one = 1;
        MPI_Win_lock_all(0, win);
        for (int i = 0; i < n; i++)
            EXPECT_OK(MPIX_Put_notify(&one, 1, MPI_LONG, 1, 0, 1, MPI_LONG, IDX, win));
        MPI_Win_unlock_all(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static int cancelled(MPI_Request *req)
{
    MPI_Status st;
    int flag = -1;
    EXPECT_OK(MPI_Wait(req, &st));
    EXPECT_OK(MPI_Test_cancelled(&st, &flag));
    return flag;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = wtest_world_rank();
    long *mem;
    MPI_Win win;
    MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Request a, b, c, d[3];
    int flag;

    /* A claims 2, B 1 more; cancelling A leaves B waiting for 1 notification only. */
    if (rank == 1) {
        EXPECT_OK(MPIX_Win_notify_request(win, IDX, 2, &a));
        EXPECT_OK(MPIX_Win_notify_request(win, IDX, 1, &b));
        EXPECT_OK(MPI_Cancel(&a));
        CHECK(cancelled(&a) == 1, "a pending notification request was not cancelled");
        EXPECT_OK(MPI_Test(&b, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "B completed without notifications");
    }
    send_notes(rank, 1, win);
    if (rank == 1) {
        CHECK(cancelled(&b) == 0, "B (completed by the one notification) reads cancelled");
        /* Its notifications arrived: cancelling it does nothing. */
        EXPECT_OK(MPIX_Win_notify_request(win, IDX, 0, &c));
        EXPECT_OK(MPI_Cancel(&c));
        CHECK(cancelled(&c) == 0, "a request that had all its notifications was cancelled");
        /* Three requests of 1; cancelling the middle one: two notifications serve the others. */
        for (int i = 0; i < 3; i++)
            EXPECT_OK(MPIX_Win_notify_request(win, IDX, 1, &d[i]));
        EXPECT_OK(MPI_Cancel(&d[1]));
    }
    send_notes(rank, 2, win);
    if (rank == 1) {
        CHECK(cancelled(&d[0]) == 0, "first request cancelled");
        CHECK(cancelled(&d[1]) == 1, "middle request not cancelled");
        CHECK(cancelled(&d[2]) == 0, "last request cancelled");
        MPI_Count v = -1;
        EXPECT_OK(MPIX_Win_notify_get_value(win, IDX, &v));
        CHECK(v == 3, "notifications received: %lld", (long long)v);
        /* A later request needs a notification beyond those three. */
        EXPECT_OK(MPIX_Win_notify_request(win, IDX, 1, &a));
        EXPECT_OK(MPI_Test(&a, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "a request completed by notifications others had");
        EXPECT_OK(MPI_Cancel(&a));
        CHECK(cancelled(&a) == 1, "the last request was not cancelled");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
