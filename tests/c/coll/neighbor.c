/* Neighbourhood collectives: a periodic 1-D ring (at 1 and 2 ranks the -1 and +1 neighbours
 * are the same rank: direction must still hold), a non-periodic 2-D grid (MPI_PROC_NULL
 * edges leave buffers alone), a graph, an asymmetric distributed graph; allgather(v),
 * alltoall(v,w); blocking, nonblocking, persistent and _c forms. */
#include "wtest.h"

static int rank, size;

/* what rank r sends to its k-th destination */
static int sent(int r, int k) { return r * 100 + k; }

static void check_alltoall(MPI_Comm c, int indeg, const int *srcs, int outdeg,
                           const int *dsts, const int *src_slot, const char *what)
{
    int sbuf[16], rbuf[16], rbuf2[16];
    (void)dsts;
    for (int k = 0; k < outdeg; k++)
        sbuf[k] = sent(rank, k);
    for (int k = 0; k < 16; k++)
        rbuf[k] = rbuf2[k] = -5;
    EXPECT_OK(MPI_Neighbor_alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, c));
    MPI_Request req;
    EXPECT_OK(MPI_Ineighbor_alltoall_c(sbuf, 1, MPI_INT, rbuf2, 1, MPI_INT, c, &req));
    EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int k = 0; k < indeg; k++) {
        int want = srcs[k] < 0 ? -5 : sent(srcs[k], src_slot[k]);
        CHECK(rbuf[k] == want, "%s alltoall from source %d (rank %d): %d, expected %d", what,
              k, srcs[k], rbuf[k], want);
        CHECK(rbuf2[k] == want, "%s ialltoall_c from source %d: %d, expected %d", what, k,
              rbuf2[k], want);
    }
    /* allgather through a persistent request, twice */
    int mine;
    EXPECT_OK(MPI_Neighbor_allgather_init(&mine, 1, MPI_INT, rbuf, 1, MPI_INT, c,
                                          MPI_INFO_NULL, &req));
    for (int round = 0; round < 2; round++) {
        mine = rank * 10 + round;
        for (int k = 0; k < 16; k++)
            rbuf[k] = -5;
        EXPECT_OK(MPI_Start(&req));
        EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int k = 0; k < indeg; k++) {
            int want = srcs[k] < 0 ? -5 : srcs[k] * 10 + round;
            CHECK(rbuf[k] == want, "%s allgather source %d: %d, expected %d", what, k, rbuf[k],
                  want);
        }
    }
    MPI_Request_free(&req);
    /* alltoallv with 2 ints per neighbour at reversed displacements; alltoallw likewise */
    int sc[16], sd[16], rc[16], rd[16], s2[32], r2[32];
    MPI_Aint sdw[16], rdw[16];
    MPI_Datatype st[16], rt[16];
    for (int k = 0; k < outdeg; k++) {
        sc[k] = 2, sd[k] = 2 * (outdeg - 1 - k), sdw[k] = sd[k] * sizeof(int), st[k] = MPI_INT;
        s2[sd[k]] = sent(rank, k), s2[sd[k] + 1] = -sent(rank, k);
    }
    for (int k = 0; k < indeg; k++)
        rc[k] = 2, rd[k] = 2 * (indeg - 1 - k), rdw[k] = rd[k] * sizeof(int), rt[k] = MPI_INT;
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < 32; k++)
            r2[k] = -5;
        if (pass == 0)
            EXPECT_OK(MPI_Neighbor_alltoallv(s2, sc, sd, MPI_INT, r2, rc, rd, MPI_INT, c));
        else
            EXPECT_OK(MPI_Neighbor_alltoallw(s2, sc, sdw, st, r2, rc, rdw, rt, c));
        for (int k = 0; k < indeg; k++) {
            int want = srcs[k] < 0 ? -5 : sent(srcs[k], src_slot[k]);
            CHECK(r2[rd[k]] == want && r2[rd[k] + 1] == (srcs[k] < 0 ? -5 : -want),
                  "%s alltoall%s source %d: %d,%d expected %d", what, pass ? "w" : "v", k,
                  r2[rd[k]], r2[rd[k] + 1], want);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_world_rank();
    int srcs[16], slot[16];

    /* periodic ring: neighbours [left, right]; what I get from my left neighbour is what it
     * sent to its right one (slot 1), from my right one what it sent left (slot 0) */
    MPI_Comm ring;
    int dims[2] = {size, 0}, periods[2] = {1, 0};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    srcs[0] = (rank + size - 1) % size, slot[0] = 1;
    srcs[1] = (rank + 1) % size, slot[1] = 0;
    check_alltoall(ring, 2, srcs, 2, srcs, slot, "ring");
    MPI_Comm_free(&ring);

    /* non-periodic grid */
    dims[0] = dims[1] = 0;
    MPI_Dims_create(size, 2, dims);
    periods[0] = periods[1] = 0;
    MPI_Comm grid;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    for (int d = 0; d < 2; d++) {
        int lo, hi;
        MPI_Cart_shift(grid, d, 1, &lo, &hi);
        srcs[2 * d] = lo == MPI_PROC_NULL ? -1 : lo, slot[2 * d] = 2 * d + 1;
        srcs[2 * d + 1] = hi == MPI_PROC_NULL ? -1 : hi, slot[2 * d + 1] = 2 * d;
    }
    check_alltoall(grid, 4, srcs, 4, srcs, slot, "grid");
    MPI_Comm_free(&grid);

    /* distributed graph: I send to rank+1 and rank+2, receive from rank-1 and rank-2 */
    if (size >= 3) {
        int out[2] = {(rank + 1) % size, (rank + 2) % size};
        int in[2] = {(rank + size - 1) % size, (rank + size - 2) % size};
        MPI_Comm dg;
        int w[2] = {1, 1};
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, w, 2, out, w, MPI_INFO_NULL, 0,
                                       &dg);
        srcs[0] = in[0], slot[0] = 0;
        srcs[1] = in[1], slot[1] = 1;
        check_alltoall(dg, 2, srcs, 2, out, slot, "dist graph");
        MPI_Comm_free(&dg);
        /* graph: a star around rank 0 */
        int index[16], edges[32], e = 0;
        for (int r = 0; r < size; r++) {
            if (r == 0)
                for (int q = 1; q < size; q++)
                    edges[e++] = q;
            else
                edges[e++] = 0;
            index[r] = e;
        }
        MPI_Comm g;
        MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g);
        int deg = rank == 0 ? size - 1 : 1;
        for (int k = 0; k < deg; k++) {
            srcs[k] = rank == 0 ? k + 1 : 0;
            slot[k] = rank == 0 ? 0 : rank - 1;
        }
        check_alltoall(g, deg, srcs, deg, srcs, slot, "graph");
        MPI_Comm_free(&g);
    }
    /* no topology */
    int x = 0, y;
    EXPECT_CLASS(MPI_Neighbor_allgather(&x, 1, MPI_INT, &y, 1, MPI_INT, MPI_COMM_WORLD),
                 MPI_ERR_TOPOLOGY);
    MPI_Finalize();
    return wtest_finish();
}
