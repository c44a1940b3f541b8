/* Barrier, broadcast, reduce and allreduce on MPI_COMM_WORLD and MPI_COMM_SELF: every root,
 * sizes from 0 to past 1 MiB (every algorithm's size range), in-place forms, values that
 * identify their origin. Also run with WEFT_COLL_* forcing each algorithm (manifest). */
#include "wtest.h"

static const int counts[] = {0, 1, 2, 7, 64, 1000, 4099, 70000, 300000};
#define NCOUNTS (int)(sizeof counts / sizeof counts[0])

static void test_bcast(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int c = 0; c < NCOUNTS; c++) {
        int n = counts[c];
        int *buf = malloc((n + 1) * sizeof(int));
        for (int root = 0; root < size; root++) {
            for (int i = 0; i < n; i++)
                buf[i] = rank == root ? i * 7 + root : -1;
            EXPECT_OK(MPI_Bcast(buf, n, MPI_INT, root, comm));
            int bad = 0;
            for (int i = 0; i < n; i++)
                bad += buf[i] != i * 7 + root;
            CHECK(bad == 0, "bcast n=%d root=%d: %d wrong elements", n, root, bad);
        }
        free(buf);
    }
}

static void test_reduce(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int c = 0; c < NCOUNTS; c++) {
        int n = counts[c];
        int *in = malloc((n + 1) * sizeof(int)), *out = malloc((n + 1) * sizeof(int));
        for (int root = 0; root < size; root++) {
            for (int i = 0; i < n; i++) {
                in[i] = rank + i;
                out[i] = -1;
            }
            EXPECT_OK(MPI_Reduce(in, out, n, MPI_INT, MPI_SUM, root, comm));
            if (rank == root) {
                int bad = 0;
                for (int i = 0; i < n; i++)
                    bad += out[i] != size * (size - 1) / 2 + size * i;
                CHECK(bad == 0, "reduce n=%d root=%d: %d wrong", n, root, bad);
            }
            /* In place at the root. */
            for (int i = 0; i < n; i++)
                out[i] = in[i] = rank * 3 - i;
            if (rank == root)
                EXPECT_OK(MPI_Reduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_MAX, root, comm));
            else
                EXPECT_OK(MPI_Reduce(in, NULL, n, MPI_INT, MPI_MAX, root, comm));
            if (rank == root) {
                int bad = 0;
                for (int i = 0; i < n; i++)
                    bad += out[i] != (size - 1) * 3 - i;
                CHECK(bad == 0, "reduce in place n=%d root=%d: %d wrong", n, root, bad);
            }
        }
        free(in);
        free(out);
    }
}

static void test_allreduce(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int c = 0; c < NCOUNTS; c++) {
        int n = counts[c];
        double *in = malloc((n + 1) * sizeof(double)), *out = malloc((n + 1) * sizeof(double));
        for (int i = 0; i < n; i++) {
            in[i] = rank + 0.5 * i;
            out[i] = -1;
        }
        EXPECT_OK(MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm));
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += out[i] != size * (size - 1) / 2.0 + size * 0.5 * i;
        CHECK(bad == 0, "allreduce n=%d: %d wrong (out[0]=%g)", n, bad, n ? out[0] : 0.0);
        /* In place, MIN. */
        for (int i = 0; i < n; i++)
            out[i] = (rank + i) % size;
        EXPECT_OK(MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_DOUBLE, MPI_MIN, comm));
        bad = 0;
        for (int i = 0; i < n; i++)
            bad += out[i] != 0;
        CHECK(bad == 0, "allreduce in place n=%d: %d wrong", n, bad);
        free(in);
        free(out);
    }
}

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
    for (int k = 0; k < 2; k++) {
        for (int rep = 0; rep < 3; rep++)
            EXPECT_OK(MPI_Barrier(comms[k]));
        test_bcast(comms[k]);
        test_reduce(comms[k]);
        test_allreduce(comms[k]);
        EXPECT_OK(MPI_Barrier(comms[k]));
    }
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
