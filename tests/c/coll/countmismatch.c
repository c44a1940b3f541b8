/* Collectives called with different counts on different ranks (an erroneous program) end on
 * every rank, never hang, and report MPI_ERR_TRUNCATE instead of returning wrong data: the
 * ranks of a node compare their sizes in the communicator's shared memory before moving any
 * data, also when some sizes are above WEFT_COLL_SHM_MAX and others below (they used to pick
 * different algorithms and wait for each other forever). Bcast: every non-root whose size
 * differs from the root's fails (the root may not know); Allreduce: every rank fails;
 * Reduce: the root fails. The communicator stays usable afterwards. */
#include "wtest.h"

static int rank, size;
static int buf[4096], out[4096];

static void fill(int n)
{
    for (int i = 0; i < 4096; i++)
        buf[i] = i < n ? i + rank : -7;
}

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* (root's count, others' count): both small, both large, across the shared-memory
     * limit either way, and zero against something. */
    int pairs[][2] = {{10, 5}, {5, 10}, {1000, 500}, {500, 1000}, {4000, 3000}, {0, 8}, {8, 0}};
    for (unsigned k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        int root_n = pairs[k][0], other_n = pairs[k][1];
        int n = rank == 0 ? root_n : other_n;
        fill(n);
        int rc = MPI_Bcast(buf, n, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank != 0) {
            EXPECT_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Bcast", "differs between the ranks");
            /* What fits of the root's data arrived; nothing was written past the buffer. */
            int m = root_n < other_n ? root_n : other_n;
            for (int i = 0; i < m; i++)
                if (buf[i] != i) {
                    FAIL("bcast %d/%d: buf[%d] = %d", root_n, other_n, i, buf[i]);
                    break;
                }
            if (buf[other_n] != -7)
                FAIL("bcast %d/%d wrote past the buffer", root_n, other_n);
        }
        fill(n);
        rc = MPI_Allreduce(buf, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (size > 1)
            EXPECT_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Allreduce", "differs between the ranks");
        rc = MPI_Reduce(buf, out, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (size > 1 && rank == 0)
            EXPECT_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Reduce", "differs between the ranks");
        /* Still usable: a correct collective gives the right answer. */
        int x = rank + 1, sum = 0;
        EXPECT_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK_INT(sum, size * (size + 1) / 2);
        fill(1000);
        EXPECT_OK(MPI_Bcast(buf, 1000, MPI_INT, 0, MPI_COMM_WORLD));
        CHECK_INT(buf[999], 999);
    }
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
