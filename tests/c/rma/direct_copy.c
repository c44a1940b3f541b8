/* Plain puts and gets (one predefined type and count on both sides: the direct path's copy)
 * of every length its inline forms take (1, 2, 4, 8 and 16 bytes: one load and one store)
 * and of the lengths around them (3, 12, 24, 100: memmove), at every byte misalignment of
 * the target, on allocated windows and on created windows over MPI_Alloc_mem memory (mapped
 * everywhere). Each rank puts into the next rank's window under lock_all + flush; after a
 * barrier every target checks the bytes it received and that the bytes around them are
 * untouched, then the origin gets them back and compares. Last, a rank's put to its own
 * window from a buffer overlapping the target bytes moves what memmove would. */
#include "wtest.h"

#include <stdint.h>

#define WIN_BYTES 16384
/* MPI_Alloc_mem blocks of at least 64 KiB are shareable. */
#define SHAREABLE (64 * 1024)
#define FILL 0xEE

enum { ALLOCATED, CREATED_SHAREABLE, KINDS };
static const char *kinds[] = {"allocate", "create-shareable"};

/* The byte lengths tried, each with the predefined type whose one element (or count of
 * elements) makes it. */
static const struct {
    int len;
    MPI_Datatype type;
    int count;
} cases[] = {
    {1, MPI_CHAR, 1},   {2, MPI_SHORT, 1},   {4, MPI_INT, 1},    {8, MPI_LONG, 1},
    {8, MPI_BYTE, 8},   {16, MPI_C_DOUBLE_COMPLEX, 1},           {16, MPI_INT64_T, 2},
    {3, MPI_BYTE, 3},   {12, MPI_INT, 3},    {24, MPI_DOUBLE, 3}, {100, MPI_BYTE, 100},
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))
/* Each (case, misalignment) owns a 128-byte slot of the window. */
#define SLOT 128
#define MISALIGN 8

/* The byte the origin `origin` writes at position `i` of case `c`, misalignment `m`. */
static unsigned char pattern(int origin, int c, int m, int i)
{
    return (unsigned char)(origin * 31 + c * 7 + m * 3 + i + 1);
}

static void run(int kind)
{
    int rank = wtest_world_rank(), size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *base, *mem = NULL;
    MPI_Win win;
    if (kind == ALLOCATED) {
        MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    } else {
        MPI_Alloc_mem(SHAREABLE, MPI_INFO_NULL, &mem);
        base = mem;
        MPI_Win_create(base, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    memset(base, FILL, WIN_BYTES);
    MPI_Barrier(MPI_COMM_WORLD);

    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    unsigned char src[SLOT], back[SLOT];
    EXPECT_OK(MPI_Win_lock_all(0, win));
    for (int c = 0; c < NCASES; c++) {
        for (int m = 0; m < MISALIGN; m++) {
            for (int i = 0; i < cases[c].len; i++)
                src[i] = pattern(rank, c, m, i);
            MPI_Aint disp = (MPI_Aint)(c * MISALIGN + m) * SLOT + 8 + m;
            EXPECT_OK(MPI_Put(src, cases[c].count, cases[c].type, next, disp, cases[c].count,
                              cases[c].type, win));
            EXPECT_OK(MPI_Win_flush(next, win));
        }
    }
    EXPECT_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* What `prev` put here, and nothing around it. */
    for (int c = 0; c < NCASES; c++) {
        for (int m = 0; m < MISALIGN; m++) {
            unsigned char *slot = base + (c * MISALIGN + m) * SLOT;
            int at = 8 + m, bad = -1;
            for (int i = 0; i < SLOT && bad < 0; i++) {
                int inside = i >= at && i < at + cases[c].len;
                unsigned char want = inside ? pattern(prev, c, m, i - at) : FILL;
                if (slot[i] != want)
                    bad = i;
            }
            CHECK(bad < 0, "%s: %d-byte put (case %d) at misalignment %d: byte %d is %#x",
                  kinds[kind], cases[c].len, c, m, bad, bad < 0 ? 0 : slot[bad]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* And back by gets, into a buffer whose neighbours must stay untouched. */
    EXPECT_OK(MPI_Win_lock_all(0, win));
    for (int c = 0; c < NCASES; c++) {
        for (int m = 0; m < MISALIGN; m++) {
            memset(back, FILL, SLOT);
            MPI_Aint disp = (MPI_Aint)(c * MISALIGN + m) * SLOT + 8 + m;
            EXPECT_OK(MPI_Get(back + 1, cases[c].count, cases[c].type, next, disp,
                              cases[c].count, cases[c].type, win));
            EXPECT_OK(MPI_Win_flush(next, win));
            int bad = -1;
            for (int i = 0; i < SLOT && bad < 0; i++) {
                int inside = i >= 1 && i < 1 + cases[c].len;
                unsigned char want = inside ? pattern(rank, c, m, i - 1) : FILL;
                if (back[i] != want)
                    bad = i;
            }
            CHECK(bad < 0, "%s: %d-byte get (case %d) at misalignment %d: byte %d is %#x",
                  kinds[kind], cases[c].len, c, m, bad, bad < 0 ? 0 : back[bad]);
        }
    }
    EXPECT_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* A put to this rank's own window from bytes of that window, overlapping the target:
     * the bytes the origin held before the put arrive (memmove). */
    static const int shifts[][2] = {{3, 0}, {0, 5}, {8, 1}, {1, 8}, {0, 16}, {7, 0}};
    for (int s = 0; s < (int)(sizeof(shifts) / sizeof(shifts[0])); s++) {
        int from = shifts[s][0], to = shifts[s][1];
        for (int len = 1; len <= 16; len *= 2) {
            unsigned char want[64];
            for (int i = 0; i < 64; i++)
                base[i] = want[i] = (unsigned char)(i * 5 + len);
            memmove(want + to, want + from, len);
            EXPECT_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
            EXPECT_OK(MPI_Put(base + from, len, MPI_BYTE, rank, to, len, MPI_BYTE, win));
            EXPECT_OK(MPI_Win_unlock(rank, win));
            CHECK(memcmp(base, want, 64) == 0, "%s: overlapping %d-byte put from %d to %d",
                  kinds[kind], len, from, to);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    if (mem)
        MPI_Free_mem(mem);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    for (int kind = 0; kind < KINDS; kind++)
        run(kind);
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
