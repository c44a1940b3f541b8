/* Seed 004's RMA proposals (issue 18), at 2+ ranks:
 * - window info mpi_win_scope / mpi_win_order / mpi_assert_accumulate_intrinsic reported;
 * - MPIX_Win_dup_with_info: own info, shared locks and epochs, local free;
 * - MPIX_Win_op_intrinsic true/false checked against what accumulates do under the assertion;
 * - intrinsic (atomic) accumulates under contention from every rank, mixed with the mutex
 *   path on 16-byte elements;
 * - ordered put-then-flag without flush, read by the target 100000 times;
 * - MPIX_Rrput: request completion means remote completion (seen by the target after a send);
 * - thread-scope flush: a slow thread's pending epoch does not delay another thread's flush;
 * - notification requests mixed with point-to-point requests in one MPI_Waitall. */
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include "wtest.h"

static int rank, size;

static const char *info_value(MPI_Win win, const char *key)
{
    static char v[MPI_MAX_INFO_VAL + 1];
    MPI_Info info;
    int flag = 0;
    EXPECT_OK(MPI_Win_get_info(win, &info));
    EXPECT_OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    EXPECT_OK(MPI_Info_free(&info));
    if (!flag)
        v[0] = 0;
    return v;
}

static MPI_Info info1(const char *k, const char *v)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, k, v);
    return info;
}

