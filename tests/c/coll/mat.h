/* 2x2 matrices mod a prime under multiplication: a non-commutative user op (`matmul`) whose
 * results the tests check against the rank-order product (`mul`). */
#ifndef WEFT_TEST_COLL_MAT_H
#define WEFT_TEST_COLL_MAT_H

#define P 1000003LL

typedef struct {
    long long a, b, c, d;
} mat;

static mat mul(mat x, mat y)
{
    mat r = {(x.a * y.a + x.b * y.c) % P, (x.a * y.b + x.b * y.d) % P,
             (x.c * y.a + x.d * y.c) % P, (x.c * y.b + x.d * y.d) % P};
    return r;
}

/* inout = in * inout: in holds the lower ranks. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    mat *x = in, *y = inout;
    for (int i = 0; i < *len; i++)
        y[i] = mul(x[i], y[i]);
}

static int same(mat x, mat y)
{
    return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d;
}
#endif
