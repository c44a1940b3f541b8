/* The node-level shared-memory paths of the data-moving collectives and prefixes
 * (crates/weft-core/src/coll/shm_data.rs): MPI_Gather(v), MPI_Scatter, MPI_Allgather(v),
 * MPI_Alltoall, MPI_Reduce_scatter(_block), MPI_Scan and MPI_Exscan, with real values: every
 * root, counts 0, 1, odd, around the inline payload, around WEFT_COLL_SHM_MAX and far above
 * it (point-to-point after the turn), MPI_IN_PLACE, a derived datatype on one side, a
 * non-commutative user op checked against the rank-order product, and a fresh communicator
 * per collective whose area must be mapped afterwards when WTEST_SHM=1 (the collective took
 * the shared-memory path; 0: no area may exist). */
#include "wtest.h"
#include "mat.h"

static int rank, size, expect_shm;
static MPI_Op matmul_op;
static MPI_Datatype mat_type, strided_int;

static mat mat_of(int r, int i)
{
    mat m = {r + 2 + i % 7, 1 + i % 3, 1, (r * 3 + i) % 5};
    return m;
}

static int val(int r, int i)
{
    return r * 100003 + i * 7 + 1;
}

/* A fresh communicator whose first collective is the one under test. */
static MPI_Comm fresh(void)
{
    MPI_Comm c;
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    return c;
}

/* Whether every rank of `c` is on this rank's node: only such a communicator has a coll area
 * (under WEFT_NODES, tests/c/multinode, the others take the point-to-point algorithms). */
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

static void done(MPI_Comm *c, const char *what, int count)
{
    int have = wtest_coll_areas(), base = expect_shm && size > 1 && one_node(*c) ? 1 : 0;
    /* MPI_COMM_WORLD never ran a collective here before MPI_Finalize; the duplicate's area
     * (if any) is the only one. */
    CHECK(have == base, "%s count %d: %d coll-area mappings, expected %d", what, count, have,
          base);
    EXPECT_OK(MPI_Comm_free(c));
}

static const int counts[] = {0, 1, 3, 13, 14, 15, 129, 1023, 1024, 1025, 3001};
#define NCOUNTS (int)(sizeof counts / sizeof counts[0])

static void gathers(int count)
{
    for (int root = 0; root < size; root++) {
        for (int in_place = 0; in_place < 2; in_place++) {
            MPI_Comm c = fresh();
            int *send = malloc((count + 1) * sizeof(int));
            int *recv = malloc(((size_t)count * size + 1) * sizeof(int));
            for (int i = 0; i < count; i++)
                send[i] = val(rank, i);
            for (int i = 0; i < count * size; i++)
                recv[i] = -1;
            if (in_place && rank == root)
                memcpy(recv + (size_t)root * count, send, count * sizeof(int));
            const void *s = in_place && rank == root ? MPI_IN_PLACE : send;
            EXPECT_OK(MPI_Gather(s, count, MPI_INT, recv, count, MPI_INT, root, c));
            if (rank == root)
                for (int q = 0; q < size; q++)
                    for (int i = 0; i < count; i++)
                        CHECK(recv[q * count + i] == val(q, i), "gather root %d: [%d][%d]=%d",
                              root, q, i, recv[q * count + i]);
            done(&c, "gather", count);
            /* gatherv: rank q sends count + q elements, placed in reverse rank order. */
            c = fresh();
            int *rc = malloc(size * sizeof(int)), *dis = malloc(size * sizeof(int));
            int total = 0;
            for (int q = size - 1; q >= 0; q--) {
                rc[q] = count + q;
                dis[q] = total;
                total += rc[q];
            }
            int *vs = malloc((count + size) * sizeof(int)), *vr = malloc((total + 1) * sizeof(int));
            for (int i = 0; i < count + rank; i++)
                vs[i] = val(rank, i);
            for (int i = 0; i < total; i++)
                vr[i] = -1;
            if (in_place && rank == root)
                memcpy(vr + dis[root], vs, rc[root] * sizeof(int));
            s = in_place && rank == root ? MPI_IN_PLACE : vs;
            EXPECT_OK(MPI_Gatherv(s, count + rank, MPI_INT, vr, rc, dis, MPI_INT, root, c));
            if (rank == root)
                for (int q = 0; q < size; q++)
                    for (int i = 0; i < rc[q]; i++)
                        CHECK(vr[dis[q] + i] == val(q, i), "gatherv root %d: [%d][%d]=%d", root,
                              q, i, vr[dis[q] + i]);
            done(&c, "gatherv", count);
            free(rc), free(dis), free(vs), free(vr), free(send), free(recv);
        }
    }
}

