/* Every predefined op on every predefined type it is defined on, through MPI_Allreduce and
 * MPI_Reduce_local, checked against values computed here; combinations the standard does not
 * define fail with MPI_ERR_OP naming the function and the op. */
#include <complex.h>
#include <stdbool.h>
#include "wtest.h"

#define N 5
static int rank, size;

/* Each rank contributes v(rank, i); the reference folds all ranks in order. */
#define INT_TEST(T, DT, OPNAME, OP, EXPR)                                                \
    do {                                                                                 \
        T in[N], out[N], want[N];                                                        \
        for (int i = 0; i < N; i++) {                                                    \
            in[i] = (T)((rank * 3 + i * 5 + 1) % 7);                                     \
            for (int r = 0; r < size; r++) {                                             \
                T a = (T)((r * 3 + i * 5 + 1) % 7), b = want[i];                         \
                want[i] = r == 0 ? a : (T)(EXPR);                                        \
            }                                                                            \
        }                                                                                \
        EXPECT_OK(MPI_Allreduce(in, out, N, DT, OP, MPI_COMM_WORLD));                    \
        for (int i = 0; i < N; i++)                                                      \
            CHECK(out[i] == want[i], "%s %s [%d]: %lld != %lld", #DT, OPNAME, i,          \
                  (long long)out[i], (long long)want[i]);                                \
    } while (0)

#define INT_ALL(T, DT)                                                                   \
    do {                                                                                 \
        INT_TEST(T, DT, "SUM", MPI_SUM, a + b);                                          \
        INT_TEST(T, DT, "PROD", MPI_PROD, a * b);                                        \
        INT_TEST(T, DT, "MAX", MPI_MAX, a > b ? a : b);                                  \
        INT_TEST(T, DT, "MIN", MPI_MIN, a < b ? a : b);                                  \
        INT_TEST(T, DT, "BAND", MPI_BAND, a & b);                                        \
        INT_TEST(T, DT, "BOR", MPI_BOR, a | b);                                          \
        INT_TEST(T, DT, "BXOR", MPI_BXOR, a ^ b);                                        \
        INT_TEST(T, DT, "LAND", MPI_LAND, a && b);                                       \
        INT_TEST(T, DT, "LOR", MPI_LOR, a || b);                                         \
        INT_TEST(T, DT, "LXOR", MPI_LXOR, (!a) != (!b));                                 \
    } while (0)

#define FLOAT_ALL(T, DT)                                                                 \
    do {                                                                                 \
        INT_TEST(T, DT, "SUM", MPI_SUM, a + b);                                          \
        INT_TEST(T, DT, "PROD", MPI_PROD, a * b);                                        \
        INT_TEST(T, DT, "MAX", MPI_MAX, a > b ? a : b);                                  \
        INT_TEST(T, DT, "MIN", MPI_MIN, a < b ? a : b);                                  \
    } while (0)

