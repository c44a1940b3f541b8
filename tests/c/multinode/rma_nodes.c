/* RMA windows across logical nodes (issue 24, docs/multinode.md): windows from MPI_Win_allocate
 * and MPI_Win_create over ranks on several nodes reach the far ranks through UCX (put, get,
 * the accumulates, fetch-and-op, compare-and-swap), synchronised by fence, exclusive and shared
 * locks, lock_all with flushes, and post/start/complete/wait; values checked, contention from
 * every rank on one target. Dynamic windows too: regions attached (malloc and MPI_Alloc_mem
 * memory) are reached with their UCX keys; a region detached and another attached (at the
 * same address, as malloc tends to give) is reached afresh; an address outside every region
 * is MPI_ERR_RMA_RANGE. Shared windows spanning nodes fail on every rank with
 * MPI_ERR_RMA_SHARED naming the function and the reason, leaving the job usable. */
#include "wtest.h"

#define N 32
#define ROUNDS 50

static int rank, size;

static void check_window(int created)
{
    MPI_Win win = MPI_WIN_NULL;
    int *base = NULL, *mine = NULL;
    const char *kind = created ? "create" : "allocate";
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int i, v[8], got[8], one = 1, old = -1, cmp, swap;
    if (created) {
        mine = malloc(N * sizeof(int));
        EXPECT_OK(MPI_Win_create(mine, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        base = mine;
    } else {
        EXPECT_OK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    }
    for (i = 0; i < N; i++)
        base[i] = rank * 1000 + i;

    /* Fence: put 8 ints to the right at 0..7, get the right's 8..15. */
    EXPECT_OK(MPI_Win_fence(0, win));
    for (i = 0; i < 8; i++)
        v[i] = -(rank * 100 + i);
    EXPECT_OK(MPI_Put(v, 8, MPI_INT, right, 0, 8, MPI_INT, win));
    EXPECT_OK(MPI_Get(got, 8, MPI_INT, right, 8, 8, MPI_INT, win));
    EXPECT_OK(MPI_Win_fence(0, win));
    for (i = 0; i < 8; i++) {
        CHECK(base[i] == -(left * 100 + i), "%s fence put: elem %d = %d", kind, i, base[i]);
        CHECK(got[i] == right * 1000 + 8 + i, "%s fence get: %d = %d", kind, i, got[i]);
    }

    /* A strided target (every other int of 16..31) by put, read back by get. */
    {
        MPI_Datatype vec;
        MPI_Type_vector(8, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        for (i = 0; i < 8; i++)
            v[i] = rank * 10 + i;
        EXPECT_OK(MPI_Put(v, 8, MPI_INT, right, 16, 1, vec, win));
        EXPECT_OK(MPI_Win_fence(0, win));
        for (i = 0; i < 8; i++) {
            CHECK(base[16 + 2 * i] == left * 10 + i, "%s strided put: %d = %d", kind, i, base[16 + 2 * i]);
            CHECK(base[17 + 2 * i] == rank * 1000 + 17 + 2 * i, "%s strided gap: %d", kind, i);
        }
        EXPECT_OK(MPI_Type_free(&vec));
    }
    EXPECT_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    /* Every rank adds 1 to rank 0's word 8, ROUNDS times, under a shared lock_all with
     * flushes; and fetch-and-ops to its word 9 under per-target exclusive locks. */
    if (rank == 0)
        base[8] = base[9] = 0;
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
    EXPECT_OK(MPI_Win_lock_all(0, win));
    for (i = 0; i < ROUNDS; i++) {
        EXPECT_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, 8, 1, MPI_INT, MPI_SUM, win));
        if (i % 10 == 0)
            EXPECT_OK(MPI_Win_flush(0, win));
    }
    EXPECT_OK(MPI_Win_flush_all(win));
    EXPECT_OK(MPI_Win_unlock_all(win));
    for (i = 0; i < ROUNDS; i++) {
        EXPECT_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        EXPECT_OK(MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 9, MPI_SUM, win));
        EXPECT_OK(MPI_Win_unlock(0, win));
        CHECK(old >= 0 && old < ROUNDS * size, "%s fetch_and_op saw %d", kind, old);
    }
    /* Exclusive lock as a mutex: get, add, put of word 10 at rank 0 (no lost update). */
    if (rank == 0) {
        EXPECT_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        base[10] = 0;
        EXPECT_OK(MPI_Win_unlock(0, win));
    }
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (i = 0; i < 10; i++) {
        int cur = -1;
        EXPECT_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        EXPECT_OK(MPI_Get(&cur, 1, MPI_INT, 0, 10, 1, MPI_INT, win));
        EXPECT_OK(MPI_Win_flush(0, win));
        cur += 1;
        EXPECT_OK(MPI_Put(&cur, 1, MPI_INT, 0, 10, 1, MPI_INT, win));
        EXPECT_OK(MPI_Win_unlock(0, win));
    }
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK_INT(base[8], ROUNDS * size);
        CHECK_INT(base[9], ROUNDS * size);
        CHECK_INT(base[10], 10 * size);
        EXPECT_OK(MPI_Win_unlock(0, win));
    }

    /* Compare-and-swap on rank size-1's word 11 (set to -1): exactly one rank swaps in its
     * number; get_accumulate with MPI_MAX on word 12. */
    if (rank == size - 1)
        base[11] = base[12] = -1;
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
    EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, size - 1, 0, win));
    cmp = -1;
    swap = rank;
    EXPECT_OK(MPI_Compare_and_swap(&swap, &cmp, &old, MPI_INT, size - 1, 11, win));
    {
        int r = -5;
        EXPECT_OK(MPI_Get_accumulate(&rank, 1, MPI_INT, &r, 1, MPI_INT, size - 1, 12, 1, MPI_INT, MPI_MAX, win));
        CHECK(r >= -1 && r < size, "%s get_accumulate saw %d", kind, r);
    }
    EXPECT_OK(MPI_Win_unlock(size - 1, win));
    {
        int winners = (old == -1), total = 0;
        EXPECT_OK(MPI_Allreduce(&winners, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK_INT(total, 1);
    }
    if (rank == size - 1) {
        CHECK(base[11] >= 0 && base[11] < size, "%s cas result %d", kind, base[11]);
        CHECK_INT(base[12], size - 1);
    }

    /* Post/start/complete/wait around the ring: put to the right, accumulate to it. */
    {
        MPI_Group world, lg, rg;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_incl(world, 1, &left, &lg);
        MPI_Group_incl(world, 1, &right, &rg);
        EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
        base[13] = base[14] = 0;
        EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
        EXPECT_OK(MPI_Win_post(lg, 0, win));
        EXPECT_OK(MPI_Win_start(rg, 0, win));
        v[0] = 500 + rank;
        EXPECT_OK(MPI_Put(v, 1, MPI_INT, right, 13, 1, MPI_INT, win));
        EXPECT_OK(MPI_Accumulate(v, 1, MPI_INT, right, 14, 1, MPI_INT, MPI_SUM, win));
        EXPECT_OK(MPI_Win_complete(win));
        EXPECT_OK(MPI_Win_wait(win));
        CHECK_INT(base[13], 500 + left);
        CHECK_INT(base[14], 500 + left);
        MPI_Group_free(&lg);
        MPI_Group_free(&rg);
        MPI_Group_free(&world);
    }

    /* A process spinning on compare-and-swap over its own memory still serves a far holder's
     * operations (regression: UCX emulates RMA with active messages over TCP and shared
     * memory it did not allocate, which needs the target's progress; the spinner made none,
     * and the holder's get never completed). Rank 0 holds word 15 of the last rank, which
     * spins to take it while rank 0 reads word 14 and only then releases it. */
    {
        int t = size - 1, z = 0, mark = 1, two = 2, prev = -1;
        if (rank == t) {
            base[14] = 77;
            base[15] = 0;
        }
        EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
        EXPECT_OK(MPI_Win_lock_all(0, win));
        if (rank == 0) {
            EXPECT_OK(MPI_Compare_and_swap(&mark, &z, &prev, MPI_INT, t, 15, win));
            CHECK_INT(prev, 0);
        }
        EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == t) {
            do {
                EXPECT_OK(MPI_Compare_and_swap(&two, &z, &prev, MPI_INT, t, 15, win));
            } while (prev != 0);
        } else if (rank == 0) {
            int g = -1;
            EXPECT_OK(MPI_Get(&g, 1, MPI_INT, t, 14, 1, MPI_INT, win));
            EXPECT_OK(MPI_Win_flush(t, win));
            CHECK_INT(g, 77);
            EXPECT_OK(MPI_Compare_and_swap(&z, &mark, &prev, MPI_INT, t, 15, win));
            CHECK_INT(prev, 1);
        }
        EXPECT_OK(MPI_Win_unlock_all(win));
        EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == t)
            CHECK_INT(base[15], 2);
    }

    /* A far rank's memory has no address here (shared_query: size 0, null base). */
    if (!created) {
        MPI_Aint sz = -1;
        int du = 0;
        int *p = (int *)&sz;
        EXPECT_OK(MPI_Win_shared_query(win, right, &sz, &du, &p));
        if (wtest_env_int("WTEST_RIGHT_FAR", 0))
            CHECK(sz == 0 && p == NULL, "%s shared_query of a far rank: %ld", kind, (long)sz);
    }
    EXPECT_OK(MPI_Win_free(&win));
    free(mine);
}