static void scatters(int count)
{
    for (int root = 0; root < size; root++) {
        for (int in_place = 0; in_place < 2; in_place++) {
            MPI_Comm c = fresh();
            int *send = malloc(((size_t)count * size + 1) * sizeof(int));
            int *recv = malloc((count + 1) * sizeof(int));
            for (int i = 0; i < count * size; i++)
                send[i] = rank == root ? val(i / (count ? count : 1), i % (count ? count : 1)) : -7;
            for (int i = 0; i < count; i++)
                recv[i] = -1;
            void *r = in_place && rank == root ? MPI_IN_PLACE : recv;
            EXPECT_OK(MPI_Scatter(send, count, MPI_INT, r, count, MPI_INT, root, c));
            if (!(in_place && rank == root))
                for (int i = 0; i < count; i++)
                    CHECK(recv[i] == val(rank, i), "scatter root %d: [%d]=%d", root, i, recv[i]);
            done(&c, "scatter", count);
            free(send), free(recv);
        }
    }
}

static void allgathers(int count)
{
    for (int in_place = 0; in_place < 2; in_place++) {
        MPI_Comm c = fresh();
        int *send = malloc((count + 1) * sizeof(int));
        int *recv = malloc(((size_t)count * size + 1) * sizeof(int));
        for (int i = 0; i < count; i++)
            send[i] = val(rank, i);
        for (int i = 0; i < count * size; i++)
            recv[i] = -1;
        if (in_place)
            memcpy(recv + (size_t)rank * count, send, count * sizeof(int));
        EXPECT_OK(MPI_Allgather(in_place ? MPI_IN_PLACE : send, count, MPI_INT, recv, count,
                                MPI_INT, c));
        for (int q = 0; q < size; q++)
            for (int i = 0; i < count; i++)
                CHECK(recv[q * count + i] == val(q, i), "allgather: [%d][%d]=%d", q, i,
                      recv[q * count + i]);
        done(&c, "allgather", count);
        /* allgatherv with a gap between the blocks and rank q sending count + 2q. */
        c = fresh();
        int *rc = malloc(size * sizeof(int)), *dis = malloc(size * sizeof(int)), total = 0;
        for (int q = 0; q < size; q++) {
            rc[q] = count + 2 * q;
            dis[q] = total + 1;
            total += rc[q] + 1;
        }
        int *vr = malloc((total + 1) * sizeof(int)), *vs = malloc((count + 2 * size) * sizeof(int));
        for (int i = 0; i < rc[rank]; i++)
            vs[i] = val(rank, i);
        for (int i = 0; i < total; i++)
            vr[i] = -1;
        if (in_place)
            memcpy(vr + dis[rank], vs, rc[rank] * sizeof(int));
        EXPECT_OK(MPI_Allgatherv(in_place ? MPI_IN_PLACE : vs, rc[rank], MPI_INT, vr, rc, dis,
                                 MPI_INT, c));
        for (int q = 0; q < size; q++) {
            CHECK(vr[dis[q] - 1] == -1, "allgatherv: the gap before rank %d was written", q);
            for (int i = 0; i < rc[q]; i++)
                CHECK(vr[dis[q] + i] == val(q, i), "allgatherv: [%d][%d]=%d", q, i,
                      vr[dis[q] + i]);
        }
        done(&c, "allgatherv", count);
        free(rc), free(dis), free(vr), free(vs), free(send), free(recv);
    }
}

