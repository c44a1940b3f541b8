/* A reduce above the shared area's size limit (WEFT_COLL_SHM_MAX, 4 KiB) lets a non-root
 * whose whole part is one send to the root (rank root+1, a leaf of the binomial tree) go on
 * without waiting for the others (issue 14: the size agreement of issue 25 had every rank
 * wait for all, which cost a 2-rank reduce of 4 KiB and more 1.8-2.0 us against 0.66-0.79
 * us). Here that rank sends a message after its MPI_Reduce which the root receives before
 * entering it: with the wait both hang (the manifest's timeout fails the test). Sizes stay
 * under the eager limit (16 KiB), so the early send completes on its own. The sums are
 * checked, and a count mismatch against that rank still fails at the root without leaving
 * its message behind (a correct reduce follows). */
#include "wtest.h"

#define MAXN 3500
static int rank, size;
static int buf[MAXN], out[MAXN];

static void early_rank(int n)
{
    int ahead = 1, token = 0;
    for (int i = 0; i < n; i++) {
        buf[i] = i + rank;
        out[i] = -7;
    }
    if (rank == 0) {
        EXPECT_OK(MPI_Recv(&token, 1, MPI_INT, ahead, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_INT(token, n);
    }
    EXPECT_OK(MPI_Reduce(buf, out, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == ahead) {
        token = n;
        EXPECT_OK(MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
    }
    if (rank == 0)
        for (int i = 0; i < n; i++)
            if (out[i] != size * i + size * (size - 1) / 2) {
                FAIL("reduce of %d ints: out[%d] = %d", n, i, out[i]);
                break;
            }
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
    /* The first collective sets the area up (all ranks take part); later ones use it. */
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < 3; k++) {
        early_rank(2048);
        early_rank(MAXN);
    }
    /* The early rank passes fewer ints than the others: the root reports it. */
    for (int k = 0; k < 3; k++) {
        int n = rank == 1 ? 1500 : MAXN;
        int rc = MPI_Reduce(buf, out, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            EXPECT_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Reduce", "differs between the ranks");
        else if (rc != MPI_SUCCESS)
            EXPECT_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Reduce", "differs between the ranks");
        early_rank(MAXN);
    }
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
