/* Derived datatypes in collectives: a strided vector of ints (gaps that must stay untouched),
 * a resized struct with padding, MPI_DOUBLE_INT (MAXLOC on a pair with padding), a user op
 * on a non-contiguous struct type, mismatched send/receive type signatures (vector vs
 * contiguous ints), blocking, nonblocking and persistent forms, in place. */
#include "wtest.h"
#include <stddef.h>

#define N 5          /* vector elements per block */
#define GAP -777     /* what the gaps hold */
static int rank, size;
static MPI_Datatype vec; /* N ints at stride 2, resized to extent 2N ints */

static int val(int r, int i) { return r * 1000 + i * 7 + 1; }

/* buf holds `blocks` vec instances; check element i of block b and the gaps. */
static void check_vec(const int *buf, int blocks, int (*want)(int b, int i), const char *what)
{
    for (int b = 0; b < blocks; b++)
        for (int i = 0; i < N; i++) {
            int got = buf[b * 2 * N + 2 * i], exp = want(b, i);
            CHECK(got == exp, "%s: block %d element %d: %d, expected %d", what, b, i, got, exp);
            CHECK(buf[b * 2 * N + 2 * i + 1] == GAP, "%s: gap after block %d element %d: %d",
                  what, b, i, buf[b * 2 * N + 2 * i + 1]);
        }
}

static void fill_gaps(int *buf, int blocks)
{
    for (int k = 0; k < blocks * 2 * N; k++)
        buf[k] = GAP;
}

static int from_block_rank(int b, int i) { return val(b, i); }
static int root_val(int b, int i) { (void)b; return val(0, i); }
static int sum_val(int b, int i)
{
    (void)b;
    int s = 0;
    for (int r = 0; r < size; r++)
        s += val(r, i);
    return s;
}
static int scan_val_rank;
static int scan_val(int b, int i)
{
    (void)b;
    int s = 0;
    for (int r = 0; r <= scan_val_rank; r++)
        s += val(r, i);
    return s;
}
static int a2a_val(int b, int i) { return val(b, i) + rank * 100000; }

/* A struct with padding: { char c; double d; } resized to 32 bytes. */
typedef struct {
    char c;
    double d;
    char pad[16];
} item;
static MPI_Datatype item_type;

static void item_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    item *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        b[i].c = (char)(a[i].c ^ b[i].c);
        b[i].d = a[i].d + b[i].d;
        /* the padding must not be what the library packed: it is not part of the type */
    }
}