/* Rank 0 exposes a created window (memory UCX did not map: its puts are served by the target)
 * to the last rank, on another node, and waits in a loop of MPI_Win_test, its only MPI call:
 * the test must serve the origin's operations, or both wait forever. */
static void check_pscw_test(void)
{
    MPI_Win win;
    MPI_Group world, peer;
    int *mem = calloc(N, sizeof(int)), last = size - 1, flag = 0, i, v[N];
    EXPECT_OK(MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    if (rank == 0) {
        MPI_Group_incl(world, 1, &last, &peer);
        EXPECT_OK(MPI_Win_post(peer, 0, win));
        while (!flag)
            EXPECT_OK(MPI_Win_test(win, &flag));
        for (i = 0; i < N; i++)
            CHECK(mem[i] == 500 + i, "put under post/test: elem %d = %d", i, mem[i]);
        MPI_Group_free(&peer);
    } else if (rank == last) {
        int zero = 0;
        MPI_Group_incl(world, 1, &zero, &peer);
        for (i = 0; i < N; i++)
            v[i] = 500 + i;
        EXPECT_OK(MPI_Win_start(peer, 0, win));
        for (i = 0; i < N; i++) /* one put per element: many operations to serve */
            EXPECT_OK(MPI_Put(&v[i], 1, MPI_INT, 0, i, 1, MPI_INT, win));
        EXPECT_OK(MPI_Win_complete(win));
        MPI_Group_free(&peer);
    }
    MPI_Group_free(&world);
    EXPECT_OK(MPI_Win_free(&win));
    free(mem);
}

/* Every rank's regions of a dynamic window, by address. */
static void exchange(void *mine, MPI_Aint *all)
{
    MPI_Aint a;
    MPI_Get_address(mine, &a);
    EXPECT_OK(MPI_Allgather(&a, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD));
}

static void check_dynamic(void)
{
    MPI_Win win = MPI_WIN_NULL;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *a = malloc(N * sizeof(int)), *b = NULL, *c;
    MPI_Aint *at = malloc(size * sizeof(MPI_Aint)), *bt = malloc(size * sizeof(MPI_Aint));
    int i, v[8], got[8], one = 1, old = -1, cmp, swap;
    EXPECT_OK(MPI_Alloc_mem(N * sizeof(int), MPI_INFO_NULL, &b));
    EXPECT_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (i = 0; i < N; i++)
        a[i] = rank * 1000 + i, b[i] = rank * 2000 + i;
    EXPECT_OK(MPI_Win_attach(win, a, N * sizeof(int)));
    EXPECT_OK(MPI_Win_attach(win, b, N * sizeof(int)));
    exchange(a, at);
    exchange(b, bt);

    /* Fence: put 8 ints into the right's a[0..7], get the right's b[8..15]. */
    EXPECT_OK(MPI_Win_fence(0, win));
    for (i = 0; i < 8; i++)
        v[i] = -(rank * 100 + i);
    EXPECT_OK(MPI_Put(v, 8, MPI_INT, right, at[right], 8, MPI_INT, win));
    EXPECT_OK(MPI_Get(got, 8, MPI_INT, right, bt[right] + 8 * sizeof(int), 8, MPI_INT, win));
    EXPECT_OK(MPI_Win_fence(0, win));
    for (i = 0; i < 8; i++) {
        CHECK(a[i] == -(left * 100 + i), "dynamic fence put: elem %d = %d", i, a[i]);
        CHECK(got[i] == right * 2000 + 8 + i, "dynamic fence get: %d = %d", i, got[i]);
    }
    /* A strided target: every other int of the right's b[16..31]. */
    {
        MPI_Datatype vec;
        MPI_Type_vector(8, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        for (i = 0; i < 8; i++)
            v[i] = rank * 10 + i;
        EXPECT_OK(MPI_Put(v, 8, MPI_INT, right, bt[right] + 16 * sizeof(int), 1, vec, win));
        EXPECT_OK(MPI_Win_fence(0, win));
        for (i = 0; i < 8; i++) {
            CHECK(b[16 + 2 * i] == left * 10 + i, "dynamic strided put: %d = %d", i, b[16 + 2 * i]);
            CHECK(b[17 + 2 * i] == rank * 2000 + 17 + 2 * i, "dynamic strided gap: %d", i);
        }
        EXPECT_OK(MPI_Type_free(&vec));
    }
    EXPECT_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    /* Contention on rank 0's a[8]: accumulate, fetch-and-op, compare-and-swap from every rank. */
    if (rank == 0)
        a[8] = 0, a[9] = 0;
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
    EXPECT_OK(MPI_Win_lock_all(0, win));
    for (i = 0; i < ROUNDS; i++) {
        EXPECT_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, at[0] + 8 * sizeof(int), 1, MPI_INT, MPI_SUM, win));
        EXPECT_OK(MPI_Fetch_and_op(&one, &old, MPI_INT, 0, at[0] + 9 * sizeof(int), MPI_SUM, win));
        EXPECT_OK(MPI_Win_flush(0, win));
        CHECK(old >= 0 && old < ROUNDS * size, "dynamic fetch_and_op old %d", old);
    }
    EXPECT_OK(MPI_Win_unlock_all(win));
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK(a[8] == ROUNDS * size, "dynamic accumulate total %d, want %d", a[8], ROUNDS * size);
        CHECK(a[9] == ROUNDS * size, "dynamic fetch_and_op total %d, want %d", a[9], ROUNDS * size);
        a[10] = -1;
    }
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* Exactly one rank swaps -1 for its own rank. */
    cmp = -1, swap = rank;
    EXPECT_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    EXPECT_OK(MPI_Compare_and_swap(&swap, &cmp, &old, MPI_INT, 0, at[0] + 10 * sizeof(int), win));
    EXPECT_OK(MPI_Win_unlock(0, win));
    {
        int winners = old == -1, total = 0;
        EXPECT_OK(MPI_Allreduce(&winners, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK_INT(total, 1);
    }

    /* Outside every region: MPI_ERR_RMA_RANGE, naming the regions. */
    EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    EXPECT_ERR(MPI_Put(v, 1, MPI_INT, right, at[right] + N * sizeof(int) + 4096 * 16, 1, MPI_INT, win),
               MPI_ERR_RMA_RANGE, "MPI_Put", "outside");
    EXPECT_OK(MPI_Win_unlock(right, win));

    /* Detach a, free it, attach a fresh region (often at the same address): reached afresh. */
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
    EXPECT_OK(MPI_Win_detach(win, a));
    free(a);
    c = malloc(N * sizeof(int));
    for (i = 0; i < N; i++)
        c[i] = 7;
    EXPECT_OK(MPI_Win_attach(win, c, N * sizeof(int)));
    exchange(c, at);
    EXPECT_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    v[0] = 4242 + rank;
    EXPECT_OK(MPI_Put(v, 1, MPI_INT, right, at[right] + 3 * sizeof(int), 1, MPI_INT, win));
    EXPECT_OK(MPI_Get(got, 2, MPI_INT, right, at[right] + 4 * sizeof(int), 2, MPI_INT, win));
    EXPECT_OK(MPI_Win_unlock(right, win));
    CHECK(got[0] == 7 && got[1] == 7, "dynamic get after re-attach: %d %d", got[0], got[1]);
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(c[3] == 4242 + left, "dynamic put after re-attach: %d, want %d", c[3], 4242 + left);

    EXPECT_OK(MPI_Win_detach(win, c));
    EXPECT_OK(MPI_Win_detach(win, b));
    EXPECT_OK(MPI_Win_free(&win));
    free(c);
    MPI_Free_mem(b);
    free(at);
    free(bt);
}

int main(int argc, char **argv)
{
    MPI_Win win = MPI_WIN_NULL;
    int *base = NULL;
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    rank = wtest_world_rank();
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    EXPECT_ERR(MPI_Win_allocate_shared(16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
               MPI_ERR_RMA_SHARED, "MPI_Win_allocate_shared", "another node");
    CHECK(win == MPI_WIN_NULL, "no window after the errors");
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the job carries on */

    check_window(0);
    check_window(1);
    check_dynamic();
    check_pscw_test();
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