static void alltoalls(int count)
{
    for (int in_place = 0; in_place < 2; in_place++) {
        MPI_Comm c = fresh();
        size_t all = (size_t)count * size;
        int *send = malloc((all + 1) * sizeof(int)), *recv = malloc((all + 1) * sizeof(int));
        /* Block q of rank r holds val(r * size + q, i). */
        for (size_t k = 0; k < all; k++) {
            send[k] = val(rank * size + (int)(k / count), (int)(k % count));
            recv[k] = in_place ? send[k] : -1;
        }
        EXPECT_OK(MPI_Alltoall(in_place ? MPI_IN_PLACE : send, count, MPI_INT, recv, count,
                               MPI_INT, c));
        for (int q = 0; q < size; q++)
            for (int i = 0; i < count; i++)
                CHECK(recv[q * count + i] == val(q * size + rank, i), "alltoall: [%d][%d]=%d", q,
                      i, recv[q * count + i]);
        done(&c, "alltoall", count);
        free(send), free(recv);
    }
}

static void reduce_scatters(int count)
{
    for (int in_place = 0; in_place < 2; in_place++) {
        /* reduce_scatter_block with the non-commutative op: rank-order products. */
        MPI_Comm c = fresh();
        size_t all = (size_t)count * size;
        mat *in = malloc((all + 1) * sizeof(mat)), *out = malloc((count + 1) * sizeof(mat));
        for (size_t k = 0; k < all; k++)
            in[k] = mat_of(rank, (int)k);
        EXPECT_OK(MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : in,
                                           in_place ? (void *)in : out, count, mat_type,
                                           matmul_op, c));
        mat *got = in_place ? in : out;
        for (int i = 0; i < count; i++) {
            int k = rank * count + i;
            mat want = mat_of(0, k);
            for (int q = 1; q < size; q++)
                want = mul(want, mat_of(q, k));
            CHECK(same(got[i], want), "reduce_scatter_block: element %d", i);
        }
        done(&c, "reduce_scatter_block", count);
        free(in), free(out);
        /* reduce_scatter with sum and rank q receiving count + q. */
        c = fresh();
        int *rc = malloc(size * sizeof(int)), total = 0, off = 0;
        for (int q = 0; q < size; q++) {
            rc[q] = count + q;
            if (q < rank)
                off += rc[q];
            total += rc[q];
        }
        int *vi = malloc((total + 1) * sizeof(int)), *vo = malloc((rc[rank] + 1) * sizeof(int));
        for (int k = 0; k < total; k++)
            vi[k] = val(rank, k);
        EXPECT_OK(MPI_Reduce_scatter(in_place ? MPI_IN_PLACE : vi, in_place ? vi : vo, rc,
                                     MPI_INT, MPI_SUM, c));
        int *res = in_place ? vi : vo;
        for (int i = 0; i < rc[rank]; i++) {
            int want = 0;
            for (int q = 0; q < size; q++)
                want += val(q, off + i);
            CHECK(res[i] == want, "reduce_scatter: [%d]=%d, expected %d", i, res[i], want);
        }
        done(&c, "reduce_scatter", count);
        free(rc), free(vi), free(vo);
    }
}

static void scans(int count)
{
    for (int in_place = 0; in_place < 2; in_place++) {
        for (int ex = 0; ex < 2; ex++) {
            MPI_Comm c = fresh();
            mat *in = malloc((count + 1) * sizeof(mat)), *out = malloc((count + 1) * sizeof(mat));
            mat sentinel = {-1, -1, -1, -1};
            for (int i = 0; i < count; i++) {
                in[i] = mat_of(rank, i);
                out[i] = in_place ? in[i] : sentinel;
            }
            if (ex)
                EXPECT_OK(MPI_Exscan(in_place ? MPI_IN_PLACE : in, out, count, mat_type,
                                     matmul_op, c));
            else
                EXPECT_OK(MPI_Scan(in_place ? MPI_IN_PLACE : in, out, count, mat_type,
                                   matmul_op, c));
            int upto = ex ? rank - 1 : rank;
            for (int i = 0; i < count && upto >= 0; i++) {
                mat want = mat_of(0, i);
                for (int q = 1; q <= upto; q++)
                    want = mul(want, mat_of(q, i));
                CHECK(same(out[i], want), "%s: element %d", ex ? "exscan" : "scan", i);
            }
            if (ex && rank == 0 && !in_place)
                for (int i = 0; i < count; i++)
                    CHECK(same(out[i], sentinel), "exscan: rank 0's buffer was written");
            done(&c, ex ? "exscan" : "scan", count);
            free(in), free(out);
        }
    }
}

