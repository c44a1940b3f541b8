/* Accumulate-type operations on dynamic windows by CPU atomics (issue 16/18): a region of a
 * shareable MPI_Alloc_mem block is reached by address in every process, so accumulates on it
 * take CPU atomics as on an allocated window; other memory (malloc) keeps the accumulate
 * mutex. Checked through mpi_assert_accumulate_intrinsic (an accumulate off the atomic path
 * is MPI_ERR_UNSUPPORTED_OPERATION there), and by values:
 * - every rank (the target included) adds to the same counters of rank 0 by every path at
 *   once: one-element MPI_Accumulate, MPI_Fetch_and_op, a two-element accumulate, a derived
 *   datatype accumulate (the general path), MPI_Get_accumulate, a compare-and-swap loop,
 *   MPI_MAX on doubles, while rank 0 attaches and detaches other regions (table rewrites);
 *   totals exact;
 * - malloc memory under the same window: the mutex path, totals exact;
 * - more regions than the old 32-slot table: all published and atomic; a region attached
 *   while the table is full stays unpublished (mutex path) until detached, even after slots
 *   free up, and new regions take the freed slots;
 * - a memory-handle window over a shareable region: MPIX_Win_op_intrinsic says 1, and its
 *   accumulates mix with the dynamic window's on the same counter;
 * - range errors say how far an access overlaps a region or a window. */
#include "wtest.h"

#define ROUNDS 300
#define SLOTS 1024

static int rank, size;
static MPI_Info shareable;

static void bcast_addr(void *p, MPI_Aint *a)
{
    MPI_Get_address(p, a);
    MPI_Bcast(a, 1, MPI_AINT, 0, MPI_COMM_WORLD);
}

/* Whether a one-element MPI_LONG sum on rank 0 at `at` takes the atomic path (strict window). */
static int atomic_at(MPI_Win strict, MPI_Aint at)
{
    long zero = 0;
    int rc = MPI_Accumulate(&zero, 1, MPI_LONG, 0, at, 1, MPI_LONG, MPI_SUM, strict);
    if (rc != MPI_SUCCESS) {
        int cls;
        MPI_Error_class(rc, &cls);
        CHECK_INT(cls, MPI_ERR_UNSUPPORTED_OPERATION);
        return 0;
    }
    return 1;
}

