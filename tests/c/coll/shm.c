/* The node-level shared-memory path of MPI_Barrier, MPI_Bcast, MPI_Reduce and MPI_Allreduce
 * (crates/weft-core/src/coll/shm.rs), with real values: barrier ordering seen through
 * point-to-point, broadcasts from every root of sizes around the inline payload and around
 * WEFT_COLL_SHM_MAX, sums, maxima and a non-commutative user op checked against the rank-order
 * result, MPI_IN_PLACE, derived datatypes, many communicators used in turn, 10000 mixed
 * collectives back to back (the slots' parity reuse), intercommunicators and MPI_COMM_SELF.
 *
 * WTEST_SHM=1: the path must be in use unless WEFT_COLL_SHM_MAX=0 (each communicator that
 * used it maps one deleted /dev/shm/weft.<job>.coll.* segment, visible in /proc/self/maps,
 * until it is freed); WTEST_SHM=0: no such mapping may exist. Only a communicator whose ranks
 * all share one (logical) node has an area: under WEFT_NODES (tests/c/multinode) the others
 * take the point-to-point algorithms, and the expected count follows. */
#include "wtest.h"
#include "mat.h"

static int rank, size, expect_shm, shm_max;
static MPI_Datatype mat_type;
static MPI_Op matmul_op;

static mat mat_of(int r, int i, int salt)
{
    mat m = {r + 2 + i % 7, 1 + salt % 3, 1, (r * 3 + i + salt) % 5};
    return m;
}

/* Mappings of coll areas in this process. */
/* Whether every rank of `c` is on this rank's node (so `c` may have a coll area). */
static int one_node(MPI_Comm c)
{
    MPI_Comm node;
    int n, nn;
    EXPECT_OK(MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_size(c, &n);
    MPI_Comm_size(node, &nn);
    EXPECT_OK(MPI_Comm_free(&node));
    return n == nn;
}

/* Whether `c` (already used by a collective) has an area: more than one rank, one node. */
static int has_area(MPI_Comm c)
{
    int n;
    MPI_Comm_size(c, &n);
    return n > 1 && one_node(c);
}

static void check_mappings(int users, const char *when)
{
    int want = expect_shm ? users : 0, have = wtest_coll_areas();
    CHECK(have == want, "%s: %d coll-area mappings, expected %d", when, have, want);
}

static unsigned char pattern(int root, int len, int i, int salt)
{
    return (unsigned char)(root * 31 + len * 7 + i * 13 + salt);
}

static void spin(double seconds)
{
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < seconds)
        ;
}

/* Whether rank `q` of `comm` shares this rank's (logical) node. */
static int node_mate(MPI_Comm comm, int q)
{
    MPI_Comm node;
    MPI_Group g, ng;
    int nq = MPI_UNDEFINED;
    EXPECT_OK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(node, &ng);
    EXPECT_OK(MPI_Group_translate_ranks(g, 1, &q, ng, &nq));
    MPI_Group_free(&g);
    MPI_Group_free(&ng);
    EXPECT_OK(MPI_Comm_free(&node));
    return nq != MPI_UNDEFINED;
}

/* A rank leaving a barrier implies every rank entered it. The late rank of round i takes a
 * while, sends tag i to every other rank (small: on its node it is in their receive rings
 * when MPI_Send returns) and only then enters the barrier; so the others on its node must
 * find it right after the barrier (from another node it may still be on its way). */
static void barrier_order(MPI_Comm comm, int rounds)
{
    int r, n, mate[64];
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    for (int q = 0; q < n && q < 64; q++)
        mate[q] = node_mate(comm, q);
    for (int i = 0; i < rounds; i++) {
        int late = i % n, flag = 0, v = -1;
        if (r == late) {
            spin(50e-6);
            for (int d = 0; d < n; d++)
                if (d != r)
                    EXPECT_OK(MPI_Send(&i, 1, MPI_INT, d, i, comm));
            EXPECT_OK(MPI_Barrier(comm));
            continue;
        }
        EXPECT_OK(MPI_Barrier(comm));
        EXPECT_OK(MPI_Iprobe(late, i, comm, &flag, MPI_STATUS_IGNORE));
        CHECK(flag || late >= 64 || !mate[late], "round %d: left the barrier before rank %d entered it", i, late);
        EXPECT_OK(MPI_Recv(&v, 1, MPI_INT, late, i, comm, MPI_STATUS_IGNORE));
        CHECK_INT(v, i);
    }
}

