/* Accumulates of small elements (chars and shorts) from every rank at once onto rank 0, the
 * calls Weft runs a 64-bit word at a time on memory every process maps (issue 16: lane-wise
 * arithmetic in the aligned middle, element by element in the unaligned head and tail):
 * MPI_SUM on MPI_CHAR and MPI_UNSIGNED_CHAR with per-byte overflow, MPI_BXOR on bytes (a
 * value per iteration),
 * MPI_MIN, MPI_MAX (signed) and MPI_PROD on MPI_SHORT, every span starting off an 8-byte
 * boundary, each rank's values differing per element; then a get-accumulate whose fetched
 * bytes must be the totals. Exact expected values, on an allocated window, a created window
 * over MPI_Alloc_mem memory (mapped everywhere: CPU atomics) and one over malloc memory
 * (the accumulate mutex). */
#include "wtest.h"

#include <stdint.h>
#include <stdlib.h>

#define WIN_BYTES (64 * 1024) /* MPI_Alloc_mem blocks of at least 64 KiB are shareable */
#define NC 1001               /* chars per span */
#define NS 499                /* shorts per span */
#define ITER 40
/* Byte displacements: none on an 8-byte boundary. */
#define AT_SUM 3
#define AT_USUM (2048 + 5)
#define AT_XOR (4096 + 1)
#define AT_MIN (8192 + 2)
#define AT_MAX (12288 + 6)
#define AT_PROD (16384 + 4)

enum { ALLOCATED, CREATED_SHAREABLE, CREATED_PLAIN, KINDS };
static const char *kinds[] = {"allocate", "create over MPI_Alloc_mem", "create over malloc"};

/* What rank r puts into element i of each span. */
static signed char c_of(int r, int i) { return (signed char)(i * 7 + r * 13 + 100); }
static unsigned char u_of(int r, int i) { return (unsigned char)(i * 5 + r * 31 + 200); }
static unsigned char x_of(int r, int i) { return (unsigned char)(i * 11 + (r << 5) + 1); }
static short m_of(int r, int i) { return (short)((i * 97 + r * 1031) % 60000 - 30000); }
/* Odd factors (so products never collapse to 0 mod 2^16), negative on some elements. */
static short p_of(int r, int i) { return (short)(((i + r) % 3 == 0 ? -1 : 1) * (2 * ((i + r) % 4) + 1)); }
/* The initial contents. */
static unsigned char init_byte(int at) { return (unsigned char)(at * 3 + 1); }

static void init(unsigned char *mem)
{
    for (int b = 0; b < WIN_BYTES; b++)
        mem[b] = init_byte(b);
}

static short short_at(const unsigned char *mem, int at)
{
    short s;
    memcpy(&s, mem + at, sizeof s);
    return s;
}

static void check_totals(const unsigned char *mem, int size, const char *k)
{
    int bad = 0;
    unsigned char init_mem[WIN_BYTES];
    init(init_mem);
    for (int i = 0; i < NC && bad < 5; i++) {
        unsigned sum = (unsigned char)init_mem[AT_SUM + i], usum = init_mem[AT_USUM + i];
        unsigned char x = init_mem[AT_XOR + i];
        for (int r = 0; r < size; r++) {
            sum += ITER * (unsigned)(unsigned char)c_of(r, i);
            usum += ITER * (unsigned)u_of(r, i);
            for (int n = 0; n < ITER; n++)
                x ^= x_of(r, i) ^ (unsigned char)n;
        }
        if ((unsigned char)sum != mem[AT_SUM + i] || (unsigned char)usum != mem[AT_USUM + i] ||
            x != mem[AT_XOR + i]) {
            FAIL("%s: byte %d: sum %u usum %u xor %u, expected %u %u %u", k, i, mem[AT_SUM + i],
                 mem[AT_USUM + i], mem[AT_XOR + i], (unsigned char)sum, (unsigned char)usum, x);
            bad++;
        }
    }
    for (int i = 0; i < NS && bad < 10; i++) {
        short mn = short_at(init_mem, AT_MIN + 2 * i), mx = short_at(init_mem, AT_MAX + 2 * i);
        uint16_t prod = (uint16_t)short_at(init_mem, AT_PROD + 2 * i);
        for (int r = 0; r < size; r++) {
            short v = m_of(r, i);
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
            for (int n = 0; n < ITER; n++)
                prod = (uint16_t)(prod * (uint16_t)p_of(r, i));
        }
        short gmn = short_at(mem, AT_MIN + 2 * i), gmx = short_at(mem, AT_MAX + 2 * i);
        uint16_t gp = (uint16_t)short_at(mem, AT_PROD + 2 * i);
        if (gmn != mn || gmx != mx || gp != prod) {
            FAIL("%s: short %d: min %d max %d prod %u, expected %d %d %u", k, i, gmn, gmx, gp, mn,
                 mx, prod);
            bad++;
        }
    }
}