static void mixed_paths(MPI_Win win, MPI_Win strict)
{
    long *c, *m = malloc(4 * sizeof(long));
    double *d;
    MPI_Alloc_mem(8 * sizeof(long), shareable, &c);
    MPI_Alloc_mem(sizeof(double), shareable, &d);
    for (int i = 0; i < 8; i++)
        c[i] = 0;
    for (int i = 0; i < 4; i++)
        m[i] = 0;
    *d = -1.0;
    EXPECT_OK(MPI_Win_attach(win, c, 8 * sizeof(long)));
    EXPECT_OK(MPI_Win_attach(win, m, 4 * sizeof(long)));
    EXPECT_OK(MPI_Win_attach(win, d, sizeof(double)));
    MPI_Aint ca, ma, da;
    bcast_addr(c, &ca);
    bcast_addr(m, &ma);
    bcast_addr(d, &da);
    MPI_Datatype two;
    MPI_Type_contiguous(2, MPI_LONG, &two);
    MPI_Type_commit(&two);
    MPI_Barrier(MPI_COMM_WORLD);

    /* The duplicate shares the window's epochs: one lock_all opens both. */
    EXPECT_OK(MPI_Win_lock_all(0, win));
    /* The shareable block is on the atomic path, the malloc memory is not. */
    CHECK(atomic_at(strict, ca + 7 * sizeof(long)), "shareable region: not atomic");
    CHECK(!atomic_at(strict, ma + 3 * sizeof(long)), "malloc region: atomic");
    long one = 1, ones[2] = {1, 1}, old, olds[2], cmp, got;
    int spare_n = 0;
    long *spare[4] = {0};
    for (int i = 0; i < ROUNDS; i++) {
        /* c[0]: one-element accumulate, fetch-and-op, get-accumulate, compare-and-swap. */
        EXPECT_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, ca, 1, MPI_LONG, MPI_SUM, win));
        EXPECT_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, ca, MPI_SUM, win));
        EXPECT_OK(MPI_Get_accumulate(&one, 1, MPI_LONG, &old, 1, MPI_LONG, 0, ca, 1, MPI_LONG, MPI_SUM, win));
        EXPECT_OK(MPI_Fetch_and_op(&one, &cmp, MPI_LONG, 0, ca, MPI_NO_OP, win));
        EXPECT_OK(MPI_Win_flush(0, win));
        for (;;) {
            long next = cmp + 1;
            EXPECT_OK(MPI_Compare_and_swap(&next, &cmp, &got, MPI_LONG, 0, ca, win));
            EXPECT_OK(MPI_Win_flush(0, win));
            if (got == cmp)
                break;
            cmp = got;
        }
        /* c[1..2]: a two-element accumulate and a derived-datatype one (general path). */
        EXPECT_OK(MPI_Accumulate(ones, 2, MPI_LONG, 0, ca + sizeof(long), 2, MPI_LONG, MPI_SUM, win));
        EXPECT_OK(MPI_Accumulate(ones, 1, two, 0, ca + sizeof(long), 1, two, MPI_SUM, win));
        EXPECT_OK(MPI_Get_accumulate(ones, 2, MPI_LONG, olds, 2, MPI_LONG, 0, ca + sizeof(long), 1, two, MPI_SUM, win));
        /* c[3]: bitwise or of the rank's bit; c[4]: replace, read back by no-op. */
        long bit = 1L << rank, mine = rank + 1;
        EXPECT_OK(MPI_Accumulate(&bit, 1, MPI_LONG, 0, ca + 3 * sizeof(long), 1, MPI_LONG, MPI_BOR, win));
        EXPECT_OK(MPI_Accumulate(&mine, 1, MPI_LONG, 0, ca + 4 * sizeof(long), 1, MPI_LONG, MPI_REPLACE, win));
        /* d: max of doubles (a compare-and-swap loop in the atomic path). */
        double dv = rank * 1000.0 + i;
        EXPECT_OK(MPI_Accumulate(&dv, 1, MPI_DOUBLE, 0, da, 1, MPI_DOUBLE, MPI_MAX, win));
        /* m: the mutex path, the same calls. */
        EXPECT_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, ma, 1, MPI_LONG, MPI_SUM, win));
        EXPECT_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, ma, MPI_SUM, win));
        EXPECT_OK(MPI_Accumulate(ones, 1, two, 0, ma + sizeof(long), 1, two, MPI_SUM, win));
        /* Rank 0 rewrites its table meanwhile: other regions come and go. */
        if (rank == 0 && i % 10 == 0) {
            if (spare_n == 4) {
                for (int k = 0; k < 4; k++) {
                    EXPECT_OK(MPI_Win_detach(win, spare[k]));
                    MPI_Free_mem(spare[k]);
                }
                spare_n = 0;
            }
            MPI_Alloc_mem(64, shareable, &spare[spare_n]);
            EXPECT_OK(MPI_Win_attach(win, spare[spare_n], 64));
            spare_n++;
        }
    }
    EXPECT_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long n = (long)ROUNDS * size;
        CHECK(c[0] == 4 * n, "c[0] = %ld, want %ld", c[0], 4 * n);
        CHECK(c[1] == 3 * n && c[2] == 3 * n, "c[1..2] = %ld %ld, want %ld", c[1], c[2], 3 * n);
        CHECK(c[3] == (1L << size) - 1, "c[3] = %#lx", c[3]);
        CHECK(c[4] >= 1 && c[4] <= size, "c[4] = %ld", c[4]);
        CHECK(c[7] == 0, "c[7] = %ld", c[7]);
        CHECK(*d == (size - 1) * 1000.0 + ROUNDS - 1, "max %f", *d);
        CHECK(m[0] == 2 * n && m[1] == n && m[2] == n, "malloc: %ld %ld %ld, want %ld %ld", m[0], m[1], m[2], 2 * n, n);
        for (int k = 0; k < spare_n; k++) {
            EXPECT_OK(MPI_Win_detach(win, spare[k]));
            MPI_Free_mem(spare[k]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_Win_detach(win, c));
    EXPECT_OK(MPI_Win_detach(win, m));
    EXPECT_OK(MPI_Win_detach(win, d));
    MPI_Type_free(&two);
    MPI_Free_mem(c);
    MPI_Free_mem(d);
    free(m);
}

/* Rank 0 attaches SLOTS malloc regions (every slot taken: 40 of them would have overflowed the
 * old table), then shareable ones; the others check which are atomic and reach all. */
