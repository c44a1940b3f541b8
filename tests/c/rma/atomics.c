/* Accumulate-type operations with plain arguments (one predefined type, predefined op), the
 * calls the direct path runs by CPU atomics on allocated windows: MPI_Fetch_and_op with every
 * op on integer and floating types of 1, 2, 4 and 8 bytes, MPI_Get_accumulate on vectors
 * (MPI_NO_OP with a null origin, MPI_REPLACE), MPI_Accumulate, MPI_Compare_and_swap on each
 * integer size, values checked. Then: misaligned elements (the mutex path), MPI_PROC_NULL,
 * the errors the direct path leaves to the general one, and concurrent sums from every rank
 * mixing the direct path with the general one (a derived type) on one element: nothing lost.
 * The same on every kind of window: allocated; created over calloc memory (cross-memory
 * attach, the accumulate mutex); created over MPI_Alloc_mem memory (shareable: mapped in
 * every process, CPU atomics, which MPIX_Win_op_intrinsic must report); and created over
 * MPI_Alloc_mem memory on rank 0 only (mapped, but not everywhere: the mutex for all). */
#include "wtest.h"

#include <stdint.h>

#define SLOTS 64
/* MPI_Alloc_mem blocks of at least 64 KiB are shareable. */
#define SHAREABLE (64 * 1024)

enum { ALLOCATED, CREATED, CREATED_SHAREABLE, CREATED_MIXED, KINDS };
static const char *kinds[] = {"allocate", "create", "create-shareable", "create-mixed"};