static void bcast_sizes(MPI_Comm comm, int salt)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int lens[] = {0, 1, 7, 8, 55, 56, 57, 64, 100, 1000, shm_max - 1, shm_max, shm_max + 1,
                  2 * shm_max + 3, 5000};
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        int len = lens[k];
        if (len < 0)
            continue;
        unsigned char *buf = malloc(len + 1);
        for (int root = 0; root < n; root++) {
            for (int i = 0; i < len; i++)
                buf[i] = r == root ? pattern(root, len, i, salt) : 0xEE;
            buf[len] = 0x5A;
            EXPECT_OK(MPI_Bcast(buf, len, MPI_BYTE, root, comm));
            int bad = 0;
            for (int i = 0; i < len; i++)
                bad += buf[i] != pattern(root, len, i, salt);
            CHECK(bad == 0, "bcast of %d bytes from %d: %d wrong bytes", len, root, bad);
            CHECK_INT(buf[len], 0x5A);
        }
        free(buf);
    }
}

static void allreduce_sums(MPI_Comm comm)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int counts[] = {1, 2, 14, 15, shm_max / 4, shm_max / 4 + 1, 1000};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int c = counts[k];
        if (c <= 0)
            continue;
        int *in = malloc(c * sizeof(int)), *out = malloc(c * sizeof(int));
        double *din = malloc(c * sizeof(double)), *dout = malloc(c * sizeof(double));
        for (int i = 0; i < c; i++) {
            in[i] = (r + 1) * (i + 3) - 50 * (r % 2);
            din[i] = (double)(r * 1000 + i);
            out[i] = -1;
        }
        EXPECT_OK(MPI_Allreduce(in, out, c, MPI_INT, MPI_SUM, comm));
        int bad = 0;
        for (int i = 0; i < c; i++) {
            long long want = 0;
            for (int q = 0; q < n; q++)
                want += (q + 1) * (i + 3) - 50 * (q % 2);
            bad += out[i] != want;
        }
        CHECK(bad == 0, "allreduce sum of %d ints: %d wrong", c, bad);
        EXPECT_OK(MPI_Allreduce(in, out, c, MPI_INT, MPI_MAX, comm));
        bad = 0;
        for (int i = 0; i < c; i++) {
            int want = in[i];
            for (int q = 0; q < n; q++) {
                int v = (q + 1) * (i + 3) - 50 * (q % 2);
                want = v > want ? v : want;
            }
            bad += out[i] != want;
        }
        CHECK(bad == 0, "allreduce max of %d ints: %d wrong", c, bad);
        /* In place, doubles (exact: small integers). */
        memcpy(dout, din, c * sizeof(double));
        EXPECT_OK(MPI_Allreduce(MPI_IN_PLACE, dout, c, MPI_DOUBLE, MPI_SUM, comm));
        bad = 0;
        for (int i = 0; i < c; i++)
            bad += dout[i] != (double)(1000 * n * (n - 1) / 2 + n * i);
        CHECK(bad == 0, "in-place allreduce of %d doubles: %d wrong", c, bad);
        /* Reduce to every root, in place at the root on odd roots. */
        for (int root = 0; root < n; root++) {
            for (int i = 0; i < c; i++)
                out[i] = r == root && root % 2 ? in[i] : -7;
            const void *src = r == root && root % 2 ? MPI_IN_PLACE : in;
            EXPECT_OK(MPI_Reduce(src, out, c, MPI_INT, MPI_SUM, root, comm));
            bad = 0;
            for (int i = 0; i < c; i++) {
                long long want = -7;
                if (r == root) {
                    want = 0;
                    for (int q = 0; q < n; q++)
                        want += (q + 1) * (i + 3) - 50 * (q % 2);
                }
                bad += out[i] != want;
            }
            CHECK(bad == 0, "reduce of %d ints to %d: %d wrong", c, root, bad);
        }
        free(in);
        free(out);
        free(din);
        free(dout);
    }
}

