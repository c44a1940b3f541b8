/* Contention from every origin on rank 0's memory: exclusive-lock read-modify-write
 * (lost updates show a broken lock), concurrent MPI_Accumulate / MPI_Fetch_and_op /
 * MPI_Get_accumulate under shared locks (accumulates are atomic per element), and a
 * compare-and-swap spin lock. Both window kinds that reach memory differently: allocated
 * (mapped) and created (cross-memory attach). */
#include "wtest.h"

#define ITERS 200
#define LEN 16

static void run(int created, int rank, int size)
{
    long *base, *mem = NULL;
    MPI_Win win;
    if (created) {
        mem = calloc(LEN + 2, sizeof(long));
        base = mem;
        MPI_Win_create(base, (LEN + 2) * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                       &win);
    } else {
        MPI_Win_allocate((LEN + 2) * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                         &base, &win);
        memset(base, 0, (LEN + 2) * sizeof(long));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const char *k = created ? "create" : "allocate";

    /* 1. get + put under an exclusive lock: no update lost. */
    for (int i = 0; i < ITERS; i++) {
        long v;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Get(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
        MPI_Win_flush(0, win);
        v += 1;
        MPI_Put(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
        MPI_Win_unlock(0, win);
    }
    /* 2. accumulates of a 16-long vector under a shared lock; fetch_and_op tickets. */
    long ones[LEN], got[LEN];
    for (int i = 0; i < LEN; i++)
        ones[i] = i + 1;
    long *tickets = malloc(ITERS * sizeof(long));
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < ITERS; i++) {
        MPI_Accumulate(ones, LEN, MPI_LONG, 0, 2, LEN, MPI_LONG, MPI_SUM, win);
        long one = 1;
        MPI_Fetch_and_op(&one, &tickets[i], MPI_LONG, 0, 1, MPI_SUM, win);
        if (i % 50 == 0) {
            MPI_Get_accumulate(ones, LEN, MPI_LONG, got, LEN, MPI_LONG, 0, 2, LEN, MPI_LONG,
                               MPI_SUM, win);
            /* Accumulates are atomic per element (MPI's guarantee; on allocated windows each
             * element is one CPU atomic), so a snapshot may see a vector half added. Each
             * element still holds a whole number of additions, never a torn value: got[e] is
             * c_e*(e+1) with 0 <= c_e <= every vector of every rank (+ this one's). */
            for (int e = 0; e < LEN; e++) {
                long c = got[e] / (e + 1);
                CHECK(got[e] % (e + 1) == 0 && c >= 0 && c <= (long)(ITERS + ITERS / 50 + 1) * size,
                      "%s get_acc snapshot elem %d = %ld, not a whole number of additions", k, e,
                      got[e]);
            }
        }
    }
    MPI_Win_unlock_all(win);
    for (int i = 1; i < ITERS; i++)
        CHECK(tickets[i] > tickets[i - 1], "%s tickets not increasing at %d", k, i);
    /* tickets are unique across ranks */
    long *all = rank == 0 ? malloc(ITERS * size * sizeof(long)) : NULL;
    MPI_Gather(tickets, ITERS, MPI_LONG, all, ITERS, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char *seen = calloc(ITERS * size, 1);
        for (int i = 0; i < ITERS * size; i++) {
            CHECK(all[i] >= 0 && all[i] < ITERS * size && !seen[all[i]], "%s ticket %ld twice or out of range", k, all[i]);
            if (all[i] >= 0 && all[i] < ITERS * size)
                seen[all[i]] = 1;
        }
        free(seen);
        free(all);
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        long vals[LEN + 2];
        MPI_Get(vals, LEN + 2, MPI_LONG, 0, 0, LEN + 2, MPI_LONG, win);
        MPI_Win_unlock(0, win);
        CHECK(vals[0] == (long)ITERS * size, "%s exclusive-lock counter %ld, expected %ld", k,
              vals[0], (long)ITERS * size);
        CHECK(vals[1] == (long)ITERS * size, "%s fetch_and_op counter %ld", k, vals[1]);
        long adds = (long)ITERS * size + (long)size * ((ITERS + 49) / 50);
        for (int e = 0; e < LEN; e++)
            CHECK(vals[2 + e] == adds * (e + 1), "%s accumulate elem %d = %ld, expected %ld", k, e,
                  vals[2 + e], adds * (e + 1));
    }
    free(tickets);

    /* 3. compare-and-swap mutex guarding a plain counter in element 1 of rank 1 (or 0). */
    int t = size - 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == t) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
        base[0] = 0;
        base[1] = 0;
        MPI_Win_unlock(t, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < ITERS / 4; i++) {
        long zero = 0, me = rank + 1, prev;
        do {
            MPI_Compare_and_swap(&me, &zero, &prev, MPI_LONG, t, 0, win);
        } while (prev != 0);
        long c;
        MPI_Get(&c, 1, MPI_LONG, t, 1, 1, MPI_LONG, win);
        MPI_Win_flush(t, win);
        c++;
        MPI_Put(&c, 1, MPI_LONG, t, 1, 1, MPI_LONG, win);
        MPI_Win_flush(t, win);
        MPI_Compare_and_swap(&zero, &me, &prev, MPI_LONG, t, 0, win);
        CHECK(prev == me, "%s cas unlock saw %ld", k, prev);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == t)
        CHECK(base[1] == (long)(ITERS / 4) * size, "%s cas-guarded counter %ld", k, base[1]);
    MPI_Win_free(&win);
    free(mem);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_rank = rank;
    run(0, rank, size);
    run(1, rank, size);
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