static void many_regions(MPI_Win win, MPI_Win strict)
{
    enum { FILL = SLOTS - 2 };
    long *fill = NULL, *sh[4];
    MPI_Aint fa = 0, sa[4];
    if (rank == 0) {
        fill = calloc(2 * FILL, sizeof(long)); /* every other long attached: no adjacency */
        for (int k = 0; k < FILL; k++)
            EXPECT_OK(MPI_Win_attach(win, fill + 2 * k, sizeof(long)));
    }
    for (int k = 0; k < 4; k++) {
        MPI_Alloc_mem(sizeof(long), shareable, &sh[k]);
        *sh[k] = 0;
        /* sh[0], sh[1] fill the last two slots; sh[2] finds the table full. */
        if (rank == 0 && k < 3)
            EXPECT_OK(MPI_Win_attach(win, sh[k], sizeof(long)));
    }
    bcast_addr(fill, &fa);
    for (int k = 0; k < 4; k++)
        bcast_addr(sh[k], &sa[k]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) {
        long v = rank, back = 0;
        EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        /* Every region reachable, by put/get, the unpublished one too. */
        EXPECT_OK(MPI_Put(&v, 1, MPI_LONG, 0, fa + 2 * (FILL - 1) * sizeof(long), 1, MPI_LONG, win));
        EXPECT_OK(MPI_Put(&v, 1, MPI_LONG, 0, sa[2], 1, MPI_LONG, win));
        EXPECT_OK(MPI_Win_flush(0, win));
        EXPECT_OK(MPI_Get(&back, 1, MPI_LONG, 0, sa[2], 1, MPI_LONG, win));
        EXPECT_OK(MPI_Win_flush(0, win));
        CHECK(back >= 1 && back < size, "unpublished region read %ld", back);
        CHECK(atomic_at(strict, sa[0]), "slot %d: not atomic", SLOTS - 2);
        CHECK(atomic_at(strict, sa[1]), "slot %d: not atomic", SLOTS - 1);
        CHECK(!atomic_at(strict, sa[2]), "a region past the table: atomic");
        CHECK(!atomic_at(strict, fa), "malloc region: atomic");
        EXPECT_OK(MPI_Win_unlock(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* A slot frees up: the unpublished region stays so; a new region takes the slot. */
    if (rank == 0) {
        EXPECT_OK(MPI_Win_detach(win, fill));
        EXPECT_OK(MPI_Win_attach(win, sh[3], sizeof(long)));
    }
    bcast_addr(sh[3], &sa[3]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) {
        EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK(!atomic_at(strict, sa[2]), "the unpublished region became atomic while attached");
        CHECK(atomic_at(strict, sa[3]), "the region in the freed slot: not atomic");
        long one = 1;
        EXPECT_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, sa[3], 1, MPI_LONG, MPI_SUM, strict));
        EXPECT_OK(MPI_Win_unlock(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK(*sh[3] == size - 1, "sums in the freed slot: %ld", *sh[3]);
        CHECK(fill[2 * (FILL - 1)] >= 1 && fill[2 * (FILL - 1)] < size, "fill %ld", fill[2 * (FILL - 1)]);
        for (int k = 1; k < FILL; k++)
            EXPECT_OK(MPI_Win_detach(win, fill + 2 * k));
        for (int k = 0; k < 4; k++)
            EXPECT_OK(MPI_Win_detach(win, sh[k]));
        free(fill);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < 4; k++)
        MPI_Free_mem(sh[k]);
}

/* Rank 0's shareable counter, through its memory-handle window and the dynamic window. */
static void through_handle(MPI_Win win)
{
    long *c;
    MPI_Alloc_mem(2 * sizeof(long), shareable, &c);
    c[0] = c[1] = 0;
    EXPECT_OK(MPI_Win_attach(win, c, 2 * sizeof(long)));
    char h[MPIX_MAX_MEMHANDLE_SIZE];
    int hs = sizeof h;
    if (rank == 0)
        EXPECT_OK(MPIX_Memhandle_create(c, 2 * sizeof(long), MPI_INFO_NULL, win, h, &hs));
    MPI_Bcast(h, sizeof h, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Aint ca;
    bcast_addr(c, &ca);
    MPI_Win hw;
    EXPECT_OK(MPIX_Win_from_memhandle(h, 2 * sizeof(long), sizeof(long), MPI_INFO_NULL, 0, win, &hw));
    EXPECT_OK(MPI_Win_set_errhandler(hw, MPI_ERRORS_RETURN));
    int flag = -1;
    EXPECT_OK(MPIX_Win_op_intrinsic("sum,cas", 1, MPI_LONG, hw, &flag));
    CHECK_INT(flag, 1);
    long one = 1, old;
    EXPECT_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ROUNDS; i++) {
        EXPECT_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 1, MPI_SUM, hw));
        EXPECT_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_SUM, hw));
        EXPECT_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, ca + sizeof(long), MPI_SUM, win));
    }
    EXPECT_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(c[1] == 3L * ROUNDS * size && c[0] == 0, "handle + dynamic sums: %ld %ld", c[0], c[1]);
    EXPECT_OK(MPI_Win_free(&hw));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        EXPECT_OK(MPIX_Memhandle_release(h, win));
    EXPECT_OK(MPI_Win_detach(win, c));
    MPI_Free_mem(c);
}

