/* Which targets an origin may reach as it locks and unlocks them one by one (MPI_Win_lock
 * publishes the flag of the target it locks; a lock that ends a fence epoch withdraws every
 * other target): on an allocated window, rank 0 opens a fence epoch, then locks rank 1 and
 * checks that plain puts (the direct path, which reads only the published flag) and derived
 * puts (the general path) reach rank 1 only, flushes name rank 1 only; locks rank 2 too;
 * unlocks rank 1 and checks that rank 1 is refused and rank 2 still reached, then unlocks
 * rank 2. Each refusal is MPI_ERR_RMA_SYNC. Both lock types; lock and unlock of every
 * target in turn; the values put are checked at the targets. Needs 3 or more ranks. */
#include "wtest.h"

static int rank, size;
static MPI_Datatype pair; /* a derived type: two longs one long apart (the general path) */

/* Put `v` to `t` at slot `t` by the direct path and at slot 8 + t by the general path;
 * expect both to succeed (`ok`) or both to fail with MPI_ERR_RMA_SYNC. */
static void put_both(MPI_Win win, int t, long v, int ok, const char *when)
{
    long two[2] = {v, v};
    int rc1 = MPI_Put(&v, 1, MPI_LONG, t, t, 1, MPI_LONG, win);
    int rc2 = MPI_Put(two, 2, MPI_LONG, t, 8 + t, 1, pair, win);
    int cls1 = -1, cls2 = -1;
    MPI_Error_class(rc1, &cls1);
    MPI_Error_class(rc2, &cls2);
    int want = ok ? MPI_SUCCESS : MPI_ERR_RMA_SYNC;
    CHECK(cls1 == want, "%s: plain put to %d gave class %d, expected %d", when, t, cls1, want);
    CHECK(cls2 == want, "%s: derived put to %d gave class %d, expected %d", when, t, cls2, want);
}

static void flush_is(MPI_Win win, int t, int ok, const char *when)
{
    int cls = -1;
    MPI_Error_class(MPI_Win_flush(t, win), &cls);
    int want = ok ? MPI_SUCCESS : MPI_ERR_RMA_SYNC;
    CHECK(cls == want, "%s: flush of %d gave class %d, expected %d", when, t, cls, want);
}

/* Rank 0's sequence with lock type `type`, values `base` + target. */
static void origin(MPI_Win win, int type, long base)
{
    const int a = 1, b = 2;
    EXPECT_OK(MPI_Win_fence(0, win)); /* opens a fence epoch: every target reachable */
    put_both(win, b, base + b, 1, "in the fence epoch");
    EXPECT_OK(MPI_Win_lock(type, a, 0, win)); /* ends the fence epoch */
    put_both(win, a, base + a, 1, "a locked");
    put_both(win, b, base + b, 0, "a locked after a fence, b not");
    flush_is(win, a, 1, "a locked");
    flush_is(win, b, 0, "a locked, b not");
    EXPECT_OK(MPI_Win_lock(type, b, 0, win));
    put_both(win, b, base + b, 1, "a and b locked");
    EXPECT_OK(MPI_Win_unlock(a, win));
    put_both(win, a, base + a, 0, "a unlocked");
    flush_is(win, a, 0, "a unlocked");
    put_both(win, b, base + b, 1, "a unlocked, b locked");
    flush_is(win, b, 1, "a unlocked, b locked");
    EXPECT_OK(MPI_Win_unlock(b, win));
    put_both(win, b, base + b, 0, "both unlocked");
    int cls = -1;
    MPI_Error_class(MPI_Win_unlock(b, win), &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "second unlock of %d gave class %d", b, cls);
    /* Every target in turn, one at a time: only the locked one is reached. */
    for (int t = 0; t < size; t++) {
        EXPECT_OK(MPI_Win_lock(type, t, 0, win));
        for (int u = 0; u < size; u++)
            put_both(win, u, base + u, u == t, "one target locked");
        EXPECT_OK(MPI_Win_unlock(t, win));
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 3) {
        if (rank == 0)
            printf("lock_epochs needs 3 or more ranks\n");
        MPI_Finalize();
        return 1;
    }
    MPI_Type_vector(2, 1, 2, MPI_LONG, &pair);
    MPI_Type_commit(&pair);
    long *mem;
    MPI_Win win;
    MPI_Win_allocate(32 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int types[2] = {MPI_LOCK_SHARED, MPI_LOCK_EXCLUSIVE};
    for (int k = 0; k < 2; k++) {
        long base = 100 * (k + 1);
        for (int i = 0; i < 32; i++)
            mem[i] = -1;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            origin(win, types[k], base);
        } else {
            EXPECT_OK(MPI_Win_fence(0, win)); /* matches rank 0's fence */
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* What rank 0 put here: its value at slot `rank` and, as the pair, at 8 + rank and
         * 10 + rank; nothing elsewhere. */
        long v = base + rank;
        for (int i = 0; i < 32; i++) {
            long want = (i == rank || i == 8 + rank || i == 10 + rank) ? v : -1;
            CHECK(mem[i] == want, "lock type %d: slot %d of rank %d is %ld, expected %ld",
                  types[k], i, rank, mem[i], want);
        }
        EXPECT_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win)); /* closes the others' epochs */
    }
    MPI_Win_free(&win);
    MPI_Type_free(&pair);
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