static MPI_Win make(int kind, int64_t **base)
{
    MPI_Win win;
    int rank = wtest_world_rank();
    if (kind == CREATED_SHAREABLE || (kind == CREATED_MIXED && rank == 0)) {
        MPI_Alloc_mem(SHAREABLE, MPI_INFO_NULL, base);
        memset(*base, 0, SLOTS * sizeof(int64_t));
        MPI_Win_create(*base, SLOTS * sizeof(int64_t), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else if (kind != ALLOCATED) {
        *base = calloc(SLOTS, sizeof(int64_t));
        MPI_Win_create(*base, SLOTS * sizeof(int64_t), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else {
        MPI_Win_allocate(SLOTS * sizeof(int64_t), 1, MPI_INFO_NULL, MPI_COMM_WORLD, base, &win);
        memset(*base, 0, SLOTS * sizeof(int64_t));
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int flag = -1;
    EXPECT_OK(MPIX_Win_op_intrinsic("sum,cas", 1, MPI_LONG, win, &flag));
    int atomics = kind == ALLOCATED || kind == CREATED_SHAREABLE;
    CHECK(flag == atomics, "%s window: MPIX_Win_op_intrinsic says %d", kinds[kind], flag);
    MPI_Barrier(MPI_COMM_WORLD);
    return win;
}

static void drop(int kind, int64_t *base, MPI_Win *win)
{
    MPI_Win_free(win);
    if (kind == CREATED_SHAREABLE || (kind == CREATED_MIXED && wtest_world_rank() == 0))
        MPI_Free_mem(base);
    else if (kind != ALLOCATED)
        free(base);
}

/* One fetch_and_op on a long at byte displacement 0 of `t`: checks the value fetched,
 * returns it. */
static long fop_long(long v, MPI_Op op, int t, MPI_Win win, long expect, const char *what)
{
    long got = -999;
    EXPECT_OK(MPI_Fetch_and_op(&v, &got, MPI_LONG, t, 0, op, win));
    EXPECT_OK(MPI_Win_flush(t, win));
    CHECK(got == expect, "%s: fetched %ld, expected %ld", what, got, expect);
    return got;
}

static void ops(int kind)
{
    int rank = wtest_world_rank(), size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t *base;
    MPI_Win win = make(kind, &base);
    const char *k = kinds[kind];
    int t = (rank + 1) % size;
    char what[64];
    MPI_Win_lock_all(0, win);

    /* Longs, every op, in a chain starting from 0 (each step fetches the previous value). */
    struct {
        MPI_Op op;
        long v, after;
    } chain[] = {
        {MPI_SUM, 10, 10},      {MPI_PROD, 3, 30},     {MPI_MAX, 7, 30},  {MPI_MIN, 12, 12},
        {MPI_BAND, 6, 4},       {MPI_BOR, 9, 13},      {MPI_BXOR, 5, 8},  {MPI_LAND, 0, 0},
        {MPI_LOR, 4, 1},        {MPI_LXOR, 1, 0},      {MPI_REPLACE, -77, -77},
        {MPI_NO_OP, 12345, -77}, {MPI_SUM, -3, -80},
    };
    long prev = 0;
    for (size_t i = 0; i < sizeof chain / sizeof chain[0]; i++) {
        snprintf(what, sizeof what, "%s long step %zu", k, i);
        fop_long(chain[i].v, chain[i].op, t, win, prev, what);
        prev = chain[i].after;
    }
    long now = 0;
    EXPECT_OK(MPI_Fetch_and_op(NULL, &now, MPI_LONG, t, 0, MPI_NO_OP, win));
    CHECK(now == -80, "%s long final %ld", k, now);

    /* Doubles at byte 8, 4-byte ints at 16, 2-byte at 20, 1-byte at 22. */
    double d = 1.5, dg;
    EXPECT_OK(MPI_Fetch_and_op(&d, &dg, MPI_DOUBLE, t, 8, MPI_SUM, win));
    d = 4.0;
    EXPECT_OK(MPI_Fetch_and_op(&d, &dg, MPI_DOUBLE, t, 8, MPI_PROD, win));
    CHECK(dg == 1.5, "%s double prod fetched %g", k, dg);
    d = -2.0;
    EXPECT_OK(MPI_Fetch_and_op(&d, &dg, MPI_DOUBLE, t, 8, MPI_MIN, win));
    EXPECT_OK(MPI_Fetch_and_op(NULL, &dg, MPI_DOUBLE, t, 8, MPI_NO_OP, win));
    CHECK(dg == -2.0, "%s double min gave %g", k, dg);
    int32_t i4 = 1000, g4;
    EXPECT_OK(MPI_Fetch_and_op(&i4, &g4, MPI_INT32_T, t, 16, MPI_SUM, win));
    EXPECT_OK(MPI_Fetch_and_op(&i4, &g4, MPI_INT32_T, t, 16, MPI_SUM, win));
    CHECK(g4 == 1000, "%s int32 sum fetched %d", k, g4);
    int16_t i2 = -5, g2;
    EXPECT_OK(MPI_Fetch_and_op(&i2, &g2, MPI_INT16_T, t, 20, MPI_MIN, win));
    EXPECT_OK(MPI_Fetch_and_op(&i2, &g2, MPI_INT16_T, t, 20, MPI_SUM, win));
    CHECK(g2 == -5, "%s int16 fetched %d", k, g2);
    int8_t i1 = 100, g1;
    EXPECT_OK(MPI_Fetch_and_op(&i1, &g1, MPI_INT8_T, t, 22, MPI_SUM, win));
    EXPECT_OK(MPI_Fetch_and_op(&i1, &g1, MPI_INT8_T, t, 22, MPI_SUM, win));
    CHECK(g1 == 100, "%s int8 fetched %d", k, g1);
    EXPECT_OK(MPI_Fetch_and_op(NULL, &g1, MPI_INT8_T, t, 22, MPI_NO_OP, win));
    CHECK(g1 == (int8_t)200, "%s int8 wraps: %d", k, g1);

    /* Vectors: accumulate, get_accumulate (sum, replace, no_op with a null origin). */
    int32_t v[4] = {1, 2, 3, 4}, r[4];
    EXPECT_OK(MPI_Accumulate(v, 4, MPI_INT32_T, t, 32, 4, MPI_INT32_T, MPI_SUM, win));
    EXPECT_OK(MPI_Accumulate(v, 4, MPI_INT32_T, t, 32, 4, MPI_INT32_T, MPI_SUM, win));
    EXPECT_OK(MPI_Get_accumulate(v, 4, MPI_INT32_T, r, 4, MPI_INT32_T, t, 32, 4, MPI_INT32_T,
                                 MPI_REPLACE, win));
    for (int i = 0; i < 4; i++)
        CHECK(r[i] == 2 * (i + 1), "%s acc vector %d = %d", k, i, r[i]);
    EXPECT_OK(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, r, 4, MPI_INT32_T, t, 32, 4,
                                 MPI_INT32_T, MPI_NO_OP, win));
    for (int i = 0; i < 4; i++)
        CHECK(r[i] == i + 1, "%s replaced vector %d = %d", k, i, r[i]);

    /* Compare-and-swap on each integer size: a swap, then a failed compare. */
    int64_t c8 = -80, n8 = 42, o8;
    EXPECT_OK(MPI_Compare_and_swap(&n8, &c8, &o8, MPI_INT64_T, t, 0, win));
    EXPECT_OK(MPI_Compare_and_swap(&c8, &c8, &o8, MPI_INT64_T, t, 0, win));
    CHECK(o8 == 42, "%s cas int64 left %ld", k, (long)o8);
    int32_t c4 = 2000, n4 = 7, o4;
    EXPECT_OK(MPI_Compare_and_swap(&n4, &c4, &o4, MPI_INT32_T, t, 16, win));
    CHECK(o4 == 2000, "%s cas int32 fetched %d", k, o4);
    EXPECT_OK(MPI_Compare_and_swap(&c4, &c4, &o4, MPI_INT32_T, t, 16, win));
    CHECK(o4 == 7, "%s cas int32 left %d", k, o4);
    int16_t c2 = -10, n2 = 3, o2;
    EXPECT_OK(MPI_Compare_and_swap(&n2, &c2, &o2, MPI_INT16_T, t, 20, win));
    CHECK(o2 == -10, "%s cas int16 fetched %d", k, o2);
    unsigned char c1 = 200, n1 = 9, o1;
    EXPECT_OK(MPI_Compare_and_swap(&n1, &c1, &o1, MPI_BYTE, t, 22, win));
    EXPECT_OK(MPI_Compare_and_swap(&n1, &c1, &o1, MPI_BYTE, t, 22, win));
    CHECK(o1 == 9, "%s cas byte left %d", k, o1);

    /* A long off 8-byte alignment (byte 52): correct on the mutex path. */
    long m = 5, mg;
    EXPECT_OK(MPI_Fetch_and_op(&m, &mg, MPI_LONG, t, 52, MPI_SUM, win));
    EXPECT_OK(MPI_Fetch_and_op(&m, &mg, MPI_LONG, t, 52, MPI_SUM, win));
    CHECK(mg == 5, "%s misaligned fop fetched %ld", k, mg);

    /* MPI_PROC_NULL: nothing happens, the result is untouched. */
    mg = 31;
    EXPECT_OK(MPI_Fetch_and_op(&m, &mg, MPI_LONG, MPI_PROC_NULL, 0, MPI_SUM, win));
    EXPECT_OK(MPI_Compare_and_swap(&m, &m, &mg, MPI_LONG, MPI_PROC_NULL, 0, win));
    CHECK(mg == 31, "%s PROC_NULL wrote the result: %ld", k, mg);

    /* Errors the direct path hands to the general one, each reported. */
    EXPECT_ERR(MPI_Fetch_and_op(&m, &mg, MPI_LONG, t, SLOTS * 8 - 4, MPI_SUM, win),
               MPI_ERR_RMA_RANGE, "MPI_Fetch_and_op", NULL);
    EXPECT_ERR(MPI_Fetch_and_op(&m, &mg, MPI_LONG, t, -8, MPI_SUM, win), MPI_ERR_DISP,
               "MPI_Fetch_and_op", NULL);
    EXPECT_ERR(MPI_Fetch_and_op(&m, &mg, MPI_LONG, size, 0, MPI_SUM, win), MPI_ERR_RANK,
               "MPI_Fetch_and_op", NULL);
    EXPECT_ERR(MPI_Fetch_and_op(&m, &mg, MPI_LONG, t, 0, MPI_MAXLOC, win), MPI_ERR_OP,
               "MPI_Fetch_and_op", NULL);
    EXPECT_ERR(MPI_Fetch_and_op(&d, &dg, MPI_DOUBLE, t, 8, MPI_BAND, win), MPI_ERR_OP,
               "MPI_Fetch_and_op", NULL);
    EXPECT_ERR(MPI_Compare_and_swap(&d, &d, &dg, MPI_DOUBLE, t, 8, win), MPI_ERR_TYPE,
               "MPI_Compare_and_swap", NULL);
    EXPECT_ERR(MPI_Get_accumulate(v, 4, MPI_INT32_T, r, 3, MPI_INT32_T, t, 32, 4, MPI_INT32_T,
                                  MPI_SUM, win),
               MPI_ERR_TYPE, "MPI_Get_accumulate", NULL);
    MPI_Win_unlock_all(win);
    EXPECT_ERR(MPI_Fetch_and_op(&m, &mg, MPI_LONG, t, 0, MPI_SUM, win), MPI_ERR_RMA_SYNC,
               "MPI_Fetch_and_op", NULL);
    EXPECT_ERR(MPI_Compare_and_swap(&m, &m, &mg, MPI_LONG, t, 0, win), MPI_ERR_RMA_SYNC,
               "MPI_Compare_and_swap", NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    drop(kind, base, &win);
}

/* Every rank adds to rank 0's element 0, alternating the direct path (MPI_LONG) with the
 * general one (a contiguous derived type of one long): the two must stay atomic with each
 * other. */
static void mixed(int kind)
{
    int rank = wtest_world_rank(), size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t *base;
    MPI_Win win = make(kind, &base);
    MPI_Datatype one;
    MPI_Type_contiguous(1, MPI_LONG, &one);
    MPI_Type_commit(&one);
    enum { N = 2000 };
    long v = 1, got;
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < N; i++) {
        if (i % 2)
            MPI_Accumulate(&v, 1, one, 0, 0, 1, one, MPI_SUM, win);
        else
            MPI_Fetch_and_op(&v, &got, MPI_LONG, 0, 0, MPI_SUM, win);
    }
    MPI_Win_flush_all(win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(base[0] == (int64_t)N * size, "%s mixed sums: %ld, expected %ld", kinds[kind],
              (long)base[0], (long)N * size);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&one);
    drop(kind, base, &win);
}

/* Single elements whose op is one CPU instruction travel in registers (the word path):
 * values of every width are truncated and zero-extended right (unsigned wraps, signed
 * negatives, a 1-byte logical), one-element MPI_Accumulate and MPI_Get_accumulate (MPI_NO_OP
 * with a null origin) take it too, and the element's bytes around it stay untouched. */
static void words(int kind)
{
    int rank = wtest_world_rank(), size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t *base;
    MPI_Win win = make(kind, &base);
    const char *k = kinds[kind];
    int t = (rank + 1) % size;
    MPI_Win_lock_all(0, win);
    /* uint32 at byte 8: 0xfffffffe + 3 wraps to 1; the neighbouring bytes stay 0. */
    uint32_t u4 = 0xfffffffeu, g4;
    EXPECT_OK(MPI_Fetch_and_op(&u4, &g4, MPI_UINT32_T, t, 8, MPI_REPLACE, win));
    u4 = 3;
    EXPECT_OK(MPI_Accumulate(&u4, 1, MPI_UINT32_T, t, 8, 1, MPI_UINT32_T, MPI_SUM, win));
    EXPECT_OK(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, &g4, 1, MPI_UINT32_T, t, 8, 1,
                                 MPI_UINT32_T, MPI_NO_OP, win));
    CHECK(g4 == 1, "%s uint32 wrap gave %u", k, g4);
    int64_t whole;
    EXPECT_OK(MPI_Get(&whole, 1, MPI_INT64_T, t, 8, 1, MPI_INT64_T, win));
    EXPECT_OK(MPI_Win_flush(t, win));
    CHECK(whole == 1, "%s the uint32's neighbours changed: %ld", k, (long)whole);
    /* int16 at byte 16: -300 ^ 0x0f0f by a one-element get_accumulate. */
    int16_t s2 = -300, x2 = 0x0f0f, g2 = 0;
    EXPECT_OK(MPI_Fetch_and_op(&s2, &g2, MPI_INT16_T, t, 16, MPI_REPLACE, win));
    EXPECT_OK(MPI_Get_accumulate(&x2, 1, MPI_INT16_T, &g2, 1, MPI_INT16_T, t, 16, 1,
                                 MPI_INT16_T, MPI_BXOR, win));
    CHECK(g2 == -300, "%s int16 get_accumulate fetched %d", k, g2);
    EXPECT_OK(MPI_Fetch_and_op(NULL, &g2, MPI_INT16_T, t, 16, MPI_NO_OP, win));
    CHECK(g2 == (int16_t)(-300 ^ 0x0f0f), "%s int16 xor gave %d", k, g2);
    /* uint8 at byte 24: band, bor, then 250 + 10 wraps to 4. */
    uint8_t b1 = 0xf6, g1;
    EXPECT_OK(MPI_Fetch_and_op(&b1, &g1, MPI_UINT8_T, t, 24, MPI_REPLACE, win));
    b1 = 0xfe;
    EXPECT_OK(MPI_Accumulate(&b1, 1, MPI_UINT8_T, t, 24, 1, MPI_UINT8_T, MPI_BAND, win));
    b1 = 0x04;
    EXPECT_OK(MPI_Accumulate(&b1, 1, MPI_UINT8_T, t, 24, 1, MPI_UINT8_T, MPI_BOR, win));
    b1 = 10;
    EXPECT_OK(MPI_Fetch_and_op(&b1, &g1, MPI_UINT8_T, t, 24, MPI_SUM, win));
    CHECK(g1 == 0xf6, "%s uint8 band|bor gave %u", k, g1);
    EXPECT_OK(MPI_Fetch_and_op(NULL, &g1, MPI_UINT8_T, t, 24, MPI_NO_OP, win));
    CHECK(g1 == 0, "%s uint8 wrap gave %u", k, g1);
    /* A float replaced and read back bit for bit; a C bool compared and swapped. */
    float f = -0.375f, fg;
    EXPECT_OK(MPI_Fetch_and_op(&f, &fg, MPI_FLOAT, t, 32, MPI_REPLACE, win));
    EXPECT_OK(MPI_Fetch_and_op(NULL, &fg, MPI_FLOAT, t, 32, MPI_NO_OP, win));
    CHECK(fg == -0.375f, "%s float replace gave %g", k, fg);
    _Bool no = 0, yes = 1, bo = 1;
    EXPECT_OK(MPI_Compare_and_swap(&yes, &no, &bo, MPI_C_BOOL, t, 40, win));
    CHECK(bo == 0, "%s bool cas fetched %d", k, bo);
    EXPECT_OK(MPI_Compare_and_swap(&no, &no, &bo, MPI_C_BOOL, t, 40, win));
    CHECK(bo == 1, "%s bool cas left %d", k, bo);
    /* A failed compare leaves a negative int64 as it was. */
    int64_t neg = -5, cmp = 7, one = 1, o8;
    EXPECT_OK(MPI_Fetch_and_op(&neg, &o8, MPI_INT64_T, t, 48, MPI_REPLACE, win));
    EXPECT_OK(MPI_Compare_and_swap(&one, &cmp, &o8, MPI_INT64_T, t, 48, win));
    CHECK(o8 == -5, "%s failed cas fetched %ld", k, (long)o8);
    EXPECT_OK(MPI_Fetch_and_op(&one, &o8, MPI_INT64_T, t, 48, MPI_SUM, win));
    CHECK(o8 == -5, "%s failed cas changed the value: %ld", k, (long)o8);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    drop(kind, base, &win);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    for (int kind = 0; kind < KINDS; kind++) {
        ops(kind);
        words(kind);
        mixed(kind);
    }
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
