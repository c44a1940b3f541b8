/* Dynamic windows: the regions each rank attaches are published to the other ranks, which
 * reach shareable MPI_Alloc_mem memory (info mpix_shareable=true, or 64 KiB and more) by
 * address and other memory by cross-memory attach.
 * - an access outside every attached region is MPI_ERR_RMA_RANGE, even where the target's
 *   memory is mapped (the rest of an MPI_Alloc_mem page);
 * - detach + attach of new memory: an origin that used the old region reaches the new one
 *   and is refused the old one;
 * - 40 regions (more than the first published table held): all reachable, values checked;
 * - a region attached through an MPIX_Win_dup_with_info duplicate is reached through the
 *   parent window;
 * - contention: every rank adds to rank 0's counters with MPI_Fetch_and_op, MPI_Accumulate
 *   and an MPI_Compare_and_swap loop, on MPI_Alloc_mem and malloc memory; totals checked;
 * - this process's own regions through the window. */
#include "wtest.h"

#define NREG 40
#define ROUNDS 200

static int rank, size;
static MPI_Info shareable;

static void all_addrs(void *p, MPI_Aint *out)
{
    MPI_Aint a;
    MPI_Get_address(p, &a);
    MPI_Allgather(&a, 1, MPI_AINT, out, 1, MPI_AINT, MPI_COMM_WORLD);
}

