/* Reductions whose ranks pass different predefined ops, without the shared area
 * (WEFT_COLL_SHM_MAX=0: the point-to-point algorithms, as between nodes). Every message of a
 * reduction carries its op's mark in the tag (coll::tag::FLAGS), so a rank that receives
 * from a rank with another op fails with MPI_ERR_OP saying the op differs between the ranks
 * (issue 25: such programs used to return wrong data with MPI_SUCCESS). No call hangs; any
 * error is that one; at least one rank reports it; afterwards a correct collective works.
 * Small counts (tree, recursive doubling, pairwise) and large ones (Rabenseifner's
 * algorithms, whose size headers carry the mark). */
#include <stdlib.h>
#include "wtest.h"

#define MAXN 20000
static int rank, size, last;
static int *buf, *out;
static const char *DIFFERS = "the op differs between the ranks";

static void verdict(int rc, const char *func, int n)
{
    if (rc != MPI_SUCCESS)
        EXPECT_ERR(rc, MPI_ERR_OP, func, DIFFERS);
    int failed = rc != MPI_SUCCESS, any = 0;
    EXPECT_OK(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
    CHECK(any, "%s of %d ints: no rank reported the different op", func, n);
    int x = rank + 1, sum = 0;
    rc = MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS || sum != size * (size + 1) / 2)
        FAIL("after %s of %d ints: allreduce rc %d sum %d", func, n, rc, sum);
}

static void fill(int n)
{
    for (int i = 0; i < n * size && i < MAXN * 4; i++)
        buf[i] = i + rank;
}

static void with_count(int n)
{
    MPI_Op op = rank == last ? MPI_MAX : MPI_SUM;
    fill(n);
    verdict(MPI_Allreduce(buf, out, n, MPI_INT, op, MPI_COMM_WORLD), "MPI_Allreduce", n);
    fill(n);
    verdict(MPI_Reduce(buf, out, n, MPI_INT, op, 0, MPI_COMM_WORLD), "MPI_Reduce", n);
    fill(n);
    verdict(MPI_Reduce(buf, out, n, MPI_INT, op, last, MPI_COMM_WORLD), "MPI_Reduce", n);
    fill(n);
    verdict(MPI_Reduce_scatter_block(buf, out, n / size, MPI_INT, op, MPI_COMM_WORLD),
            "MPI_Reduce_scatter_block", n);
    fill(n);
    verdict(MPI_Scan(buf, out, n, MPI_INT, op, MPI_COMM_WORLD), "MPI_Scan", n);
    fill(n);
    verdict(MPI_Exscan(buf, out, n, MPI_INT, op, MPI_COMM_WORLD), "MPI_Exscan", n);
}

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    last = size - 1;
    buf = malloc(MAXN * 4 * sizeof(int));
    out = malloc(MAXN * 4 * sizeof(int));
    if (size < 2 || !buf || !out) {
        MPI_Finalize();
        return wtest_finish();
    }
    with_count(size * 4);
    with_count(MAXN);
    free(buf);
    free(out);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