/* The non-commutative op must combine in rank order, every rank getting the same result. */
static void noncommutative(MPI_Comm comm, int salt)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int counts[] = {1, 2, shm_max / 32, shm_max / 32 + 1, 100};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int c = counts[k];
        if (c <= 0)
            continue;
        mat *in = malloc(c * sizeof(mat)), *out = malloc(c * sizeof(mat));
        mat *want = malloc(c * sizeof(mat));
        for (int i = 0; i < c; i++) {
            in[i] = mat_of(r, i, salt);
            mat m = {1, 0, 0, 1};
            for (int q = 0; q < n; q++)
                m = mul(m, mat_of(q, i, salt));
            want[i] = m;
        }
        EXPECT_OK(MPI_Allreduce(in, out, c, mat_type, matmul_op, comm));
        int bad = 0;
        for (int i = 0; i < c; i++)
            bad += !same(out[i], want[i]);
        CHECK(bad == 0, "allreduce of %d matrices: %d wrong", c, bad);
        memcpy(out, in, c * sizeof(mat));
        EXPECT_OK(MPI_Allreduce(MPI_IN_PLACE, out, c, mat_type, matmul_op, comm));
        bad = 0;
        for (int i = 0; i < c; i++)
            bad += !same(out[i], want[i]);
        CHECK(bad == 0, "in-place allreduce of %d matrices: %d wrong", c, bad);
        for (int root = 0; root < n; root++) {
            memcpy(out, in, c * sizeof(mat));
            const void *src = r == root ? MPI_IN_PLACE : in;
            EXPECT_OK(MPI_Reduce(src, out, c, mat_type, matmul_op, root, comm));
            if (r == root) {
                bad = 0;
                for (int i = 0; i < c; i++)
                    bad += !same(out[i], want[i]);
                CHECK(bad == 0, "reduce of %d matrices to %d: %d wrong", c, root, bad);
            }
        }
        free(in);
        free(out);
        free(want);
    }
}

/* Every other int of a strided buffer: the gaps must stay untouched. */
static void derived(MPI_Comm comm)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    MPI_Datatype vec, every_other;
    EXPECT_OK(MPI_Type_vector(20, 1, 2, MPI_INT, &vec));
    EXPECT_OK(MPI_Type_create_resized(vec, 0, 40 * sizeof(int), &every_other));
    EXPECT_OK(MPI_Type_commit(&every_other));
    EXPECT_OK(MPI_Type_free(&vec));
    int buf[2 * 20 * 3], in[2 * 20 * 3];
    for (int root = 0; root < n; root++) {
        for (int i = 0; i < 120; i++)
            buf[i] = r == root ? 1000 * root + i : -i;
        EXPECT_OK(MPI_Bcast(buf, 3, every_other, root, comm));
        int bad = 0;
        for (int i = 0; i < 120; i++)
            bad += buf[i] != (i % 2 == 0 || r == root ? 1000 * root + i : -i);
        CHECK(bad == 0, "bcast of a vector type from %d: %d wrong ints", root, bad);
    }
    for (int i = 0; i < 120; i++) {
        in[i] = r + i;
        buf[i] = -1;
    }
    EXPECT_OK(MPI_Allreduce(in, buf, 3, every_other, MPI_SUM, comm));
    int bad = 0;
    for (int i = 0; i < 120; i++)
        bad += buf[i] != (i % 2 ? -1 : n * (n - 1) / 2 + n * i);
    CHECK(bad == 0, "allreduce of a vector type: %d wrong ints", bad);
    for (int i = 0; i < 120; i++)
        buf[i] = i % 2 ? -3 : r + i;
    EXPECT_OK(MPI_Allreduce(MPI_IN_PLACE, buf, 3, every_other, MPI_MAX, comm));
    bad = 0;
    for (int i = 0; i < 120; i++)
        bad += buf[i] != (i % 2 ? -3 : n - 1 + i);
    CHECK(bad == 0, "in-place allreduce of a vector type: %d wrong ints", bad);
    EXPECT_OK(MPI_Type_free(&every_other));
}

