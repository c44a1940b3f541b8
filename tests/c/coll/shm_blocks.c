/* The shared-memory paths whose contributions hold several blocks of sizes only the sender
 * knows (crates/weft-core/src/coll/shm_blocks.rs): MPI_Scatterv, MPI_Alltoallv,
 * MPI_Alltoallw and the blocking neighbourhood collectives, with real values: every root,
 * counts 0, 1, odd, around the inline payload, around WEFT_COLL_SHM_MAX and far above it
 * (point-to-point after the turn), sizes that differ from rank to rank, reversed
 * displacements with gaps, MPI_IN_PLACE, a strided datatype on one side, a distributed graph
 * with repeated edges, a count mismatch (MPI_ERR_TRUNCATE on the rank that passed it, the
 * others unharmed), and a fresh communicator per collective whose area must be mapped
 * afterwards when WTEST_SHM=1 (the collective took the shared-memory path; 0: no area). */
#include "wtest.h"

static int rank, size, expect_shm;
static MPI_Datatype strided_int;

static int val(int r, int q, int i)
{
    return r * 1000003 + q * 1009 + i * 7 + 1;
}

static MPI_Comm fresh(void)
{
    MPI_Comm c;
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    return c;
}

static void done(MPI_Comm *c, const char *what, int count)
{
    int have = wtest_coll_areas(), base = expect_shm && size > 1 ? 1 : 0;
    CHECK(have == base, "%s count %d: %d coll-area mappings, expected %d", what, count, have,
          base);
    EXPECT_OK(MPI_Comm_free(c));
}

static const int counts[] = {0, 1, 3, 5, 13, 129, 1023, 1025, 3001};
#define NCOUNTS (int)(sizeof counts / sizeof counts[0])

/* Rank q receives count + q elements; the root's blocks lie in reverse rank order with a gap
 * of one element before each. */
static void scattervs(int count)
{
    int *sc = malloc(size * sizeof(int)), *dis = malloc(size * sizeof(int)), total = 0;
    for (int q = size - 1; q >= 0; q--) {
        sc[q] = count + q;
        dis[q] = total + 1;
        total += sc[q] + 1;
    }
    int *send = malloc((total + 1) * sizeof(int)), *recv = malloc((count + size) * sizeof(int));
    for (int root = 0; root < size; root++) {
        for (int in_place = 0; in_place < 2; in_place++) {
            MPI_Comm c = fresh();
            for (int i = 0; i < total; i++)
                send[i] = -7;
            if (rank == root)
                for (int q = 0; q < size; q++)
                    for (int i = 0; i < sc[q]; i++)
                        send[dis[q] + i] = val(root, q, i);
            for (int i = 0; i < count + size; i++)
                recv[i] = -1;
            void *r = in_place && rank == root ? MPI_IN_PLACE : recv;
            EXPECT_OK(MPI_Scatterv(send, sc, dis, MPI_INT, r, count + rank, MPI_INT, root, c));
            if (!(in_place && rank == root)) {
                for (int i = 0; i < count + rank; i++)
                    CHECK(recv[i] == val(root, rank, i), "scatterv root %d: [%d]=%d", root, i,
                          recv[i]);
                CHECK(recv[count + rank] == -1, "scatterv root %d wrote past the block", root);
            }
            done(&c, "scatterv", count);
        }
    }
    /* A strided receive type: every other int. */
    MPI_Comm c = fresh();
    int *wide = malloc(2 * (count + size) * sizeof(int));
    for (int i = 0; i < 2 * (count + size); i++)
        wide[i] = -1;
    if (rank == 0)
        for (int q = 0; q < size; q++)
            for (int i = 0; i < sc[q]; i++)
                send[dis[q] + i] = val(0, q, i);
    EXPECT_OK(MPI_Scatterv(send, sc, dis, MPI_INT, wide, count + rank, strided_int, 0, c));
    for (int i = 0; i < count + rank; i++) {
        CHECK(wide[2 * i] == val(0, rank, i), "strided scatterv: [%d]=%d", i, wide[2 * i]);
        CHECK(wide[2 * i + 1] == -1, "strided scatterv wrote a hole");
    }
    done(&c, "strided scatterv", count);
    free(wide), free(sc), free(dis), free(send), free(recv);
}

/* Rank r sends count + (r + q) % 3 elements to rank q; blocks in reverse order with gaps. */
static int vcount(int count, int from, int to)
{
    return count + (from + to) % 3;
}

