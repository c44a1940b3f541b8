/* A reduce whose root passes another op than the other ranks (an erroneous program; MPICH's
 * errors/coll/reduceop): every rank, not only the root, must leave MPI_Reduce and
 * MPI_Ireduce with MPI_ERR_OP saying the op differs. A non-root used to return MPI_SUCCESS:
 * its part is a send, and only the root received the other op's mark. Through the shared
 * area a non-root now compares the root's contribution with its own; an ireduce ends with
 * the root's verdict down the tree. Both roots, both counts of the area and the largest
 * count through point-to-point for the nonblocking form; a correct reduce follows each. */
#include "wtest.h"

#define N 10
#define LARGE 3000
static int rank, size;
static int buf[LARGE], out[LARGE];
static const char *DIFFERS = "the op differs between the ranks";

static void check_sum_after(void)
{
    for (int i = 0; i < N; i++)
        buf[i] = rank + i;
    EXPECT_OK(MPI_Reduce(buf, out, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int i = 0; i < N; i++)
            if (out[i] != size * i + size * (size - 1) / 2) {
                FAIL("correct reduce after the error: out[%d] = %d", i, out[i]);
                break;
            }
}

static void root_differs(int n, int root, int nonblocking)
{
    for (int i = 0; i < n; i++)
        buf[i] = rank + 1;
    MPI_Op op = rank == root ? MPI_PROD : MPI_SUM;
    int rc;
    if (nonblocking) {
        MPI_Request req = MPI_REQUEST_NULL;
        rc = MPI_Ireduce(buf, out, n, MPI_INT, op, root, MPI_COMM_WORLD, &req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        rc = MPI_Reduce(buf, out, n, MPI_INT, op, root, MPI_COMM_WORLD);
    }
    const char *func = nonblocking ? "MPI_Wait" : "MPI_Reduce";
    if (rc == MPI_SUCCESS)
        FAIL("%s of %d ints, root %d passing another op: this rank saw no error", func, n, root);
    else
        EXPECT_ERR(rc, MPI_ERR_OP, func, DIFFERS);
    check_sum_after();
}

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        MPI_Finalize();
        return wtest_finish();
    }
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int root = 0; root < size; root += size - 1) {
        root_differs(N, root, 0);
        root_differs(1000, root, 0);
        root_differs(N, root, 1);
        root_differs(LARGE, root, 1);
    }
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