/* One round of small collectives on `comm` whose results depend on `i`. */
static void mixed(MPI_Comm comm, int i)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int root = i % n;
    switch (i % 6) {
    case 0:
        EXPECT_OK(MPI_Barrier(comm));
        break;
    case 1: {
        long long v = r == root ? 1000LL * i + root : -1;
        EXPECT_OK(MPI_Bcast(&v, 1, MPI_LONG_LONG, root, comm));
        CHECK(v == 1000LL * i + root, "round %d: bcast got %lld", i, v);
        break;
    }
    case 2: {
        unsigned char b[200];
        for (int k = 0; k < 200; k++)
            b[k] = r == root ? pattern(root, 200, k, i) : 0;
        EXPECT_OK(MPI_Bcast(b, 200, MPI_BYTE, root, comm));
        int bad = 0;
        for (int k = 0; k < 200; k++)
            bad += b[k] != pattern(root, 200, k, i);
        CHECK(bad == 0, "round %d: 200-byte bcast from %d: %d wrong", i, root, bad);
        break;
    }
    case 3: {
        int v = r + i, s = -1;
        EXPECT_OK(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, comm));
        CHECK(s == n * (n - 1) / 2 + n * i, "round %d: allreduce sum %d", i, s);
        break;
    }
    case 4: {
        int v[3] = {r, i, 1}, s[3] = {-1, -1, -1};
        EXPECT_OK(MPI_Reduce(v, s, 3, MPI_INT, MPI_SUM, root, comm));
        if (r == root)
            CHECK(s[0] == n * (n - 1) / 2 && s[1] == n * i && s[2] == n,
                  "round %d: reduce got %d %d %d", i, s[0], s[1], s[2]);
        break;
    }
    case 5: {
        mat m = mat_of(r, i % 11, i), out, want = {1, 0, 0, 1};
        for (int q = 0; q < n; q++)
            want = mul(want, mat_of(q, i % 11, i));
        EXPECT_OK(MPI_Allreduce(&m, &out, 1, mat_type, matmul_op, comm));
        CHECK(same(out, want), "round %d: non-commutative allreduce", i);
        break;
    }
    }
}

/* Ranks that need not wait (a broadcast root, reduce contributors) run ahead of a slow rank
 * by many turns: they must never overwrite what it has not read yet. Small payloads (in the
 * slot line) and larger ones (in a region) alternate. */
static void run_ahead(MPI_Comm comm)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int slow = n - 1;
    for (int i = 0; i < 3000; i++) {
        if (r == slow && i % 97 == 0)
            spin(300e-6);
        long long small = r == 0 ? 7LL * i + 1 : -1;
        unsigned char big[300];
        switch (i % 3) {
        case 0:
            EXPECT_OK(MPI_Bcast(&small, 1, MPI_LONG_LONG, 0, comm));
            CHECK(small == 7LL * i + 1, "round %d: bcast got %lld", i, small);
            break;
        case 1:
            for (int k = 0; k < 300; k++)
                big[k] = r == 0 ? pattern(0, 300, k, i) : 0;
            EXPECT_OK(MPI_Bcast(big, 300, MPI_BYTE, 0, comm));
            int bad = 0;
            for (int k = 0; k < 300; k++)
                bad += big[k] != pattern(0, 300, k, i);
            CHECK(bad == 0, "round %d: 300-byte bcast: %d wrong", i, bad);
            break;
        case 2: {
            int v[2] = {r + i, 1}, sum[2] = {-1, -1};
            EXPECT_OK(MPI_Reduce(v, sum, 2, MPI_INT, MPI_SUM, slow, comm));
            if (r == slow)
                CHECK(sum[0] == n * (n - 1) / 2 + n * i && sum[1] == n,
                      "round %d: reduce got %d %d", i, sum[0], sum[1]);
            break;
        }
        }
    }
}

/* A rank waiting in a shared-memory collective keeps its other operations moving: rank 1
 * joins the collective only after receiving rank 0's large message (rendezvous: rank 0's
 * engine must act while rank 0 waits in the collective). */
static void progress_while_waiting(void)
{
    enum { N = 1 << 20 };
    if (size < 2)
        return;
    char *big = malloc(N);
    MPI_Comm other;
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &other));
    for (int round = 0; round < 4; round++) {
        MPI_Request req = MPI_REQUEST_NULL;
        memset(big, rank == 0 ? 'a' + round : 0, N);
        if (rank == 0)
            EXPECT_OK(MPI_Isend(big, N, MPI_CHAR, 1, round, other, &req));
        if (rank == 1) {
            EXPECT_OK(MPI_Recv(big, N, MPI_CHAR, 0, round, other, MPI_STATUS_IGNORE));
            CHECK(big[0] == 'a' + round && big[N - 1] == 'a' + round, "round %d: payload",
                  round);
        }
        if (round % 2 == 0) {
            EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
        } else {
            int v = rank == 1 ? round : -1;
            EXPECT_OK(MPI_Bcast(&v, 1, MPI_INT, 1, MPI_COMM_WORLD));
            CHECK_INT(v, round);
        }
        EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    EXPECT_OK(MPI_Comm_free(&other));
    free(big);
}