static void alltoallvs(int count)
{
    int *sc = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int));
    int *rc = malloc(size * sizeof(int)), *rd = malloc(size * sizeof(int));
    int *rdw = malloc(size * sizeof(int)), *sdw = malloc(size * sizeof(int));
    MPI_Datatype *st = malloc(size * sizeof(MPI_Datatype)), *rt = malloc(size * sizeof(MPI_Datatype));
    int stotal = 0, rtotal = 0;
    for (int q = size - 1; q >= 0; q--) {
        sc[q] = vcount(count, rank, q), sd[q] = stotal + 1, stotal += sc[q] + 1;
        rc[q] = vcount(count, q, rank), rd[q] = rtotal + 1, rtotal += rc[q] + 1;
    }
    int *send = malloc((stotal + 1) * sizeof(int)), *recv = malloc(2 * (rtotal + 1) * sizeof(int));
    for (int in_place = 0; in_place < 2; in_place++) {
        MPI_Comm c = fresh();
        for (int i = 0; i < stotal; i++)
            send[i] = -7;
        for (int q = 0; q < size; q++)
            for (int i = 0; i < sc[q]; i++)
                send[sd[q] + i] = val(rank, q, i);
        for (int i = 0; i < rtotal; i++)
            recv[i] = -1;
        if (in_place) {
            /* In place the receive layout is both sides': rank q's block of the same size
             * goes back and forth, so only symmetric counts make sense. */
            for (int q = 0; q < size; q++)
                for (int i = 0; i < rc[q]; i++)
                    recv[rd[q] + i] = val(rank, q, i);
            EXPECT_OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_INT, recv, rc, rd, MPI_INT, c));
        } else {
            EXPECT_OK(MPI_Alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, c));
        }
        for (int q = 0; q < size; q++) {
            CHECK(recv[rd[q] - 1] == -1, "alltoallv: the gap before rank %d's block was written",
                  q);
            for (int i = 0; i < rc[q]; i++)
                CHECK(recv[rd[q] + i] == val(q, rank, i), "alltoallv%s: [%d][%d]=%d",
                      in_place ? " in place" : "", q, i, recv[rd[q] + i]);
        }
        done(&c, "alltoallv", count);
    }
    /* alltoallw: odd ranks' blocks arrive strided (every other int), even ranks' plain. */
    MPI_Comm c = fresh();
    for (int q = 0; q < size; q++) {
        st[q] = MPI_INT, sdw[q] = sd[q] * (int)sizeof(int);
        rt[q] = q % 2 ? strided_int : MPI_INT, rdw[q] = 2 * rd[q] * (int)sizeof(int);
    }
    for (int i = 0; i < 2 * rtotal; i++)
        recv[i] = -1;
    EXPECT_OK(MPI_Alltoallw(send, sc, sdw, st, recv, rc, rdw, rt, c));
    for (int q = 0; q < size; q++)
        for (int i = 0; i < rc[q]; i++) {
            int at = 2 * rd[q] + (q % 2 ? 2 * i : i);
            CHECK(recv[at] == val(q, rank, i), "alltoallw: [%d][%d]=%d", q, i, recv[at]);
            if (q % 2)
                CHECK(recv[at + 1] == -1, "alltoallw wrote a hole of rank %d's block", q);
        }
    done(&c, "alltoallw", count);
    free(sc), free(sd), free(rc), free(rd), free(rdw), free(sdw), free(st), free(rt);
    free(send), free(recv);
}

/* A distributed graph where every rank sends to rank+1 twice and to itself once (repeated
 * edges match in list order), with count-sized blocks. */