static void run(int kind)
{
    int rank = wtest_world_rank(), size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *k = kinds[kind];
    unsigned char *mem;
    MPI_Win win;
    if (kind == ALLOCATED) {
        MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    } else {
        if (kind == CREATED_SHAREABLE)
            MPI_Alloc_mem(WIN_BYTES, MPI_INFO_NULL, &mem);
        else
            mem = malloc(WIN_BYTES);
        MPI_Win_create(mem, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    init(mem);
    MPI_Barrier(MPI_COMM_WORLD);

    signed char c[NC];
    unsigned char u[NC], x[NC];
    short mn[NS], p[NS];
    for (int i = 0; i < NC; i++) {
        c[i] = c_of(rank, i);
        u[i] = u_of(rank, i);
    }
    for (int i = 0; i < NS; i++) {
        mn[i] = m_of(rank, i);
        p[i] = p_of(rank, i);
    }
    EXPECT_OK(MPI_Win_lock_all(0, win));
    for (int n = 0; n < ITER; n++) {
        for (int i = 0; i < NC; i++)
            x[i] = x_of(rank, i) ^ (unsigned char)n;
        EXPECT_OK(MPI_Accumulate(c, NC, MPI_CHAR, 0, AT_SUM, NC, MPI_CHAR, MPI_SUM, win));
        EXPECT_OK(MPI_Accumulate(u, NC, MPI_UNSIGNED_CHAR, 0, AT_USUM, NC, MPI_UNSIGNED_CHAR,
                                 MPI_SUM, win));
        EXPECT_OK(MPI_Accumulate(x, NC, MPI_BYTE, 0, AT_XOR, NC, MPI_BYTE, MPI_BXOR, win));
        EXPECT_OK(MPI_Accumulate(mn, NS, MPI_SHORT, 0, AT_MIN, NS, MPI_SHORT, MPI_MIN, win));
        EXPECT_OK(MPI_Accumulate(mn, NS, MPI_SHORT, 0, AT_MAX, NS, MPI_SHORT, MPI_MAX, win));
        EXPECT_OK(MPI_Accumulate(p, NS, MPI_SHORT, 0, AT_PROD, NS, MPI_SHORT, MPI_PROD, win));
        EXPECT_OK(MPI_Win_flush_local(0, win));
    }
    EXPECT_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Win_sync(win);
        check_totals(mem, size, k);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* The last rank fetches the totals with a get-accumulate (MPI_SUM of zeros): the bytes it
     * gets back are the target's, and the target is unchanged. */
    if (rank == size - 1) {
        unsigned char zero[NC] = {0}, got[NC];
        EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        EXPECT_OK(MPI_Get_accumulate(zero, NC, MPI_UNSIGNED_CHAR, got, NC, MPI_UNSIGNED_CHAR, 0,
                                     AT_USUM, NC, MPI_UNSIGNED_CHAR, MPI_SUM, win));
        EXPECT_OK(MPI_Win_unlock(0, win));
        for (int i = 0; i < NC; i++) {
            unsigned usum = init_byte(AT_USUM + i);
            for (int r = 0; r < size; r++)
                usum += ITER * (unsigned)u_of(r, i);
            if (got[i] != (unsigned char)usum) {
                FAIL("%s: get_accumulate byte %d: %u, expected %u", k, i, got[i],
                     (unsigned char)usum);
                break;
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        check_totals(mem, size, k);
    MPI_Win_free(&win);
    if (kind == CREATED_SHAREABLE)
        MPI_Free_mem(mem);
    else if (kind == CREATED_PLAIN)
        free(mem);
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