static void test_vector(void)
{
    int *sbuf = malloc(sizeof(int) * 2 * N * size), *rbuf = malloc(sizeof(int) * 2 * N * size);
    int *plain = malloc(sizeof(int) * N * size);

    /* bcast */
    fill_gaps(rbuf, 1);
    if (rank == 0)
        for (int i = 0; i < N; i++)
            rbuf[2 * i] = val(0, i);
    EXPECT_OK(MPI_Bcast(rbuf, 1, vec, 0, MPI_COMM_WORLD));
    check_vec(rbuf, 1, root_val, "bcast");

    /* allgather: vector -> vector, and vector -> contiguous ints */
    fill_gaps(sbuf, 1);
    for (int i = 0; i < N; i++)
        sbuf[2 * i] = val(rank, i);
    fill_gaps(rbuf, size);
    EXPECT_OK(MPI_Allgather(sbuf, 1, vec, rbuf, 1, vec, MPI_COMM_WORLD));
    check_vec(rbuf, size, from_block_rank, "allgather");
    EXPECT_OK(MPI_Allgather(sbuf, 1, vec, plain, N, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            CHECK_INT(plain[r * N + i], val(r, i));

    /* gather to the last rank, in place there */
    int root = size - 1;
    fill_gaps(rbuf, size);
    for (int i = 0; i < N; i++)
        rbuf[rank * 2 * N + 2 * i] = val(rank, i);
    if (rank == root)
        EXPECT_OK(MPI_Gather(MPI_IN_PLACE, 1, vec, rbuf, 1, vec, root, MPI_COMM_WORLD));
    else
        EXPECT_OK(MPI_Gather(sbuf, 1, vec, NULL, 0, vec, root, MPI_COMM_WORLD));
    if (rank == root)
        check_vec(rbuf, size, from_block_rank, "gather");

    /* scatter contiguous ints into vectors */
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            plain[r * N + i] = val(r, i);
    fill_gaps(rbuf, 1);
    EXPECT_OK(MPI_Scatter(plain, N, MPI_INT, rbuf, 1, vec, 0, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        CHECK_INT(rbuf[2 * i], val(rank, i));

    /* alltoall vector -> vector */
    for (int b = 0; b < size; b++)
        for (int i = 0; i < N; i++)
            sbuf[b * 2 * N + 2 * i] = val(rank, i) + b * 100000, sbuf[b * 2 * N + 2 * i + 1] = 5;
    fill_gaps(rbuf, size);
    EXPECT_OK(MPI_Alltoall(sbuf, 1, vec, rbuf, 1, vec, MPI_COMM_WORLD));
    check_vec(rbuf, size, a2a_val, "alltoall");

    /* reductions: SUM on the vector type (element type MPI_INT) */
    fill_gaps(sbuf, 1);
    for (int i = 0; i < N; i++)
        sbuf[2 * i] = val(rank, i);
    fill_gaps(rbuf, 1);
    EXPECT_OK(MPI_Allreduce(sbuf, rbuf, 1, vec, MPI_SUM, MPI_COMM_WORLD));
    check_vec(rbuf, 1, sum_val, "allreduce");
    fill_gaps(rbuf, 1);
    EXPECT_OK(MPI_Reduce(sbuf, rbuf, 1, vec, MPI_SUM, root, MPI_COMM_WORLD));
    if (rank == root)
        check_vec(rbuf, 1, sum_val, "reduce");
    /* in place */
    memcpy(rbuf, sbuf, sizeof(int) * 2 * N);
    EXPECT_OK(MPI_Allreduce(MPI_IN_PLACE, rbuf, 1, vec, MPI_SUM, MPI_COMM_WORLD));
    check_vec(rbuf, 1, sum_val, "allreduce in place");
    fill_gaps(rbuf, 1);
    EXPECT_OK(MPI_Scan(sbuf, rbuf, 1, vec, MPI_SUM, MPI_COMM_WORLD));
    scan_val_rank = rank;
    check_vec(rbuf, 1, scan_val, "scan");

    /* nonblocking and persistent */
    MPI_Request req;
    fill_gaps(rbuf, 1);
    EXPECT_OK(MPI_Iallreduce(sbuf, rbuf, 1, vec, MPI_SUM, MPI_COMM_WORLD, &req));
    EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_vec(rbuf, 1, sum_val, "iallreduce");
    fill_gaps(rbuf, size);
    EXPECT_OK(MPI_Iallgather(sbuf, 1, vec, rbuf, 1, vec, MPI_COMM_WORLD, &req));
    EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_vec(rbuf, size, from_block_rank, "iallgather");
    /* a persistent bcast of a type freed after init */
    MPI_Datatype tmp;
    MPI_Type_dup(vec, &tmp);
    EXPECT_OK(MPI_Bcast_init(rbuf, 1, tmp, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    MPI_Type_free(&tmp);
    for (int round = 0; round < 3; round++) {
        fill_gaps(rbuf, 1);
        if (rank == 0)
            for (int i = 0; i < N; i++)
                rbuf[2 * i] = val(0, i);
        EXPECT_OK(MPI_Start(&req));
        EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        check_vec(rbuf, 1, root_val, "persistent bcast");
    }
    MPI_Request_free(&req);
    free(sbuf);
    free(rbuf);
    free(plain);
}

static void test_pairs_and_structs(void)
{
    /* MAXLOC on MPI_DOUBLE_INT (12 bytes of data in 16) */
    struct { double v; int i; } in[3], out[3];
    for (int k = 0; k < 3; k++) {
        in[k].v = (double)((rank * 7 + k * 3) % size);
        in[k].i = rank;
        out[k].v = -1;
        out[k].i = -1;
    }
    EXPECT_OK(MPI_Allreduce(in, out, 3, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    for (int k = 0; k < 3; k++) {
        double best = -1;
        int who = -1;
        for (int r = 0; r < size; r++) {
            double v = (double)((r * 7 + k * 3) % size);
            if (v > best)
                best = v, who = r;
        }
        CHECK(out[k].v == best && out[k].i == who, "maxloc[%d] = (%g,%d), expected (%g,%d)", k,
              out[k].v, out[k].i, best, who);
    }

    /* a user op on a struct with padding, blocking and nonblocking */
    item a[4], b[4];
    for (int k = 0; k < 4; k++) {
        memset(&a[k], 0x5a, sizeof(item));
        a[k].c = (char)(1 << (rank % 7));
        a[k].d = rank + k * 0.5;
        memset(&b[k], 0x33, sizeof(item));
    }
    MPI_Op op;
    MPI_Op_create(item_op, 1, &op);
    EXPECT_OK(MPI_Allreduce(a, b, 4, item_type, op, MPI_COMM_WORLD));
    char xc = 0;
    for (int r = 0; r < size; r++)
        xc = (char)(xc ^ (1 << (r % 7)));
    for (int k = 0; k < 4; k++) {
        double want = size * (size - 1) / 2.0 + size * k * 0.5;
        CHECK(b[k].c == xc && b[k].d == want, "item[%d] = (%d,%g), expected (%d,%g)", k, b[k].c,
              b[k].d, xc, want);
        CHECK((unsigned char)b[k].pad[3] == 0x33, "padding of item[%d] changed", k);
    }
    MPI_Request req;
    for (int k = 0; k < 4; k++)
        memset(&b[k], 0x33, sizeof(item));
    EXPECT_OK(MPI_Iallreduce(a, b, 4, item_type, op, MPI_COMM_WORLD, &req));
    EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int k = 0; k < 4; k++) {
        double want = size * (size - 1) / 2.0 + size * k * 0.5;
        CHECK(b[k].c == xc && b[k].d == want, "iallreduce item[%d] = (%d,%g)", k, b[k].c, b[k].d);
    }
    MPI_Op_free(&op);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_world_rank();
    {
        /* extent 2N ints (a plain vector's extent ends after its last element) */
        MPI_Datatype v;
        MPI_Type_vector(N, 1, 2, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, 2 * N * sizeof(int), &vec);
        MPI_Type_commit(&vec);
        MPI_Type_free(&v);
    }
    {
        int bl[2] = {1, 1};
        MPI_Aint disp[2] = {offsetof(item, c), offsetof(item, d)};
        MPI_Datatype ts[2] = {MPI_CHAR, MPI_DOUBLE}, s;
        MPI_Type_create_struct(2, bl, disp, ts, &s);
        MPI_Type_create_resized(s, 0, sizeof(item), &item_type);
        MPI_Type_commit(&item_type);
        MPI_Type_free(&s);
    }
    test_vector();
    test_pairs_and_structs();
    {
        /* a predefined op on a type mixing element types is an error */
        item x[1], y[1];
        memset(x, 0, sizeof x);
        EXPECT_CLASS(MPI_Allreduce(x, y, 1, item_type, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&item_type);
    MPI_Finalize();
    return wtest_finish();
}