static void neighbours(int count)
{
    int out[3] = {(rank + 1) % size, rank, (rank + 1) % size};
    int in[3] = {(rank + size - 1) % size, rank, (rank + size - 1) % size};
    int w[3] = {1, 1, 1};
    MPI_Comm base = fresh(), dg;
    EXPECT_OK(MPI_Dist_graph_create_adjacent(base, 3, in, w, 3, out, w, MPI_INFO_NULL, 0, &dg));
    int *send = malloc((3 * count + 1) * sizeof(int)), *recv = malloc((3 * count + 1) * sizeof(int));
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < count; i++)
            send[k * count + i] = val(rank, k, i);
    for (int i = 0; i < 3 * count; i++)
        recv[i] = -1;
    EXPECT_OK(MPI_Neighbor_alltoall(send, count, MPI_INT, recv, count, MPI_INT, dg));
    /* Source 0 is rank-1's first edge to me (its block 0), source 1 myself (block 1),
     * source 2 rank-1's second edge (block 2). */
    int from[3] = {(rank + size - 1) % size, rank, (rank + size - 1) % size};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < count; i++)
            CHECK(recv[k * count + i] == val(from[k], k, i),
                  "neighbor_alltoall count %d source %d: [%d]=%d", count, k, i,
                  recv[k * count + i]);
    for (int i = 0; i < 3 * count; i++)
        recv[i] = -1;
    EXPECT_OK(MPI_Neighbor_allgather(send, count, MPI_INT, recv, count, MPI_INT, dg));
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < count; i++)
            CHECK(recv[k * count + i] == val(from[k], 0, i),
                  "neighbor_allgather count %d source %d: [%d]=%d", count, k, i,
                  recv[k * count + i]);
    EXPECT_OK(MPI_Comm_free(&dg));
    EXPECT_OK(MPI_Comm_free(&base));
    free(send), free(recv);
}

/* Rank 1 expects one element more than the root sends: it fails with MPI_ERR_TRUNCATE, the
 * others get their data. */
static void mismatch(void)
{
    if (size < 2)
        return;
    MPI_Comm c = fresh();
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int sc[64], dis[64], send[64], recv[4] = {-1, -1, -1, -1};
    for (int q = 0; q < size; q++)
        sc[q] = 2, dis[q] = 2 * q, send[2 * q] = val(0, q, 0), send[2 * q + 1] = val(0, q, 1);
    int rc = rank == 1 ? 3 : 2;
    int err = MPI_Scatterv(send, sc, dis, MPI_INT, recv, rc, MPI_INT, 0, c), cls = -1;
    MPI_Error_class(err, &cls);
    if (rank == 1) {
        CHECK(cls == MPI_ERR_TRUNCATE, "scatterv mismatch: class %d", cls);
    } else {
        CHECK(err == MPI_SUCCESS, "scatterv mismatch hurt rank %d: %d", rank, err);
        CHECK(recv[0] == val(0, rank, 0) && recv[1] == val(0, rank, 1),
              "scatterv mismatch: rank %d got %d %d", rank, recv[0], recv[1]);
    }
    /* The communicator still works. */
    recv[0] = recv[1] = -1;
    EXPECT_OK(MPI_Scatterv(send, sc, dis, MPI_INT, recv, 2, MPI_INT, size - 1, c));
    CHECK(recv[0] == val(0, rank, 0) && recv[1] == val(0, rank, 1),
          "scatterv after the mismatch: rank %d got %d %d", rank, recv[0], recv[1]);
    done(&c, "mismatch", 2);
}

/* Many small ones back to back on one communicator: the turns wrap the rings. */
static void back_to_back(void)
{
    MPI_Comm c = fresh();
    int sc[64], dis[64], send[128], recv[128], one = 0;
    for (int it = 0; it < 300; it++) {
        int root = it % size;
        for (int q = 0; q < size; q++) {
            sc[q] = 1 + (q + it) % 2, dis[q] = 2 * q;
            send[2 * q] = val(it, q, 0), send[2 * q + 1] = val(it, q, 1);
        }
        EXPECT_OK(MPI_Scatterv(send, sc, dis, MPI_INT, recv, sc[rank], MPI_INT, root, c));
        for (int i = 0; i < sc[rank]; i++)
            CHECK(recv[i] == val(it, rank, i), "iteration %d: scatterv", it);
        for (int q = 0; q < size; q++)
            send[q] = val(it, rank, q), sc[q] = 1, dis[q] = q;
        EXPECT_OK(MPI_Alltoallv(send, sc, dis, MPI_INT, recv, sc, dis, MPI_INT, c));
        for (int q = 0; q < size; q++)
            CHECK(recv[q] == val(it, q, rank), "iteration %d: alltoallv from %d", it, q);
        one += 1;
    }
    CHECK(one == 300, "loop");
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
    MPI_Datatype one;
    EXPECT_OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &one));
    strided_int = one;
    EXPECT_OK(MPI_Type_commit(&strided_int));
    for (int k = 0; k < NCOUNTS; k++) {
        int count = counts[k];
        if (size > 4 && count > 600)
            continue;
        scattervs(count);
        alltoallvs(count);
        neighbours(count);
    }
    mismatch();
    back_to_back();
    MPI_Type_free(&strided_int);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