static void expect_range(int rc, const char *words)
{
    char msg[MPI_MAX_ERROR_STRING];
    int cls, len;
    MPI_Error_class(rc, &cls);
    CHECK_INT(cls, MPI_ERR_RMA_RANGE);
    MPI_Error_string(rc, msg, &len);
    CHECK_CONTAINS(msg, words);
}

/* Partial overlaps are worded as such, on dynamic and allocated windows. */
static void range_wording(MPI_Win win)
{
    int peer = (rank + 1) % size, v[4] = {1, 2, 3, 4};
    long *mem;
    MPI_Alloc_mem(4 * sizeof(long), shareable, &mem);
    EXPECT_OK(MPI_Win_attach(win, mem, 4 * sizeof(long)));
    MPI_Aint *addrs = malloc(size * sizeof(MPI_Aint)), a;
    MPI_Get_address(mem, &a);
    MPI_Allgather(&a, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    expect_range(MPI_Put(v, 4, MPI_INT, peer, addrs[peer] + 3 * sizeof(long), 4, MPI_INT, win), "only partly lie in the region");
    expect_range(MPI_Accumulate(v, 4, MPI_INT, peer, addrs[peer] - 8, 4, MPI_INT, MPI_SUM, win), "(8 of them outside it");
    expect_range(MPI_Get(v, 1, MPI_INT, peer, addrs[peer] + 64 * sizeof(long), 1, MPI_INT, win), "lie outside every region");
    EXPECT_OK(MPI_Win_unlock(peer, win));
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_Win_detach(win, mem));
    MPI_Free_mem(mem);
    free(addrs);

    MPI_Win aw;
    int *base;
    EXPECT_OK(MPI_Win_allocate(16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &aw));
    EXPECT_OK(MPI_Win_set_errhandler(aw, MPI_ERRORS_RETURN));
    EXPECT_OK(MPI_Win_lock_all(0, aw));
    expect_range(MPI_Put(v, 2, MPI_INT, peer, 12, 2, MPI_INT, aw), "bytes 12..20 only partly lie in the target's 16 bytes of window memory (4 bytes past the end of it)");
    expect_range(MPI_Put(v, 2, MPI_INT, peer, 16, 2, MPI_INT, aw), "bytes 16..24 lie outside the target's 16 bytes");
    EXPECT_OK(MPI_Win_unlock_all(aw));
    EXPECT_OK(MPI_Win_free(&aw));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_rank = rank;
    MPI_Info_create(&shareable);
    MPI_Info_set(shareable, "mpix_shareable", "true");
    MPI_Win win, strict;
    EXPECT_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Info si;
    MPI_Info_create(&si);
    MPI_Info_set(si, "mpi_assert_accumulate_intrinsic", "true");
    EXPECT_OK(MPIX_Win_dup_with_info(win, si, &strict));
    EXPECT_OK(MPI_Win_set_errhandler(strict, MPI_ERRORS_RETURN));
    MPI_Info_free(&si);
    int flag = 1;
    EXPECT_OK(MPIX_Win_op_intrinsic("sum", 1, MPI_LONG, strict, &flag));
    CHECK_INT(flag, 0); /* nothing promised for a dynamic window as a whole */
    mixed_paths(win, strict);
    many_regions(win, strict);
    through_handle(win);
    range_wording(win);
    EXPECT_OK(MPI_Win_free(&strict));
    EXPECT_OK(MPI_Win_free(&win));
    MPI_Info_free(&shareable);
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
