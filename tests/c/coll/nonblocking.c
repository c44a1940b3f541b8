/* Nonblocking collectives: every kind started at once (several of each outstanding on one
 * communicator), completed with Waitall in reverse order and with Test loops; they progress
 * while the user waits on an unrelated point-to-point receive; user-op reductions too. */
#include "wtest.h"

#define K 4 /* outstanding copies of each */
#define NR 40
static int rank, size;

static void addmod(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *x = in, *y = inout;
    for (int i = 0; i < *len; i++)
        y[i] = (x[i] + y[i]) % 1000;
}

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op uop;
    EXPECT_OK(MPI_Op_create(addmod, 1, &uop));
    const int n = 1000; /* ints per block */
    MPI_Request req[NR];
    int nreq = 0;
    int *bc[K], *ar_in[K], *ar_out[K], *ag_out[K], *a2a_in[K], *a2a_out[K], *red_out[K],
        *scan_out[K], *rs_in[K], rs_out[K][4];
    for (int k = 0; k < K; k++) {
        bc[k] = malloc(n * sizeof(int));
        ar_in[k] = malloc(n * sizeof(int));
        ar_out[k] = malloc(n * sizeof(int));
        red_out[k] = malloc(n * sizeof(int));
        scan_out[k] = malloc(n * sizeof(int));
        ag_out[k] = malloc((size_t)n * size * sizeof(int));
        a2a_in[k] = malloc((size_t)n * size * sizeof(int));
        a2a_out[k] = malloc((size_t)n * size * sizeof(int));
        rs_in[k] = malloc(4 * size * sizeof(int));
        int root = k % size;
        for (int i = 0; i < n; i++) {
            bc[k][i] = rank == root ? k * 100000 + i : -1;
            ar_in[k][i] = rank + k + i;
        }
        for (int j = 0; j < n * size; j++)
            a2a_in[k][j] = rank * 1000000 + k * 10000 + j;
        for (int j = 0; j < 4 * size; j++)
            rs_in[k][j] = rank + j + k;
        EXPECT_OK(MPI_Ibcast(bc[k], n, MPI_INT, root, MPI_COMM_WORLD, &req[nreq++]));
        EXPECT_OK(MPI_Iallreduce(ar_in[k], ar_out[k], n, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                 &req[nreq++]));
        EXPECT_OK(MPI_Ireduce(ar_in[k], red_out[k], n, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD,
                              &req[nreq++]));
        EXPECT_OK(MPI_Iscan(ar_in[k], scan_out[k], n, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                            &req[nreq++]));
        EXPECT_OK(MPI_Iallgather(ar_in[k], n, MPI_INT, ag_out[k], n, MPI_INT, MPI_COMM_WORLD,
                                 &req[nreq++]));
        EXPECT_OK(MPI_Ialltoall(a2a_in[k], n, MPI_INT, a2a_out[k], n, MPI_INT, MPI_COMM_WORLD,
                                &req[nreq++]));
        EXPECT_OK(MPI_Ireduce_scatter_block(rs_in[k], rs_out[k], 4, MPI_INT, MPI_SUM,
                                            MPI_COMM_WORLD, &req[nreq++]));
        EXPECT_OK(MPI_Ibarrier(MPI_COMM_WORLD, &req[nreq++]));
    }
    /* Progress while waiting on something else: a ring exchange that each rank only sends
     * after it received, so every rank waits in MPI_Recv while the collectives run. */
    if (size > 1) {
        int token = 0;
        if (rank == 0) {
            EXPECT_OK(MPI_Send(&token, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
            EXPECT_OK(MPI_Recv(&token, 1, MPI_INT, size - 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            EXPECT_OK(MPI_Recv(&token, 1, MPI_INT, rank - 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            EXPECT_OK(MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD));
        }
    }
    /* Half by Test loops (last first), the rest by one Waitall. */
    for (int i = nreq - 1; i >= nreq / 2; i--) {
        int flag = 0;
        while (!flag)
            EXPECT_OK(MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE));
        CHECK(req[i] == MPI_REQUEST_NULL, "completed request is freed");
    }
    EXPECT_OK(MPI_Waitall(nreq / 2, req, MPI_STATUSES_IGNORE));
    for (int k = 0; k < K; k++) {
        int root = k % size, bad = 0;
        for (int i = 0; i < n; i++) {
            bad += bc[k][i] != k * 100000 + i;
            bad += ar_out[k][i] != size * (size - 1) / 2 + size * (k + i);
            bad += scan_out[k][i] != rank * (rank + 1) / 2 + (rank + 1) * (k + i);
            if (rank == root)
                bad += red_out[k][i] != size - 1 + k + i;
        }
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++) {
                bad += ag_out[k][r * n + i] != r + k + i;
                bad += a2a_out[k][r * n + i] != r * 1000000 + k * 10000 + rank * n + i;
            }
        for (int j = 0; j < 4; j++)
            bad += rs_out[k][j] != size * (size - 1) / 2 + size * (rank * 4 + j + k);
        CHECK(bad == 0, "batch %d: %d wrong values", k, bad);
    }
    /* User ops (run at the call) and v forms, in place. */
    {
        int in[3] = {rank, 500, 999}, out[3];
        MPI_Request r2[3];
        EXPECT_OK(MPI_Iallreduce(in, out, 3, MPI_INT, uop, MPI_COMM_WORLD, &r2[0]));
        int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
        int *g = malloc(size * 2 * sizeof(int));
        for (int r = 0; r < size; r++) {
            counts[r] = r % 2 + 1;
            displs[r] = 2 * r;
            g[2 * r] = g[2 * r + 1] = -1;
        }
        for (int j = 0; j < counts[rank]; j++)
            g[2 * rank + j] = rank * 10 + j;
        EXPECT_OK(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, counts, displs, MPI_INT,
                                  MPI_COMM_WORLD, &r2[1]));
        int x = rank;
        EXPECT_OK(MPI_Iexscan(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r2[2]));
        EXPECT_OK(MPI_Waitall(3, r2, MPI_STATUSES_IGNORE));
        CHECK_INT(out[0], size * (size - 1) / 2 % 1000);
        CHECK_INT(out[1], 500 * size % 1000);
        for (int r = 0; r < size; r++)
            for (int j = 0; j < counts[r]; j++)
                CHECK_INT(g[2 * r + j], r * 10 + j);
        if (rank > 0)
            CHECK_INT(x, rank * (rank - 1) / 2);
        free(counts);
        free(displs);
        free(g);
    }
    EXPECT_OK(MPI_Op_free(&uop));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