/* A strided receive (every other int) and a strided send: the shm paths pack and unpack. */
static void derived(void)
{
    int count = 5;
    MPI_Comm c = fresh();
    int *send = malloc(2 * count * sizeof(int)), *recv = malloc(2 * count * size * sizeof(int));
    for (int i = 0; i < count; i++)
        send[2 * i] = val(rank, i), send[2 * i + 1] = -3;
    for (int i = 0; i < 2 * count * size; i++)
        recv[i] = -1;
    /* strided_int: one int followed by a hole of one int (extent 8). */
    EXPECT_OK(MPI_Allgather(send, count, strided_int, recv, count, strided_int, c));
    for (int q = 0; q < size; q++)
        for (int i = 0; i < count; i++) {
            CHECK(recv[2 * (q * count + i)] == val(q, i), "derived allgather [%d][%d]", q, i);
            CHECK(recv[2 * (q * count + i) + 1] == -1, "derived allgather wrote a hole");
        }
    for (int i = 0; i < 2 * count * size; i++)
        recv[i] = -1;
    EXPECT_OK(MPI_Gather(send, count, strided_int, recv, count, MPI_INT, size - 1, c));
    if (rank == size - 1)
        for (int k = 0; k < count * size; k++)
            CHECK(recv[k] == val(k / count, k % count), "derived gather [%d]=%d", k, recv[k]);
    int *flat = malloc(count * size * sizeof(int));
    for (int k = 0; k < count * size; k++)
        flat[k] = val(rank * size + k / count, k % count);
    for (int i = 0; i < 2 * count * size; i++)
        recv[i] = -1;
    EXPECT_OK(MPI_Alltoall(flat, count, MPI_INT, recv, count, strided_int, c));
    for (int q = 0; q < size; q++)
        for (int i = 0; i < count; i++)
            CHECK(recv[2 * (q * count + i)] == val(q * size + rank, i), "derived alltoall");
    done(&c, "derived", count);
    free(send), free(recv), free(flat);
}

/* Many small collectives of every kind back to back on one communicator: the turns wrap
 * the slot and region rings many times. */
static void back_to_back(void)
{
    MPI_Comm c = fresh();
    for (int it = 0; it < 300; it++) {
        int x = val(rank, it), all[64], pre = 0, g[64];
        EXPECT_OK(MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, c));
        for (int q = 0; q < size; q++)
            CHECK(all[q] == val(q, it), "iteration %d: allgather", it);
        EXPECT_OK(MPI_Scan(&x, &pre, 1, MPI_INT, MPI_SUM, c));
        int want = 0;
        for (int q = 0; q <= rank; q++)
            want += val(q, it);
        CHECK(pre == want, "iteration %d: scan %d != %d", it, pre, want);
        EXPECT_OK(MPI_Gather(&x, 1, MPI_INT, g, 1, MPI_INT, it % size, c));
        if (rank == it % size)
            for (int q = 0; q < size; q++)
                CHECK(g[q] == val(q, it), "iteration %d: gather", it);
    }
    done(&c, "back_to_back", 1);
}

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *e = getenv("WTEST_SHM");
    expect_shm = e && atoi(e) == 1;
    EXPECT_OK(MPI_Op_create(matmul, 0, &matmul_op));
    EXPECT_OK(MPI_Type_contiguous(4, MPI_LONG_LONG, &mat_type));
    EXPECT_OK(MPI_Type_commit(&mat_type));
    MPI_Datatype one;
    EXPECT_OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &one));
    strided_int = one;
    EXPECT_OK(MPI_Type_commit(&strided_int));
    for (int k = 0; k < NCOUNTS; k++) {
        int count = counts[k];
        if (size > 4 && count > 600)
            continue;
        gathers(count);
        scatters(count);
        allgathers(count);
        alltoalls(count);
        reduce_scatters(count);
        scans(count);
    }
    derived();
    back_to_back();
    MPI_Type_free(&strided_int);
    MPI_Type_free(&mat_type);
    MPI_Op_free(&matmul_op);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
