/* User ops: a non-commutative op (2x2 matrix product mod p) must combine in rank order in
 * reduce (every root), allreduce, scan, exscan and reduce_scatter(_block); a commutative
 * one; MPI_Op_create_c; the datatype handle the function receives; Op_commutative/free. */
#include "wtest.h"

#define P 1000003LL
#define N 6 /* matrices per buffer */
typedef struct { long long a, b, c, d; } mat;
static int calls_with_wrong_type = 0;

static mat mul(mat x, mat y)
{
    mat r = {(x.a * y.a + x.b * y.c) % P, (x.a * y.b + x.b * y.d) % P,
             (x.c * y.a + x.d * y.c) % P, (x.c * y.b + x.d * y.d) % P};
    return r;
}

static MPI_Datatype mat_type;

/* inout = in * inout (in holds the lower ranks). */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != mat_type || *len % 4 != 0)
        calls_with_wrong_type++;
    mat *x = in, *y = inout;
    for (int i = 0; i < *len / 4; i++)
        y[i] = mul(x[i], y[i]);
}

static void matmul_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    int n = (int)*len;
    matmul(in, inout, &n, dt);
}

static void addmod(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    long long *x = in, *y = inout;
    for (int i = 0; i < *len; i++)
        y[i] = (x[i] + y[i]) % P;
}

static mat of(int r, int i)
{
    mat m = {r + 2 + i, 1, 1, (r * 3 + i) % 5};
    return m;
}

static mat prefix(int lo, int hi, int i) /* product of of(lo..hi-1) */
{
    mat m = {1, 0, 0, 1};
    for (int r = lo; r < hi; r++)
        m = mul(m, of(r, i));
    return m;
}

static int same(mat x, mat y)
{
    return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d;
}

int main(int argc, char **argv)
{
    int rank, size, commute = -1;
    MPI_Op op, op_c, add;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mat_type = MPI_LONG_LONG; /* 4 of them per matrix */
    EXPECT_OK(MPI_Op_create(matmul, 0, &op));
    EXPECT_OK(MPI_Op_create_c(matmul_c, 0, &op_c));
    EXPECT_OK(MPI_Op_create(addmod, 1, &add));
    EXPECT_OK(MPI_Op_commutative(op, &commute));
    CHECK_INT(commute, 0);
    EXPECT_OK(MPI_Op_commutative(add, &commute));
    CHECK_INT(commute, 1);
    EXPECT_OK(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK_INT(commute, 1);

    /* A matrix travels as 4 MPI_LONG_LONG; the op multiplies len/4 matrices. */
    mat in[N], out[N], want;
    MPI_Op ops[2] = {op, op_c};
    for (int k = 0; k < 2; k++) {
        for (int root = 0; root < size; root++) {
            for (int i = 0; i < N; i++)
                in[i] = of(rank, i);
            memset(out, 0, sizeof out);
            EXPECT_OK(MPI_Reduce(in, out, 4 * N, MPI_LONG_LONG, ops[k], root, MPI_COMM_WORLD));
            if (rank == root)
                for (int i = 0; i < N; i++)
                    CHECK(same(out[i], prefix(0, size, i)), "reduce root %d [%d]", root, i);
        }
        memset(out, 0, sizeof out);
        EXPECT_OK(MPI_Allreduce(in, out, 4 * N, MPI_LONG_LONG, ops[k], MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            CHECK(same(out[i], prefix(0, size, i)), "allreduce [%d]", i);
        memcpy(out, in, sizeof in);
        EXPECT_OK(MPI_Allreduce(MPI_IN_PLACE, out, 4 * N, MPI_LONG_LONG, ops[k], MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            CHECK(same(out[i], prefix(0, size, i)), "allreduce in place [%d]", i);
        EXPECT_OK(MPI_Scan(in, out, 4 * N, MPI_LONG_LONG, ops[k], MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            CHECK(same(out[i], prefix(0, rank + 1, i)), "scan [%d]", i);
        memcpy(out, in, sizeof in);
        EXPECT_OK(MPI_Scan(MPI_IN_PLACE, out, 4 * N, MPI_LONG_LONG, ops[k], MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            CHECK(same(out[i], prefix(0, rank + 1, i)), "scan in place [%d]", i);
        mat keep = {-5, -5, -5, -5};
        for (int i = 0; i < N; i++)
            out[i] = keep;
        EXPECT_OK(MPI_Exscan(in, out, 4 * N, MPI_LONG_LONG, ops[k], MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            CHECK(same(out[i], rank == 0 ? keep : prefix(0, rank, i)), "exscan [%d]", i);
        /* Reduce_scatter_block: each rank gets one matrix of the product of the vectors. */
        {
            mat *vin = malloc(size * sizeof(mat)), mine;
            for (int j = 0; j < size; j++)
                vin[j] = of(rank, j);
            EXPECT_OK(MPI_Reduce_scatter_block(vin, &mine, 4, MPI_LONG_LONG, ops[k],
                                               MPI_COMM_WORLD));
            want = prefix(0, size, rank);
            CHECK(same(mine, want), "reduce_scatter_block");
            /* Reduce_scatter with uneven counts (rank r gets r % 2 + 1 matrices), in place. */
            int *counts = malloc(size * sizeof(int)), total = 0, off = 0;
            for (int j = 0; j < size; j++) {
                counts[j] = 4 * (j % 2 + 1);
                total += counts[j] / 4;
                if (j < rank)
                    off += counts[j] / 4;
            }
            mat *v = malloc(total * sizeof(mat));
            for (int j = 0; j < total; j++)
                v[j] = of(rank, j);
            EXPECT_OK(MPI_Reduce_scatter(MPI_IN_PLACE, v, counts, MPI_LONG_LONG, ops[k],
                                         MPI_COMM_WORLD));
            for (int j = 0; j < counts[rank] / 4; j++)
                CHECK(same(v[j], prefix(0, size, off + j)), "reduce_scatter in place [%d]", j);
            free(v);
            free(counts);
            free(vin);
        }
    }
    CHECK_INT(calls_with_wrong_type, 0);

    /* A commutative user op through every size range of allreduce. */
    for (int n = 1; n <= 100000; n *= 10) {
        long long *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        for (int i = 0; i < n; i++)
            a[i] = rank * 1000 + i;
        EXPECT_OK(MPI_Allreduce(a, b, n, MPI_LONG_LONG, add, MPI_COMM_WORLD));
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += b[i] != (1000LL * size * (size - 1) / 2 + (long long)size * i) % P;
        CHECK(bad == 0, "commutative user op n=%d: %d wrong", n, bad);
        free(a);
        free(b);
    }

    EXPECT_OK(MPI_Op_free(&op));
    EXPECT_OK(MPI_Op_free(&op_c));
    CHECK(op == MPI_OP_NULL, "MPI_Op_free sets MPI_OP_NULL");
    EXPECT_ERR(MPI_Op_free(&op), MPI_ERR_OP, "MPI_Op_free", "op");
    {
        MPI_Op sum = MPI_SUM;
        EXPECT_ERR(MPI_Op_free(&sum), MPI_ERR_OP, "MPI_Op_free", "op");
    }
    EXPECT_OK(MPI_Op_free(&add));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