static void range_errors(MPI_Win win, MPI_Aint *addrs)
{
    int peer = (rank + 1) % size, v = 5, r = 0;
    /* 16 ints of a 4096-byte MPI_Alloc_mem block attached; ints 16.. are mapped but not
     * attached. */
    int *mem;
    MPI_Alloc_mem(4096, MPI_INFO_NULL, &mem);
    for (int i = 0; i < 1024; i++)
        mem[i] = rank * 10000 + i;
    EXPECT_OK(MPI_Win_attach(win, mem, 16 * sizeof(int)));
    all_addrs(mem, addrs);
    MPI_Aint at = addrs[peer];
    EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    EXPECT_OK(MPI_Get(&r, 1, MPI_INT, peer, at + 15 * sizeof(int), 1, MPI_INT, win));
    EXPECT_OK(MPI_Win_flush(peer, win));
    CHECK_INT(r, peer * 10000 + 15);
    EXPECT_ERR(MPI_Put(&v, 1, MPI_INT, peer, at + 16 * sizeof(int), 1, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Put", NULL);
    int two[2] = {1, 2};
    EXPECT_ERR(MPI_Put(two, 2, MPI_INT, peer, at + 15 * sizeof(int), 2, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Put", NULL);
    EXPECT_ERR(MPI_Get(&r, 1, MPI_INT, peer, at + 100 * sizeof(int), 1, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Get", NULL);
    EXPECT_ERR(MPI_Accumulate(&v, 1, MPI_INT, peer, at - sizeof(int), 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_RANGE, "MPI_Accumulate", NULL);
    EXPECT_ERR(MPI_Fetch_and_op(&v, &r, MPI_INT, peer, at + 16 * sizeof(int), MPI_SUM, win), MPI_ERR_RMA_RANGE, "MPI_Fetch_and_op", NULL);
    EXPECT_OK(MPI_Win_unlock(peer, win));
    MPI_Barrier(MPI_COMM_WORLD);
    /* Nothing past int 15 was touched. */
    CHECK_INT(mem[16], rank * 10000 + 16);
    CHECK_INT(mem[100], rank * 10000 + 100);

    /* Ints 16..31 attached as a second region: an access spanning both regions is allowed
     * (MPICH's win_dynamic_rma_flush_get makes them), one reaching int 32 is not. */
    EXPECT_OK(MPI_Win_attach(win, mem + 16, 16 * sizeof(int)));
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    int span[4] = {-1, -2, -3, -4};
    EXPECT_OK(MPI_Put(span, 4, MPI_INT, peer, at + 14 * sizeof(int), 4, MPI_INT, win));
    EXPECT_ERR(MPI_Put(span, 4, MPI_INT, peer, at + 30 * sizeof(int), 4, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Put", NULL);
    EXPECT_OK(MPI_Win_unlock(peer, win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mem[14] == -1 && mem[15] == -2 && mem[16] == -3 && mem[17] == -4, "span %d %d %d %d", mem[14], mem[15], mem[16], mem[17]);
    CHECK_INT(mem[32], rank * 10000 + 32);
    EXPECT_OK(MPI_Win_detach(win, mem + 16));

    /* Detach, attach other memory: the origin that used the old region reaches the new
     * one, and is refused the old one. */
    int *other;
    MPI_Alloc_mem(64 * sizeof(int), shareable, &other);
    for (int i = 0; i < 64; i++)
        other[i] = -1;
    EXPECT_OK(MPI_Win_detach(win, mem));
    EXPECT_OK(MPI_Win_attach(win, other, 64 * sizeof(int)));
    MPI_Aint *oaddrs = malloc(size * sizeof(MPI_Aint));
    all_addrs(other, oaddrs);
    EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    v = 100 + rank;
    EXPECT_OK(MPI_Put(&v, 1, MPI_INT, peer, oaddrs[peer] + 63 * sizeof(int), 1, MPI_INT, win));
    EXPECT_ERR(MPI_Get(&r, 1, MPI_INT, peer, at, 1, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Get", NULL);
    /* Past the region, inside the mapped block. */
    EXPECT_ERR(MPI_Put(&v, 1, MPI_INT, peer, oaddrs[peer] + 64 * sizeof(int), 1, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Put", NULL);
    EXPECT_ERR(MPI_Get(&r, 1, MPI_INT, peer, oaddrs[peer] + 64 * sizeof(int), 1, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Get", NULL);
    EXPECT_OK(MPI_Win_unlock(peer, win));
    MPI_Barrier(MPI_COMM_WORLD);
    int from = (rank + size - 1) % size;
    CHECK_INT(other[63], 100 + from);
    CHECK_INT(other[0], -1);
    EXPECT_OK(MPI_Win_detach(win, other));
    MPI_Free_mem(other);
    MPI_Free_mem(mem);
    free(oaddrs);
}

/* NREG regions of 4 ints each, alternately shareable MPI_Alloc_mem and malloc: the origin writes
 * every region of its peer and reads it back. */
static void many_regions(MPI_Win win)
{
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    int *reg[NREG];
    MPI_Aint *addrs = malloc(size * NREG * sizeof(MPI_Aint)), mine[NREG];
    for (int k = 0; k < NREG; k++) {
        if (k % 2)
            reg[k] = malloc(4 * sizeof(int));
        else
            MPI_Alloc_mem(4 * sizeof(int), shareable, &reg[k]);
        for (int i = 0; i < 4; i++)
            reg[k][i] = 0;
        EXPECT_OK(MPI_Win_attach(win, reg[k], 4 * sizeof(int)));
        MPI_Get_address(reg[k], &mine[k]);
    }
    MPI_Allgather(mine, NREG, MPI_AINT, addrs, NREG, MPI_AINT, MPI_COMM_WORLD);
    EXPECT_OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < NREG; k++) {
        int v[4] = {rank, k, 1000 + k, -k};
        EXPECT_OK(MPI_Put(v, 4, MPI_INT, peer, addrs[peer * NREG + k], 4, MPI_INT, win));
    }
    EXPECT_OK(MPI_Win_flush_all(win));
    for (int k = 0; k < NREG; k++) {
        int back[4] = {0};
        EXPECT_OK(MPI_Get(back, 4, MPI_INT, peer, addrs[peer * NREG + k], 4, MPI_INT, win));
        EXPECT_OK(MPI_Win_flush(peer, win));
        CHECK(back[0] == rank && back[1] == k && back[2] == 1000 + k && back[3] == -k,
              "region %d read back %d %d %d %d", k, back[0], back[1], back[2], back[3]);
    }
    EXPECT_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < NREG; k++) {
        CHECK(reg[k][0] == from && reg[k][1] == k && reg[k][2] == 1000 + k && reg[k][3] == -k,
              "region %d holds %d %d %d %d", k, reg[k][0], reg[k][1], reg[k][2], reg[k][3]);
        EXPECT_OK(MPI_Win_detach(win, reg[k]));
        if (k % 2)
            free(reg[k]);
        else
            MPI_Free_mem(reg[k]);
    }
    free(addrs);
}

/* A region attached through a duplicate is reached through the parent. */
static void through_dup(MPI_Win win)
{
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Win dup;
    EXPECT_OK(MPIX_Win_dup_with_info(win, MPI_INFO_NULL, &dup));
    long *mem;
    MPI_Alloc_mem(8 * sizeof(long), shareable, &mem);
    for (int i = 0; i < 8; i++)
        mem[i] = 0;
    EXPECT_OK(MPI_Win_attach(dup, mem, 8 * sizeof(long)));
    MPI_Aint *addrs = malloc(size * sizeof(MPI_Aint));
    all_addrs(mem, addrs);
    long v = 77 + rank;
    EXPECT_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win));
    EXPECT_OK(MPI_Put(&v, 1, MPI_LONG, peer, addrs[peer] + 3 * sizeof(long), 1, MPI_LONG, win));
    EXPECT_OK(MPI_Win_unlock(peer, win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mem[3] == 77 + from, "through the dup: %ld", mem[3]);
    EXPECT_OK(MPI_Win_detach(win, mem));
    EXPECT_OK(MPI_Win_free(&dup));
    MPI_Free_mem(mem);
    free(addrs);
}

/* Every rank adds to rank 0's counters, on shareable (c[0..3]) and malloc (m[0..1])
 * memory, with fetch-and-op, accumulate and a compare-and-swap loop, and reads its own
 * counters through the window. */
static void contention(MPI_Win win)
{
    long *c, *m = malloc(2 * sizeof(long));
    MPI_Alloc_mem(4 * sizeof(long), shareable, &c);
    for (int i = 0; i < 4; i++)
        c[i] = 0;
    m[0] = m[1] = 0;
    EXPECT_OK(MPI_Win_attach(win, c, 4 * sizeof(long)));
    EXPECT_OK(MPI_Win_attach(win, m, 2 * sizeof(long)));
    MPI_Aint ca[2], cm[2];
    MPI_Get_address(c, &ca[0]);
    MPI_Get_address(m, &ca[1]);
    MPI_Bcast(ca, 2, MPI_AINT, 0, MPI_COMM_WORLD);
    cm[0] = ca[1];
    MPI_Barrier(MPI_COMM_WORLD);
    long one = 1, old, cmp, got;
    EXPECT_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ROUNDS; i++) {
        EXPECT_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, ca[0], MPI_SUM, win));
        EXPECT_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, ca[0] + sizeof(long), 1, MPI_LONG, MPI_SUM, win));
        EXPECT_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, cm[0], MPI_SUM, win));
        EXPECT_OK(MPI_Win_flush(0, win));
        /* Increment c[2] by compare-and-swap. */
        EXPECT_OK(MPI_Fetch_and_op(&one, &cmp, MPI_LONG, 0, ca[0] + 2 * sizeof(long), MPI_NO_OP, win));
        EXPECT_OK(MPI_Win_flush(0, win));
        for (;;) {
            long next = cmp + 1;
            EXPECT_OK(MPI_Compare_and_swap(&next, &cmp, &got, MPI_LONG, 0, ca[0] + 2 * sizeof(long), win));
            EXPECT_OK(MPI_Win_flush(0, win));
            if (got == cmp)
                break;
            cmp = got;
        }
    }
    EXPECT_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long want = (long)ROUNDS * size;
        CHECK(c[0] == want, "fetch_and_op total %ld, want %ld", c[0], want);
        CHECK(c[1] == want, "accumulate total %ld, want %ld", c[1], want);
        CHECK(c[2] == want, "compare_and_swap total %ld, want %ld", c[2], want);
        CHECK(m[0] == want, "fetch_and_op (malloc) total %ld, want %ld", m[0], want);
        /* This process's own regions through the window. */
        long seen[3] = {0}, put = 4242;
        EXPECT_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        EXPECT_OK(MPI_Get(seen, 3, MPI_LONG, 0, ca[0], 3, MPI_LONG, win));
        EXPECT_OK(MPI_Put(&put, 1, MPI_LONG, 0, ca[0] + 3 * sizeof(long), 1, MPI_LONG, win));
        EXPECT_OK(MPI_Put(&put, 1, MPI_LONG, 0, cm[0] + sizeof(long), 1, MPI_LONG, win));
        EXPECT_OK(MPI_Win_unlock(0, win));
        CHECK(seen[0] == want && seen[1] == want && seen[2] == want, "own get %ld %ld %ld", seen[0], seen[1], seen[2]);
        CHECK(c[3] == 4242 && m[1] == 4242, "own put %ld %ld", c[3], m[1]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_Win_detach(win, c));
    EXPECT_OK(MPI_Win_detach(win, m));
    MPI_Free_mem(c);
    free(m);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_rank = rank;
    MPI_Info_create(&shareable);
    MPI_Info_set(shareable, "mpix_shareable", "true");
    MPI_Win win;
    EXPECT_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Aint *addrs = malloc(size * sizeof(MPI_Aint));
    range_errors(win, addrs);
    many_regions(win);
    through_dup(win);
    contention(win);
    EXPECT_OK(MPI_Win_free(&win));
    free(addrs);
    MPI_Info_free(&shareable);
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