static void expect_op_error(MPI_Datatype dt, MPI_Op op, const char *opname)
{
    char in[64] = {0}, out[64] = {0};
    EXPECT_ERR(MPI_Allreduce(in, out, 1, dt, op, MPI_COMM_WORLD), MPI_ERR_OP, "MPI_Allreduce",
               opname);
    EXPECT_ERR(MPI_Reduce_local(in, out, 1, dt, op), MPI_ERR_OP, "MPI_Reduce_local", opname);
}

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    INT_ALL(signed char, MPI_SIGNED_CHAR);
    INT_ALL(unsigned char, MPI_UNSIGNED_CHAR);
    INT_ALL(short, MPI_SHORT);
    INT_ALL(unsigned short, MPI_UNSIGNED_SHORT);
    INT_ALL(int, MPI_INT);
    INT_ALL(unsigned, MPI_UNSIGNED);
    INT_ALL(long, MPI_LONG);
    INT_ALL(unsigned long, MPI_UNSIGNED_LONG);
    INT_ALL(long long, MPI_LONG_LONG);
    INT_ALL(unsigned long long, MPI_UNSIGNED_LONG_LONG);
    INT_ALL(int8_t, MPI_INT8_T);
    INT_ALL(uint8_t, MPI_UINT8_T);
    INT_ALL(int16_t, MPI_INT16_T);
    INT_ALL(uint16_t, MPI_UINT16_T);
    INT_ALL(int32_t, MPI_INT32_T);
    INT_ALL(uint32_t, MPI_UINT32_T);
    INT_ALL(int64_t, MPI_INT64_T);
    INT_ALL(uint64_t, MPI_UINT64_T);
    INT_ALL(MPI_Aint, MPI_AINT);
    INT_ALL(MPI_Offset, MPI_OFFSET);
    INT_ALL(MPI_Count, MPI_COUNT);
    INT_ALL(int, MPI_INTEGER);
    FLOAT_ALL(float, MPI_FLOAT);
    FLOAT_ALL(double, MPI_DOUBLE);
    FLOAT_ALL(float, MPI_REAL);
    FLOAT_ALL(double, MPI_DOUBLE_PRECISION);

    /* Byte: bitwise ops only. */
    INT_TEST(unsigned char, MPI_BYTE, "BAND", MPI_BAND, a & b);
    INT_TEST(unsigned char, MPI_BYTE, "BOR", MPI_BOR, a | b);
    INT_TEST(unsigned char, MPI_BYTE, "BXOR", MPI_BXOR, a ^ b);

    /* C bool and Fortran logical. */
    {
        bool in[N], out[N];
        for (int i = 0; i < N; i++)
            in[i] = (rank + i) % 2;
        EXPECT_OK(MPI_Allreduce(in, out, N, MPI_C_BOOL, MPI_LOR, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            CHECK_INT(out[i], size > 1 ? 1 : (i % 2));
        EXPECT_OK(MPI_Allreduce(in, out, N, MPI_C_BOOL, MPI_LAND, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            CHECK_INT(out[i], size > 1 ? 0 : (i % 2));
        int lin[N], lout[N];
        for (int i = 0; i < N; i++)
            lin[i] = rank == 0 && i == 2;
        EXPECT_OK(MPI_Allreduce(lin, lout, N, MPI_LOGICAL, MPI_LXOR, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            CHECK_INT(lout[i], i == 2);
    }

    /* Complex sums and products. */
    {
        double complex in[N], out[N], want[N];
        for (int i = 0; i < N; i++) {
            in[i] = (rank + 1) + i * I;
            want[i] = 1;
            for (int r = 0; r < size; r++)
                want[i] *= (r + 1) + i * I;
        }
        EXPECT_OK(MPI_Allreduce(in, out, N, MPI_C_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            CHECK(creal(out[i]) == creal(want[i]) && cimag(out[i]) == cimag(want[i]), "complex prod [%d]", i);
        float complex fin[N], fout[N];
        for (int i = 0; i < N; i++)
            fin[i] = rank + 2.0f * i * I;
        EXPECT_OK(MPI_Allreduce(fin, fout, N, MPI_C_FLOAT_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            CHECK(crealf(fout[i]) == size * (size - 1) / 2 && cimagf(fout[i]) == 2.0f * i * size,
                  "complex sum [%d]", i);
    }

    /* MINLOC / MAXLOC on the gap-free pair types. */
    {
        struct { int v, i; } in[N], out[N];
        for (int i = 0; i < N; i++) {
            in[i].v = (rank * 7 + i) % 3;
            in[i].i = rank;
        }
        EXPECT_OK(MPI_Allreduce(in, out, N, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++) {
            int best = 1 << 30, at = -1;
            for (int r = 0; r < size; r++)
                if ((r * 7 + i) % 3 < best) {
                    best = (r * 7 + i) % 3;
                    at = r;
                }
            CHECK(out[i].v == best && out[i].i == at, "2INT minloc [%d]: (%d,%d) != (%d,%d)", i,
                  out[i].v, out[i].i, best, at);
        }
        struct { float v; int i; } fin[N], fout[N];
        for (int i = 0; i < N; i++) {
            fin[i].v = (float)((rank + i) % 4);
            fin[i].i = rank;
        }
        EXPECT_OK(MPI_Allreduce(fin, fout, N, MPI_FLOAT_INT, MPI_MAXLOC, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++) {
            float best = -1;
            int at = -1;
            for (int r = 0; r < size; r++)
                if ((float)((r + i) % 4) > best) {
                    best = (float)((r + i) % 4);
                    at = r;
                }
            CHECK(fout[i].v == best && fout[i].i == at, "FLOAT_INT maxloc [%d]", i);
        }
        struct { double v; int i; } din[N], dout[N];
        for (int i = 0; i < N; i++) {
            din[i].v = -(double)((rank + i) % 3);
            din[i].i = rank;
        }
        EXPECT_OK(MPI_Allreduce(din, dout, N, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++) {
            double best = 1;
            int at = -1;
            for (int r = 0; r < size; r++)
                if (-(double)((r + i) % 3) < best) {
                    best = -(double)((r + i) % 3);
                    at = r;
                }
            CHECK(dout[i].v == best && dout[i].i == at, "DOUBLE_INT minloc [%d]", i);
        }
    }

    /* Reduce_local with REPLACE and NO_OP. */
    {
        int a[3] = {1, 2, 3}, b[3] = {7, 8, 9};
        EXPECT_OK(MPI_Reduce_local(a, b, 3, MPI_INT, MPI_NO_OP));
        CHECK_INT(b[0], 7);
        EXPECT_OK(MPI_Reduce_local(a, b, 3, MPI_INT, MPI_REPLACE));
        CHECK_INT(b[2], 3);
    }

    /* Undefined combinations. */
    expect_op_error(MPI_BYTE, MPI_SUM, "MPI_SUM");
    expect_op_error(MPI_DOUBLE, MPI_BAND, "MPI_BAND");
    expect_op_error(MPI_C_DOUBLE_COMPLEX, MPI_MAX, "MPI_MAX");
    expect_op_error(MPI_INT, MPI_MINLOC, "MPI_MINLOC");
    expect_op_error(MPI_2INT, MPI_SUM, "MPI_SUM");
    {
        int x = 0, y = 0;
        EXPECT_ERR(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP,
                   "MPI_Allreduce", "op");
        EXPECT_ERR(MPI_Allreduce(&x, &y, 1, MPI_INT, (MPI_Op)WTEST_GARBAGE, MPI_COMM_WORLD),
                   MPI_ERR_OP, "MPI_Allreduce", "op");
        EXPECT_ERR(MPI_Allreduce(&x, &y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT,
                   "MPI_Allreduce", "count");
        EXPECT_ERR(MPI_Allreduce(&x, &y, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD),
                   MPI_ERR_TYPE, "MPI_Allreduce", "datatype");
        EXPECT_ERR(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM,
                   "MPI_Allreduce", "comm");
        EXPECT_ERR(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, size, MPI_COMM_WORLD), MPI_ERR_ROOT,
                   "MPI_Reduce", "root");
        EXPECT_ERR(MPI_Bcast(&x, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT, "MPI_Bcast",
                   "root");
        EXPECT_ERR(MPI_Bcast(NULL, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "MPI_Bcast",
                   "buffer");
        EXPECT_ERR(MPI_Barrier((MPI_Comm)WTEST_GARBAGE), MPI_ERR_COMM, "MPI_Barrier", "comm");
    }
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
