/* Reduce on one node (issue 14).
 * 1. With the node-level area, the binomial tree carries reductions of predefined ops up to
 *    1 MiB (Rabenseifner's algorithm from 1 MiB on; it was 64 KiB): the algorithm counters
 *    bound to the communicator show it, values checked at every root, and with a
 *    non-commutative user op (left projection: the result is rank 0's vector).
 * 2. Every leaf of the binomial tree runs ahead above the area's limit, not only those under
 *    the root: a leaf whose parent is another rank sends the parent a token after its
 *    MPI_Reduce, which the parent receives before entering it (with the leaf waiting for
 *    everyone's size on the area both hang: the manifest's timeout fails the test).
 * 3. Such a leaf passing fewer elements: the root and its parent report MPI_ERR_TRUNCATE, its
 *    message is drained (a correct reduce follows).
 * 4. Leaves under another rank than the root passing more than the area holds and the eager
 *    limit, the others a few ints (their data through the area): the parents report
 *    MPI_ERR_TRUNCATE and receive the leaves' messages (a parent whose data went through the
 *    area used to return at once, its leaf hung in its send).
 * WTEST_LEAVES_ONNODE=0 (run without the area) expects Rabenseifner from 64 KiB and skips 2. */
#include <stdlib.h>
#include "wtest.h"
#include "coll_counters.h"

static int rank, size;

/* The binomial parent of `r` in the tree rooted at `root` if `r` is a leaf, else -1. */
static int leaf_parent(int r, int root)
{
    if (r == root)
        return -1;
    int vr = (r - root + size) % size, low = vr & -vr;
    if (low != 1 && vr + 1 < size)
        return -1;
    return (vr - low + root) % size;
}

static void left(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] = ((int *)in)[i];
}

/* Reduce of `n` doubles (sum) to every root, values checked. */
static void sums(MPI_Comm c, int n)
{
    double *in = malloc(n * sizeof(double)), *out = malloc(n * sizeof(double));
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < n; i++) {
            in[i] = rank * 1000.0 + i;
            out[i] = -1;
        }
        EXPECT_OK(MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, root, c));
        if (rank == root)
            for (int i = 0; i < n; i++) {
                double want = 1000.0 * size * (size - 1) / 2 + (double)size * i;
                if (out[i] != want) {
                    FAIL("reduce of %d doubles to %d: [%d] = %g, expected %g", n, root, i,
                         out[i], want);
                    break;
                }
            }
    }
    free(in), free(out);
}

/* Reduce of `n` ints with the left projection to the last rank: rank 0's vector. */
static void ordered(MPI_Comm c, int n, MPI_Op op)
{
    int *in = malloc(n * sizeof(int)), *out = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        in[i] = rank * 100000 + i, out[i] = -1;
    EXPECT_OK(MPI_Reduce(in, out, n, MPI_INT, op, size - 1, c));
    if (rank == size - 1)
        for (int i = 0; i < n; i++)
            if (out[i] != i) {
                FAIL("ordered reduce of %d ints: [%d] = %d, expected %d", n, i, out[i], i);
                break;
            }
    free(in), free(out);
}

#define AHEAD_N 2048 /* ints: 8 KiB, above the area's 4 KiB and under the eager limit */
static int buf[AHEAD_N], out[AHEAD_N];

/* Every leaf whose parent is not the root hands its parent a token after its reduce. */
static void leaves_ahead(int root)
{
    int parent = leaf_parent(rank, root), token = 0;
    for (int i = 0; i < AHEAD_N; i++)
        buf[i] = i + rank, out[i] = -7;
    for (int r = 0; r < size; r++)
        if (leaf_parent(r, root) == rank && rank != root) {
            EXPECT_OK(MPI_Recv(&token, 1, MPI_INT, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_INT(token, r + 1);
        }
    EXPECT_OK(MPI_Reduce(buf, out, AHEAD_N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
    if (parent >= 0 && parent != root) {
        token = rank + 1;
        EXPECT_OK(MPI_Send(&token, 1, MPI_INT, parent, 7, MPI_COMM_WORLD));
    }
    if (rank == root)
        for (int i = 0; i < AHEAD_N; i++)
            if (out[i] != size * i + size * (size - 1) / 2) {
                FAIL("reduce of %d ints to %d: out[%d] = %d", AHEAD_N, root, i, out[i]);
                break;
            }
}

#define BIG_N 32768 /* ints: 128 KiB, above the eager limit */
static int big[BIG_N];

/* Step 4 with the tree rooted at 0 (4 ranks or more). */
static void leaves_pass_more(void)
{
    int parent = leaf_parent(rank, 0), n = parent > 0 ? BIG_N : 16;
    int rc = MPI_Reduce(big, out, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    int is_parent = 0;
    for (int r = 0; r < size; r++)
        if (leaf_parent(r, 0) == rank && rank != 0)
            is_parent = 1;
    if (rank == 0 || is_parent)
        EXPECT_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Reduce", "differs between the ranks");
    else if (rc != MPI_SUCCESS)
        EXPECT_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Reduce", "differs between the ranks");
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init(&argc, &argv);
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *e = getenv("WTEST_LEAVES_ONNODE");
    int on_node = !e || atoi(e) != 0;
    EXPECT_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    EXPECT_OK(MPI_T_pvar_session_create(&s));
    MPI_Comm c;
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_T_pvar_handle bin = counter("weft_coll_reduce_binomial", &c),
                      rab = counter("weft_coll_reduce_rabenseifner", &c);
    /* 64 KiB and one double under 1 MiB: the binomial tree on one node. */
    sums(c, 8192);
    sums(c, 131071);
    CHECK_INT(value(bin), on_node ? 2 * size : 0);
    CHECK_INT(value(rab), on_node ? 0 : 2 * size);
    /* 1 MiB: Rabenseifner's algorithm everywhere. */
    sums(c, 131072);
    CHECK_INT(value(rab), on_node ? size : 3 * size);
    MPI_Op op;
    EXPECT_OK(MPI_Op_create(left, 0, &op));
    ordered(c, 16384, op);
    ordered(c, 16385, op);
    EXPECT_OK(MPI_Op_free(&op));

    if (on_node && size > 1) {
        EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
        for (int k = 0; k < 3; k++)
            for (int root = 0; root < size; root++)
                leaves_ahead(root);
        /* The last rank (a leaf) passes fewer ints: someone reports it, then all is well. */
        for (int k = 0; k < 3; k++) {
            int n = rank == size - 1 ? AHEAD_N - 600 : AHEAD_N;
            int rc = MPI_Reduce(buf, out, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
            if (rank == 0)
                EXPECT_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Reduce", "differs between the ranks");
            else if (rc != MPI_SUCCESS)
                EXPECT_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Reduce", "differs between the ranks");
            leaves_ahead(0);
        }
        /* From 4 ranks on some leaf has another parent than the root. */
        for (int k = 0; k < 3 && size >= 4; k++) {
            leaves_pass_more();
            leaves_ahead(0);
        }
    }
    EXPECT_OK(MPI_T_pvar_session_free(&s));
    EXPECT_OK(MPI_T_finalize());
    EXPECT_OK(MPI_Comm_free(&c));
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
