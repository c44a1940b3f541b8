/* Cartesian topologies: Dims_create, Cart_create/get/rank/coords/shift/sub/map, Cartdim_get,
 * Topo_test, and bad input. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int rank, size, dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2], r, n, st, src, dst;
    MPI_Comm cart, row;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    {
        int d3[3] = {0, 0, 0}, d2[2] = {0, 3}, bad[2] = {0, 4};
        EXPECT_OK(MPI_Dims_create(24, 3, d3));
        CHECK(d3[0] == 4 && d3[1] == 3 && d3[2] == 2, "24 -> %d %d %d", d3[0], d3[1], d3[2]);
        EXPECT_OK(MPI_Dims_create(6, 2, d2));
        CHECK(d2[0] == 2 && d2[1] == 3, "6 with 3 fixed -> %d %d", d2[0], d2[1]);
        EXPECT_ERR(MPI_Dims_create(6, 2, bad), MPI_ERR_DIMS, "MPI_Dims_create", "dims");
        EXPECT_ERR(MPI_Dims_create(6, -1, bad), MPI_ERR_DIMS, "MPI_Dims_create", "ndims");
    }
    EXPECT_OK(MPI_Dims_create(size, 2, dims));
    CHECK_INT(dims[0] * dims[1], size);
    CHECK(dims[0] >= dims[1], "non-increasing %d %d", dims[0], dims[1]);

    EXPECT_OK(MPI_Topo_test(MPI_COMM_WORLD, &st));
    CHECK_INT(st, MPI_UNDEFINED);
    EXPECT_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    EXPECT_OK(MPI_Topo_test(cart, &st));
    CHECK_INT(st, MPI_CART);
    EXPECT_OK(MPI_Cartdim_get(cart, &n));
    CHECK_INT(n, 2);
    {
        int gd[2], gp[2], gc[2];
        EXPECT_OK(MPI_Cart_get(cart, 2, gd, gp, gc));
        CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0, "cart_get");
        CHECK(gc[0] == rank / dims[1] && gc[1] == rank % dims[1], "row-major coords %d %d", gc[0], gc[1]);
    }
    EXPECT_OK(MPI_Cart_coords(cart, size - 1, 2, coords));
    CHECK(coords[0] == dims[0] - 1 && coords[1] == dims[1] - 1, "last coords");
    EXPECT_OK(MPI_Cart_rank(cart, coords, &r));
    CHECK_INT(r, size - 1);
    /* dimension 0 is periodic: -1 wraps */
    coords[0] = -1;
    coords[1] = 0;
    EXPECT_OK(MPI_Cart_rank(cart, coords, &r));
    CHECK_INT(r, (dims[0] - 1) * dims[1]);
    coords[0] = 0;
    coords[1] = dims[1];
    EXPECT_ERR(MPI_Cart_rank(cart, coords, &r), MPI_ERR_ARG, "MPI_Cart_rank", "coords[1]");
    EXPECT_OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
    CHECK_INT(src, ((rank / dims[1] + dims[0] - 1) % dims[0]) * dims[1] + rank % dims[1]);
    CHECK_INT(dst, ((rank / dims[1] + 1) % dims[0]) * dims[1] + rank % dims[1]);
    EXPECT_OK(MPI_Cart_shift(cart, 1, 1, &src, &dst));
    CHECK_INT(src, rank % dims[1] == 0 ? MPI_PROC_NULL : rank - 1);
    CHECK_INT(dst, rank % dims[1] == dims[1] - 1 ? MPI_PROC_NULL : rank + 1);
    EXPECT_ERR(MPI_Cart_shift(cart, 2, 1, &src, &dst), MPI_ERR_ARG, "MPI_Cart_shift", "direction");

    /* rows: keep dimension 1 */
    {
        int remain[2] = {0, 1}, rd, rp, rc;
        EXPECT_OK(MPI_Cart_sub(cart, remain, &row));
        EXPECT_OK(MPI_Comm_size(row, &n));
        CHECK_INT(n, dims[1]);
        EXPECT_OK(MPI_Comm_rank(row, &r));
        CHECK_INT(r, rank % dims[1]);
        EXPECT_OK(MPI_Cart_get(row, 1, &rd, &rp, &rc));
        CHECK(rd == dims[1] && rp == 0 && rc == rank % dims[1], "row topology");
        EXPECT_OK(MPI_Comm_free(&row));
    }
    EXPECT_OK(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &r));
    CHECK_INT(r, rank);

    /* a grid smaller than the communicator leaves the last rank out */
    if (size > 1) {
        int d1 = size - 1, p1 = 0;
        MPI_Comm small;
        EXPECT_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &d1, &p1, 1, &small));
        if (rank == size - 1)
            CHECK(small == MPI_COMM_NULL, "outside the grid");
        else
            EXPECT_OK(MPI_Comm_free(&small));
    }
    {
        int big = size + 1, p1 = 0;
        MPI_Comm x = MPI_COMM_WORLD;
        EXPECT_ERR(MPI_Cart_create(MPI_COMM_WORLD, 1, &big, &p1, 0, &x), MPI_ERR_ARG, "MPI_Cart_create", "dims");
        /* The failed call leaves MPI_COMM_NULL, as MPICH does (its errors/topo/cartsmall). */
        CHECK(x == MPI_COMM_NULL, "a failed MPI_Cart_create left its output handle set");
        EXPECT_ERR(MPI_Cartdim_get(MPI_COMM_WORLD, &n), MPI_ERR_TOPOLOGY, "MPI_Cartdim_get", "comm");
    }
    /* dup keeps the topology */
    {
        MPI_Comm c2;
        EXPECT_OK(MPI_Comm_dup(cart, &c2));
        EXPECT_OK(MPI_Topo_test(c2, &st));
        CHECK_INT(st, MPI_CART);
        EXPECT_OK(MPI_Comm_free(&c2));
    }
    EXPECT_OK(MPI_Comm_free(&cart));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
