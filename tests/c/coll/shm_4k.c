/* The default WEFT_COLL_SHM_MAX holds 4 KiB: an MPI_Scan, MPI_Exscan and
 * MPI_Reduce_scatter_block of 4 KiB per rank (512 doubles) run through the shared-memory
 * area (crates/weft-core/src/coll/shm_data.rs), as the algorithm counters bound to the
 * communicator show, and give the right values; one element more goes by point-to-point
 * (reduce-scatter-block) or streams in parts (scan, exscan). WTEST_4K_SHM=0 (run with a
 * smaller WEFT_COLL_SHM_MAX and no streaming) expects point-to-point throughout. */
#include "wtest.h"
#include "coll_counters.h"

#define N 512 /* doubles: 4 KiB */

static double x(int r, int i)
{
    return r * 1000.0 + i;
}

/* Scan, exscan and reduce-scatter-block of `n` doubles per rank on `c`, values checked. */
static void run(MPI_Comm c, int rank, int size, int n)
{
    double *in = malloc((size_t)n * size * sizeof(double));
    double *out = malloc((size_t)n * size * sizeof(double));
    for (int i = 0; i < n * size; i++)
        in[i] = x(rank, i);
    for (int i = 0; i < n; i++)
        out[i] = -1;
    EXPECT_OK(MPI_Scan(in, out, n, MPI_DOUBLE, MPI_SUM, c));
    for (int i = 0; i < n; i++) {
        double want = 0;
        for (int q = 0; q <= rank; q++)
            want += x(q, i);
        CHECK(out[i] == want, "scan n=%d [%d] = %g, expected %g", n, i, out[i], want);
    }
    for (int i = 0; i < n; i++)
        out[i] = -1;
    EXPECT_OK(MPI_Exscan(in, out, n, MPI_DOUBLE, MPI_SUM, c));
    for (int i = 0; i < n; i++) {
        double want = rank == 0 ? -1 : 0; /* rank 0's buffer stays untouched */
        for (int q = 0; q < rank; q++)
            want += x(q, i);
        CHECK(out[i] == want, "exscan n=%d [%d] = %g, expected %g", n, i, out[i], want);
    }
    /* The whole vector is n doubles: each rank gets n / size of them. */
    int block = n / size;
    for (int i = 0; i < block; i++)
        out[i] = -1;
    EXPECT_OK(MPI_Reduce_scatter_block(in, out, block, MPI_DOUBLE, MPI_SUM, c));
    for (int i = 0; i < block; i++) {
        double want = 0;
        for (int q = 0; q < size; q++)
            want += x(q, rank * block + i);
        CHECK(out[i] == want, "reduce_scatter_block n=%d [%d] = %g, expected %g", n, i, out[i],
              want);
    }
    free(in), free(out);
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *e = getenv("WTEST_4K_SHM");
    int shm = !e || atoi(e) != 0;
    EXPECT_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    EXPECT_OK(MPI_T_pvar_session_create(&s));
    MPI_Comm c;
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_T_pvar_handle sc_shm = counter("weft_coll_scan_shm", &c),
                      sc_rd = counter("weft_coll_scan_recursive_doubling", &c),
                      rs_shm = counter("weft_coll_reduce_scatter_shm", &c);

    run(c, rank, size, N);
    CHECK_INT(value(sc_shm), shm ? 2 : 0);
    CHECK_INT(value(sc_rd), shm ? 0 : 2);
    CHECK_INT(value(rs_shm), shm ? 1 : 0);

    /* One block of 8 bytes more per rank than the area holds: reduce-scatter-block by
     * point-to-point, scan and exscan streamed through the area in two parts
     * (c/coll/shm_scan_stream), same values. */
    run(c, rank, size, N + size);
    CHECK_INT(value(sc_shm), shm ? 4 : 0);
    CHECK_INT(value(sc_rd), shm ? 0 : 4);
    CHECK_INT(value(rs_shm), shm ? 1 : 0);

    EXPECT_OK(MPI_T_pvar_session_free(&s));
    EXPECT_OK(MPI_T_finalize());
    EXPECT_OK(MPI_Comm_free(&c));
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
