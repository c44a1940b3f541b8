/* Notification requests count exactly (MPIX_Win_notify_request, issue #18), on an allocated
 * window and on a created one: every rank but the last notifies the last rank K times on one
 * index, each notification after a put of its own value; the target's request for all of
 * them stays pending (MPI_Test, MPI_Testall next to a receive, MPIX_Win_notify_get_value)
 * until the very last one, held back until the target has looked, and then sees every
 * origin's data. A freed pending request keeps its claim: the next request waits beyond it. */
#include "wtest.h"

#define K 40
#define IDX 2

static int rank, size;

/* The value origin `o` puts at slot o*K + i. */
static long value(int o, int i)
{
    return 1000L * (o + 1) + i;
}

/* Origins: K notified puts each to the last rank; the last origin keeps its last one until
 * the target, having checked the request is still pending, asks for it (tag 5). */
static void origin(MPI_Win win)
{
    int target = size - 1, last = size - 2;
    EXPECT_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < K; i++) {
        if (rank == last && i == K - 1)
            EXPECT_OK(MPI_Recv(NULL, 0, MPI_BYTE, target, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        long v = value(rank, i);
        EXPECT_OK(MPIX_Put_notify(&v, 1, MPI_LONG, target, rank * K + i, 1, MPI_LONG, IDX, win));
    }
    EXPECT_OK(MPI_Win_unlock_all(win));
    /* The others have sent theirs: tell the target (tag 6). */
    EXPECT_OK(MPI_Send(NULL, 0, MPI_BYTE, target, 6, MPI_COMM_WORLD));
}

static void target(MPI_Win win, long *mem)
{
    int origins = size - 1, last = size - 2, n = origins * K, flag = 1;
    MPI_Request r, both[2];
    MPI_Count got = -1;
    EXPECT_OK(MPIX_Win_notify_request(win, IDX, n, &r));
    /* All but the last origin have finished (their tag-6 messages), the last one is held. */
    for (int o = 0; o < origins; o++)
        if (o != last)
            EXPECT_OK(MPI_Recv(NULL, 0, MPI_BYTE, o, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    /* The last origin's K-1 first puts: wait for them by the counter itself. */
    do {
        EXPECT_OK(MPIX_Win_notify_get_value(win, IDX, &got));
    } while (got < n - 1);
    CHECK(got == n - 1, "notifications before the last: %lld (want %d)", (long long)got, n - 1);
    for (int k = 0; k < 3; k++) {
        EXPECT_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0, "the request for %d completed at %d notifications", n, n - 1);
    }
    both[0] = r;
    EXPECT_OK(MPI_Irecv(NULL, 0, MPI_BYTE, last, 6, MPI_COMM_WORLD, &both[1]));
    EXPECT_OK(MPI_Testall(2, both, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag == 0, "MPI_Testall completed with %d of %d notifications", n - 1, n);
    EXPECT_OK(MPI_Send(NULL, 0, MPI_BYTE, last, 5, MPI_COMM_WORLD));
    EXPECT_OK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
    for (int o = 0; o < origins; o++)
        for (int i = 0; i < K; i++)
            CHECK(mem[o * K + i] == value(o, i), "origin %d put %d: %ld", o, i, mem[o * K + i]);
    EXPECT_OK(MPIX_Win_notify_get_value(win, IDX, &got));
    CHECK(got == n, "notifications: %lld (want %d)", (long long)got, n);
}

/* A freed pending request keeps its claim of 2: the next request (1) needs the third. */
static void freed_claim(MPI_Win win)
{
    int target = size - 1;
    if (rank == 0) {
        long v = 7;
        EXPECT_OK(MPI_Recv(NULL, 0, MPI_BYTE, target, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
        for (int i = 0; i < 2; i++)
            EXPECT_OK(MPIX_Put_notify(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, IDX + 1, win));
        EXPECT_OK(MPI_Win_unlock(target, win));
        EXPECT_OK(MPI_Send(NULL, 0, MPI_BYTE, target, 8, MPI_COMM_WORLD));
        EXPECT_OK(MPI_Recv(NULL, 0, MPI_BYTE, target, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
        EXPECT_OK(MPIX_Put_notify(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, IDX + 1, win));
        EXPECT_OK(MPI_Win_unlock(target, win));
    } else if (rank == target) {
        MPI_Request a, b;
        int flag = 1;
        EXPECT_OK(MPIX_Win_notify_request(win, IDX + 1, 2, &a));
        EXPECT_OK(MPI_Request_free(&a));
        CHECK(a == MPI_REQUEST_NULL, "freed request handle not MPI_REQUEST_NULL");
        EXPECT_OK(MPIX_Win_notify_request(win, IDX + 1, 1, &b));
        EXPECT_OK(MPI_Send(NULL, 0, MPI_BYTE, 0, 7, MPI_COMM_WORLD));
        EXPECT_OK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        EXPECT_OK(MPI_Test(&b, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0, "a request completed with the notifications a freed one claimed");
        EXPECT_OK(MPI_Send(NULL, 0, MPI_BYTE, 0, 9, MPI_COMM_WORLD));
        EXPECT_OK(MPI_Wait(&b, MPI_STATUS_IGNORE));
    }
}

static void run(int create)
{
    long *mem;
    MPI_Win win;
    MPI_Aint bytes = (MPI_Aint)size * K * sizeof(long);
    if (create) {
        EXPECT_OK(MPI_Alloc_mem(bytes, MPI_INFO_NULL, &mem));
        memset(mem, 0, bytes);
        EXPECT_OK(MPI_Win_create(mem, bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else {
        EXPECT_OK(MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        memset(mem, 0, bytes);
    }
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1)
        target(win, mem);
    else
        origin(win);
    MPI_Barrier(MPI_COMM_WORLD);
    freed_claim(win);
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_Win_free(&win));
    if (create)
        EXPECT_OK(MPI_Free_mem(mem));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    rank = wtest_world_rank();
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_errors_return();
    if (size < 2) {
        printf("SKIP: needs 2 ranks\n");
        MPI_Finalize();
        return 77;
    }
    run(0);
    run(1);
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