static void dup_and_info(void)
{
    long *mem;
    MPI_Win win, dup;
    MPI_Info ordered = info1("mpi_win_order", "true");
    EXPECT_OK(MPI_Win_allocate(64, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_STR(info_value(win, "mpi_win_scope"), "process");
    CHECK_STR(info_value(win, "mpi_win_order"), "false");
    CHECK_STR(info_value(win, "mpi_assert_accumulate_intrinsic"), "false");
    for (int i = 0; i < 8; i++)
        mem[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    /* Local: only rank 0 duplicates and frees (a collective free would hang). */
    if (rank == 0) {
        EXPECT_OK(MPIX_Win_dup_with_info(win, ordered, &dup));
        EXPECT_OK(MPI_Win_set_errhandler(dup, MPI_ERRORS_RETURN));
        CHECK_STR(info_value(dup, "mpi_win_order"), "true");
        CHECK_STR(info_value(win, "mpi_win_order"), "false");
        int flavor_ok = 0;
        int *flavor;
        EXPECT_OK(MPI_Win_get_attr(dup, MPI_WIN_CREATE_FLAVOR, &flavor, &flavor_ok));
        CHECK(flavor_ok && *flavor == MPI_WIN_FLAVOR_ALLOCATE, "dup flavor");
        /* Shared synchronisation state: a lock taken on the parent holds on the dup. */
        EXPECT_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        EXPECT_ERR(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, dup), MPI_ERR_RMA_SYNC, "MPI_Win_lock", NULL);
        long v = 42;
        EXPECT_OK(MPI_Put(&v, 1, MPI_LONG, 1, 3, 1, MPI_LONG, dup));
        EXPECT_OK(MPI_Win_flush(1, dup));
        EXPECT_ERR(MPI_Win_free(&dup), MPI_ERR_RMA_SYNC, "MPI_Win_free", NULL);
        EXPECT_OK(MPI_Win_unlock(1, dup));
        EXPECT_ERR(MPI_Win_unlock(1, win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock", NULL);
        EXPECT_OK(MPI_Win_free(&dup));
        CHECK(dup == MPI_WIN_NULL, "dup not freed");
        EXPECT_ERR(MPIX_Win_dup_with_info(MPI_WIN_NULL, MPI_INFO_NULL, &dup), MPI_ERR_WIN, "MPIX_Win_dup_with_info", NULL);
        EXPECT_ERR(MPIX_Win_dup_with_info(win, MPI_INFO_NULL, NULL), MPI_ERR_ARG, "MPIX_Win_dup_with_info", NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1)
        CHECK(mem[3] == 42, "put through the dup: %ld", mem[3]);
    EXPECT_OK(MPI_Win_free(&win));

    /* Scope and order set at creation are reported. */
    MPI_Info scope = info1("mpi_win_scope", "thread");
    MPI_Info_set(scope, "mpi_win_order", "true");
    EXPECT_OK(MPI_Win_allocate(64, 1, scope, MPI_COMM_WORLD, &mem, &win));
    CHECK_STR(info_value(win, "mpi_win_scope"), "thread");
    CHECK_STR(info_value(win, "mpi_win_order"), "true");
    EXPECT_OK(MPI_Win_free(&win));
    MPI_Info_free(&scope);
    MPI_Info_free(&ordered);
}

static MPI_Info a_info_strict(void)
{
    static MPI_Info info = MPI_INFO_NULL;
    if (info == MPI_INFO_NULL)
        info = info1("mpi_assert_accumulate_intrinsic", "true");
    return info;
}

static void intrinsic(void)
{
    long *mem, buf[4] = {0};
    int flag = -1;
    MPI_Win win, cwin, strict;
    EXPECT_OK(MPI_Win_allocate(256, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EXPECT_OK(MPIX_Win_op_intrinsic("sum", 1, MPI_LONG, win, &flag));
    CHECK_INT(flag, 1);
    EXPECT_OK(MPIX_Win_op_intrinsic("sum,cas,replace,no_op,max", 1000, MPI_INT, win, &flag));
    CHECK_INT(flag, 1);
    EXPECT_OK(MPIX_Win_op_intrinsic("sum", 1, MPI_DOUBLE, win, &flag));
    CHECK_INT(flag, 1);
    EXPECT_OK(MPIX_Win_op_intrinsic("sum", 1, MPI_C_DOUBLE_COMPLEX, win, &flag));
    CHECK_INT(flag, 0);
    EXPECT_OK(MPIX_Win_op_intrinsic("band", 1, MPI_DOUBLE, win, &flag));
    CHECK_INT(flag, 0);
    EXPECT_ERR(MPIX_Win_op_intrinsic("sum,frobnicate", 1, MPI_LONG, win, &flag), MPI_ERR_ARG, "MPIX_Win_op_intrinsic", "frobnicate");
    EXPECT_ERR(MPIX_Win_op_intrinsic("sum", -1, MPI_LONG, win, &flag), MPI_ERR_COUNT, "MPIX_Win_op_intrinsic", NULL);
    EXPECT_ERR(MPIX_Win_op_intrinsic(NULL, 1, MPI_LONG, win, &flag), MPI_ERR_ARG, "MPIX_Win_op_intrinsic", NULL);
    EXPECT_ERR(MPIX_Win_op_intrinsic("sum", 1, MPI_DATATYPE_NULL, win, &flag), MPI_ERR_TYPE, "MPIX_Win_op_intrinsic", NULL);

    /* Misaligned elements (byte displacement 1 of a long) are not intrinsic either. */
    MPI_Win bytes;
    char *bmem;
    EXPECT_OK(MPI_Win_allocate(64, 1, a_info_strict(), MPI_COMM_WORLD, &bmem, &bytes));
    EXPECT_OK(MPI_Win_set_errhandler(bytes, MPI_ERRORS_RETURN));
    EXPECT_OK(MPI_Win_lock_all(0, bytes));
    long one_ = 1;
    EXPECT_OK(MPI_Accumulate(&one_, 1, MPI_LONG, 0, 8, 1, MPI_LONG, MPI_SUM, bytes));
    EXPECT_ERR(MPI_Accumulate(&one_, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_SUM, bytes), MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Accumulate", "MPI_LONG");
    EXPECT_OK(MPI_Win_unlock_all(bytes));
    EXPECT_OK(MPI_Win_free(&bytes));

    /* A created window's memory is reached by cross-memory attach: not intrinsic. */
    EXPECT_OK(MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &cwin));
    EXPECT_OK(MPI_Win_set_errhandler(cwin, MPI_ERRORS_RETURN));
    EXPECT_OK(MPIX_Win_op_intrinsic("sum", 1, MPI_LONG, cwin, &flag));
    CHECK_INT(flag, 0);
    /* ... so under the assertion an accumulate there is an error naming op and type. */
    MPI_Info a = info1("mpi_assert_accumulate_intrinsic", "true");
    EXPECT_OK(MPI_Win_set_info(cwin, a));
    CHECK_STR(info_value(cwin, "mpi_assert_accumulate_intrinsic"), "true");
    long one = 1, old = 0;
    int peer = (rank + 1) % size;
    EXPECT_OK(MPI_Win_lock_all(0, cwin));
    EXPECT_ERR(MPI_Accumulate(&one, 1, MPI_LONG, peer, 0, 1, MPI_LONG, MPI_SUM, cwin), MPI_ERR_UNSUPPORTED_OPERATION, "MPI_SUM", "MPI_LONG");
    EXPECT_ERR(MPI_Fetch_and_op(&one, &old, MPI_LONG, peer, 0, MPI_SUM, cwin), MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Fetch_and_op", "MPI_LONG");
    EXPECT_OK(MPI_Put(&one, 1, MPI_LONG, peer, 0, 1, MPI_LONG, cwin));
    EXPECT_OK(MPI_Win_unlock_all(cwin));
    /* Without the assertion the same accumulate is fine (under the accumulate mutex). */
    MPI_Info_set(a, "mpi_assert_accumulate_intrinsic", "false");
    EXPECT_OK(MPI_Win_set_info(cwin, a));
    EXPECT_OK(MPI_Win_lock_all(0, cwin));
    EXPECT_OK(MPI_Accumulate(&one, 1, MPI_LONG, peer, 0, 1, MPI_LONG, MPI_SUM, cwin));
    EXPECT_OK(MPI_Win_unlock_all(cwin));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(buf[0] == 2, "created window accumulate: %ld", buf[0]);
    EXPECT_OK(MPI_Win_free(&cwin));

    /* Allocated window, asserted through a dup: intrinsic accumulates work, a 16-byte one
     * (not intrinsic) is refused, the parent (no assertion) still takes it. */
    MPI_Info_set(a, "mpi_assert_accumulate_intrinsic", "true");
    EXPECT_OK(MPIX_Win_dup_with_info(win, a, &strict));
    EXPECT_OK(MPI_Win_set_errhandler(strict, MPI_ERRORS_RETURN));
    for (int i = 0; i < 32; i++)
        mem[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_Win_lock_all(0, win));
    const int n = 2000;
    for (int i = 0; i < n; i++) {
        long two[2] = {1, 2};
        EXPECT_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, strict));
        EXPECT_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 1, MPI_SUM, strict));
        EXPECT_OK(MPI_Accumulate(two, 2, MPI_LONG, 0, 2, 2, MPI_LONG, MPI_SUM, win));
        double d = 0.5;
        EXPECT_OK(MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, 4, 1, MPI_DOUBLE, MPI_SUM, win));
        double _Complex z = 1.0;
        EXPECT_OK(MPI_Accumulate(&z, 1, MPI_C_DOUBLE_COMPLEX, 0, 6, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, win));
    }
    double _Complex z = 1.0;
    EXPECT_ERR(MPI_Accumulate(&z, 1, MPI_C_DOUBLE_COMPLEX, 0, 6, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, strict), MPI_ERR_UNSUPPORTED_OPERATION, "MPI_SUM", "MPI_C_DOUBLE_COMPLEX");
    /* Compare-and-swap on the intrinsic path: exactly one rank swaps 0 for its number. */
    long me = rank + 1, zero = 0, got = -1;
    EXPECT_OK(MPI_Compare_and_swap(&me, &zero, &got, MPI_LONG, 0, 8, strict));
    int won = got == 0, winners = 0;
    MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_INT(winners, 1);
    EXPECT_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK(mem[0] == (long)n * size, "atomic sum: %ld", mem[0]);
        CHECK(mem[1] == (long)n * size, "fetch_and_op: %ld", mem[1]);
        CHECK(mem[2] == (long)n * size && mem[3] == 2L * n * size, "vector sum: %ld %ld", mem[2], mem[3]);
        CHECK(((double *)mem)[4] == 0.5 * n * size, "double sum: %g", ((double *)mem)[4]);
        double _Complex *zz = (double _Complex *)(mem + 6);
        CHECK(*zz == (double)n * size, "complex sum (mutex path): %g", (double)*zz);
        CHECK(mem[8] >= 1 && mem[8] <= size, "cas winner: %ld", mem[8]);
    }
    EXPECT_OK(MPI_Win_free(&strict));
    EXPECT_OK(MPI_Win_free(&win));
    MPI_Info_free(&a);
}

/* Ordered put-then-flag without a flush in between, 100000 times: whenever the target sees
 * flag i, it sees data i (or later). */
static void ordered(void)
{
    volatile long *mem;
    MPI_Win win;
    MPI_Info o = info1("mpi_win_order", "true");
    EXPECT_OK(MPI_Win_allocate(2 * sizeof(long), sizeof(long), o, MPI_COMM_WORLD, (void *)&mem, &win));
    mem[0] = mem[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    const long n = 100000;
    if (rank == 0) {
        EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        for (long i = 1; i <= n; i++) {
            EXPECT_OK(MPI_Put(&i, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win));
            EXPECT_OK(MPI_Put(&i, 1, MPI_LONG, 1, 1, 1, MPI_LONG, win));
        }
        EXPECT_OK(MPI_Win_unlock(1, win));
    } else if (rank == 1) {
        long seen = 0, bad = 0, reads = 0;
        while (seen < n) {
            long f = __atomic_load_n(&mem[1], __ATOMIC_ACQUIRE);
            long d = __atomic_load_n(&mem[0], __ATOMIC_ACQUIRE);
            if (d < f)
                bad++;
            if (f != seen)
                reads++;
            seen = f;
        }
        CHECK(bad == 0, "data behind its flag %ld times (%ld flag changes seen)", bad, reads);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_Win_free(&win));
    MPI_Info_free(&o);
}

/* MPIX_Rrput: once the request completes, the data is at the target (no flush). */
static void rrput(void)
{
    long *mem;
    MPI_Win win;
    EXPECT_OK(MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    *mem = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Request r;
        long v = 4242, sum = 5;
        EXPECT_OK(MPI_Win_lock_all(0, win));
        EXPECT_OK(MPIX_Rrput(&v, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win, &r));
        EXPECT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        EXPECT_OK(MPI_Send(NULL, 0, MPI_BYTE, 1, 7, MPI_COMM_WORLD));
        EXPECT_OK(MPI_Recv(NULL, 0, MPI_BYTE, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        EXPECT_OK(MPIX_Rraccumulate(&sum, 1, MPI_LONG, 1, 0, 1, MPI_LONG, MPI_SUM, win, &r));
        EXPECT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        long res = 0;
        EXPECT_OK(MPIX_Rrget_accumulate(&sum, 1, MPI_LONG, &res, 1, MPI_LONG, 1, 0, 1, MPI_LONG, MPI_SUM, win, &r));
        EXPECT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(res == 4247, "Rrget_accumulate fetched %ld", res);
        EXPECT_OK(MPI_Send(NULL, 0, MPI_BYTE, 1, 9, MPI_COMM_WORLD));
        EXPECT_OK(MPI_Win_unlock_all(win));
    } else if (rank == 1) {
        EXPECT_OK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(*(volatile long *)mem == 4242, "Rrput data not at the target: %ld", *mem);
        EXPECT_OK(MPI_Send(NULL, 0, MPI_BYTE, 0, 8, MPI_COMM_WORLD));
        EXPECT_OK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(*(volatile long *)mem == 4252, "Rraccumulate/Rrget_accumulate result %ld", *mem);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_Win_free(&win));
}

/* Thread-scope flushes: thread B's put+flush loop finishes while thread A sits inside its
 * own (slow) sequence of puts; B's flushes never wait for A. */
static MPI_Win twin;

static void *slow_thread(void *arg)
{
    (void)arg;
    long v = 1;
    /* A put, 300 ms of nothing (a slow thread mid-sequence), another put, its flush. */
    EXPECT_OK(MPI_Put(&v, 1, MPI_LONG, 1, 0, 1, MPI_LONG, twin));
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    EXPECT_OK(MPI_Put(&v, 1, MPI_LONG, 1, 0, 1, MPI_LONG, twin));
    EXPECT_OK(MPI_Win_flush(1, twin));
    return NULL;
}

static void thread_scope(int provided)
{
    long *mem;
    MPI_Info t = info1("mpi_win_scope", "thread");
    EXPECT_OK(MPI_Win_allocate(2 * sizeof(long), sizeof(long), t, MPI_COMM_WORLD, &mem, &twin));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && provided == MPI_THREAD_MULTIPLE) {
        EXPECT_OK(MPI_Win_lock_all(0, twin));
        pthread_t th;
        pthread_create(&th, NULL, slow_thread, NULL);
        double worst = 0;
        for (long i = 0; i < 10000; i++) {
            double t0 = MPI_Wtime();
            EXPECT_OK(MPI_Put(&i, 1, MPI_LONG, 1, 1, 1, MPI_LONG, twin));
            EXPECT_OK(MPI_Win_flush(1, twin));
            double dt = MPI_Wtime() - t0;
            if (dt > worst)
                worst = dt;
        }
        pthread_join(th, NULL);
        /* Waiting for the slow thread's sequence would show up as a 300 ms flush. */
        CHECK(worst < 0.25, "a thread-scope flush took %.3f ms", worst * 1e3);
        EXPECT_OK(MPI_Win_unlock_all(twin));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1 && provided == MPI_THREAD_MULTIPLE)
        CHECK(mem[1] == 9999 && mem[0] == 1, "thread-scope puts: %ld %ld", mem[0], mem[1]);
    EXPECT_OK(MPI_Win_free(&twin));
    MPI_Info_free(&t);
}

/* Notification requests next to point-to-point requests in one MPI_Waitall. */
static void notify(void)
{
    long *mem;
    MPI_Win win;
    const int n = 50;
    EXPECT_OK(MPI_Win_allocate(n * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        EXPECT_OK(MPI_Win_lock_all(0, win));
        for (long i = 0; i < n; i++)
            EXPECT_OK(MPIX_Put_notify(&i, 1, MPI_LONG, 1, i, 1, MPI_LONG, 3, win));
        long one = 1;
        EXPECT_OK(MPIX_Accumulate_notify(&one, 1, MPI_LONG, 1, 0, 1, MPI_LONG, MPI_SUM, 5, win));
        EXPECT_ERR(MPIX_Put_notify(&one, 1, MPI_LONG, 1, 0, 1, MPI_LONG, MPIX_WIN_NOTIFY_SLOTS, win), MPI_ERR_ARG, "MPIX_Put_notify", "notification_idx");
        EXPECT_OK(MPI_Win_unlock_all(win));
        int msg = 77;
        EXPECT_OK(MPI_Send(&msg, 1, MPI_INT, 1, 1, MPI_COMM_WORLD));
        /* One more notification once the target's next request is pending. */
        EXPECT_OK(MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        EXPECT_OK(MPIX_Put_notify(&one, 1, MPI_LONG, 1, 1, 1, MPI_LONG, 3, win));
        EXPECT_OK(MPI_Win_unlock(1, win));
    } else if (rank == 1) {
        MPI_Request reqs[4];
        int msg = 0;
        MPI_Count v = -1;
        EXPECT_OK(MPIX_Win_notify_request(win, 3, n - 10, &reqs[0]));
        EXPECT_OK(MPI_Irecv(&msg, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &reqs[1]));
        EXPECT_OK(MPIX_Win_notify_request(win, 3, 10, &reqs[2]));
        EXPECT_OK(MPIX_Win_notify_request(win, 5, 1, &reqs[3]));
        EXPECT_OK(MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE));
        CHECK_INT(msg, 77);
        for (int i = 1; i < n; i++)
            CHECK(mem[i] == i, "notified data %d: %ld", i, mem[i]);
        CHECK(mem[0] == 1, "accumulate_notify data %ld", mem[0]);
        EXPECT_OK(MPIX_Win_notify_get_value(win, 3, &v));
        CHECK(v == n, "notification count %lld", (long long)v);
        /* Nothing more has arrived on index 3: a further request stays pending until the
         * origin, told so, sends one more. */
        int flag = 1;
        EXPECT_OK(MPIX_Win_notify_request(win, 3, 1, &reqs[0]));
        EXPECT_OK(MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE));
        CHECK_INT(flag, 0);
        EXPECT_OK(MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD));
        EXPECT_OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
        CHECK(mem[1] == 1, "last notified data %ld", mem[1]);
        EXPECT_ERR(MPIX_Win_notify_request(win, -1, 1, &reqs[0]), MPI_ERR_ARG, "MPIX_Win_notify_request", NULL);
        EXPECT_ERR(MPIX_Win_notify_request(win, 0, -1, &reqs[0]), MPI_ERR_COUNT, "MPIX_Win_notify_request", NULL);
        /* Zero notifications: complete at once. */
        EXPECT_OK(MPIX_Win_notify_request(win, 7, 0, &reqs[0]));
        EXPECT_OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_rank = rank;
    wtest_errors_return();
    dup_and_info();
    intrinsic();
    ordered();
    rrput();
    thread_scope(provided);
    notify();
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
