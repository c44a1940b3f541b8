/* SUM and PROD on long double (x87 extended), long double complex and REAL*16 (binary128):
 * MPI_Reduce_local bit for bit against the C compiler's own arithmetic on many random
 * values (subnormals, huge values, cancellation included), and an allreduce whose exact
 * result a double could not hold. */
#include "wtest.h"
#include <complex.h>
#include <math.h>

#define M 4000
static unsigned long long seed = 88172645463325252ULL;
static unsigned long long next(void)
{
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return seed;
}

static long double rnd_ld(void)
{
    long double m = (long double)(next() >> 1) / 9223372036854775808.0L; /* [0,1) 63 bits */
    int kind = next() % 10;
    int e = kind == 0 ? -16440 + (int)(next() % 60) /* subnormal range */
            : kind == 1 ? 16300 + (int)(next() % 80) /* near overflow */
                        : (int)(next() % 200) - 100;
    long double v = ldexpl(m + (next() & 1), e);
    return (next() & 1) ? -v : v;
}

static int same_ld(long double a, long double b)
{
    return memcmp(&a, &b, 10) == 0 || (isnan(a) && isnan(b));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_world_rank();
    seed += rank;
    static long double a[M], b[M], c[M];
    for (int op = 0; op < 2; op++) {
        for (int i = 0; i < M; i++) {
            a[i] = rnd_ld();
            b[i] = (i % 7 == 0) ? -a[i] * (1 + ldexpl(1, -(int)(next() % 70))) : rnd_ld();
            memset(&c[i], 0, sizeof c[i]);
            c[i] = op == 0 ? a[i] + b[i] : a[i] * b[i];
        }
        EXPECT_OK(MPI_Reduce_local(a, b, M, MPI_LONG_DOUBLE, op == 0 ? MPI_SUM : MPI_PROD));
        int bad = 0;
        for (int i = 0; i < M; i++)
            if (!same_ld(b[i], c[i]) && bad++ < 5)
                FAIL("%s[%d]: %La op %La gave %La, C gives %La", op ? "prod" : "sum", i, a[i],
                     b[i], b[i], c[i]);
    }
    /* complex long double product */
    static long double complex x[64], y[64], z[64];
    for (int i = 0; i < 64; i++) {
        x[i] = (double)(next() % 1000) / 7 + I * ((double)(next() % 1000) / 3);
        y[i] = (double)(next() % 1000) / 11 - I * ((double)(next() % 1000) / 13);
        z[i] = x[i] * y[i];
    }
    EXPECT_OK(MPI_Reduce_local(x, y, 64, MPI_C_LONG_DOUBLE_COMPLEX, MPI_PROD));
    for (int i = 0; i < 64; i++)
        CHECK(same_ld(creall(y[i]), creall(z[i])) && same_ld(cimagl(y[i]), cimagl(z[i])),
              "complex prod[%d]", i);
#ifdef __SIZEOF_FLOAT128__
    /* REAL*16 as binary128 (__float128) */
    seed = 4242 + rank;
    for (int i = 0; i < 256; i++) {
        __float128 pp = (__float128)rnd_ld() * (1 + (__float128)1e-25Q * (double)(next() % 1000));
        __float128 qq = (__float128)rnd_ld() / 3;
        __float128 sum = pp + qq, prod = pp * qq, x1 = pp, y1 = qq, x2 = pp, y2 = qq;
        EXPECT_OK(MPI_Reduce_local(&x1, &y1, 1, MPI_REAL16, MPI_SUM));
        EXPECT_OK(MPI_Reduce_local(&x2, &y2, 1, MPI_REAL16, MPI_PROD));
        CHECK(memcmp(&y1, &sum, 16) == 0, "real16 sum[%d]", i);
        CHECK(memcmp(&y2, &prod, 16) == 0, "real16 prod[%d]", i);
    }
#endif
    /* allreduce: sum of 1 and size-1 copies of 2^-60 is exact in long double only */
    long double v = rank == 0 ? 1.0L : ldexpl(1, -60), sum = 0;
    EXPECT_OK(MPI_Allreduce(&v, &sum, 1, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == 1.0L + (size - 1) * ldexpl(1, -60), "allreduce sum %La", sum);
    MPI_Finalize();
    return wtest_finish();
}