/* Several communicators (dups, splits with other rank orders and sizes) used in turn, each
 * with its own area; freeing one unmaps its area. */
static void many_comms(void)
{
    MPI_Comm c[5];
    int users = has_area(MPI_COMM_WORLD);
    c[0] = MPI_COMM_WORLD;
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c[1]));
    EXPECT_OK(MPI_Comm_dup(c[1], &c[2]));
    EXPECT_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &c[3]));
    EXPECT_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &c[4]));
    for (int i = 0; i < 600; i++)
        mixed(c[i % 5], i / 5);
    int had[5];
    for (int k = 1; k < 5; k++) {
        had[k] = has_area(c[k]);
        users += had[k];
    }
    check_mappings(users, "five communicators in use");
    for (int k = 1; k < 5; k++) {
        bcast_sizes(c[k], k);
        noncommutative(c[k], k);
    }
    for (int k = 1; k < 5; k++) {
        EXPECT_OK(MPI_Comm_free(&c[k]));
        users -= had[k];
    }
    check_mappings(users, "after freeing four of them");
    /* A fresh communicator gets a fresh area: nothing of the freed ones leaks into it. */
    MPI_Comm d;
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    for (int i = 0; i < 60; i++)
        mixed(d, i);
    EXPECT_OK(MPI_Comm_free(&d));
}

static void intercomm(void)
{
    if (size < 2)
        return;
    MPI_Comm half, inter;
    int low = rank < size / 2;
    EXPECT_OK(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half));
    EXPECT_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 7, &inter));
    EXPECT_OK(MPI_Barrier(inter));
    int hr, v = 0, s = -1;
    MPI_Comm_rank(half, &hr);
    int root = low ? (hr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    if (low && hr == 0)
        v = 4242;
    EXPECT_OK(MPI_Bcast(&v, 1, MPI_INT, root, inter));
    if (!low)
        CHECK_INT(v, 4242);
    v = rank;
    EXPECT_OK(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, inter));
    /* Each side gets the sum over the other side. */
    int lo = size / 2, want = low ? (size - 1) * size / 2 - lo * (lo - 1) / 2 : lo * (lo - 1) / 2;
    CHECK_INT(s, want);
    EXPECT_OK(MPI_Comm_free(&inter));
    EXPECT_OK(MPI_Comm_free(&half));
}

static void self(void)
{
    int v = 5, s = -1;
    EXPECT_OK(MPI_Barrier(MPI_COMM_SELF));
    EXPECT_OK(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_SELF));
    EXPECT_OK(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    CHECK_INT(s, 5);
    s = -1;
    EXPECT_OK(MPI_Reduce(&v, &s, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_SELF));
    CHECK_INT(s, 5);
}

int main(int argc, char **argv)
{
    const char *e = getenv("WTEST_SHM"), *m = getenv("WEFT_COLL_SHM_MAX");
    shm_max = m ? atoi(m) : 2048;
    expect_shm = e && atoi(e) == 1 && shm_max > 0;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    EXPECT_OK(MPI_Type_contiguous(4, MPI_LONG_LONG, &mat_type));
    EXPECT_OK(MPI_Type_commit(&mat_type));
    EXPECT_OK(MPI_Op_create(matmul, 0, &matmul_op));

    check_mappings(0, "before any collective");
    barrier_order(MPI_COMM_WORLD, 300);
    check_mappings(has_area(MPI_COMM_WORLD), "after barriers on MPI_COMM_WORLD");
    bcast_sizes(MPI_COMM_WORLD, 0);
    allreduce_sums(MPI_COMM_WORLD);
    noncommutative(MPI_COMM_WORLD, 0);
    derived(MPI_COMM_WORLD);
    run_ahead(MPI_COMM_WORLD);
    progress_while_waiting();
    many_comms();
    /* WTEST_ROUNDS shortens it where each collective crosses a network (tests/c/multinode). */
    for (int i = 0, rounds = wtest_env_int("WTEST_ROUNDS", 10000); i < rounds; i++)
        mixed(MPI_COMM_WORLD, i);
    intercomm();
    self();
    check_mappings(has_area(MPI_COMM_WORLD), "at the end");

    EXPECT_OK(MPI_Op_free(&matmul_op));
    EXPECT_OK(MPI_Type_free(&mat_type));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
