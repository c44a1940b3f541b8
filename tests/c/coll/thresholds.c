/* Erroneous collectives across the size thresholds (issue 25): the last rank passes a count on
 * the other side of a threshold from everyone else's — point-to-point (eager cell payload vs
 * rendezvous, single copy with WEFT_SHM_LARGE=cma) and the algorithm limits of bcast (binomial
 * vs scatter-allgather), reduce and allreduce (tree vs reduce-scatter), allgather, gather and
 * alltoall. An erroneous program: no rank may hang; any error is MPI_ERR_TRUNCATE saying the
 * count or datatype differs between the ranks; at least one rank reports it; afterwards a
 * correct collective still works. Run at 2, 3 and 4 ranks, through the shared area (which
 * makes every rank follow the same sizes) and with single copy, and without the area
 * (WEFT_COLL_SHM_MAX=0), where a rank that chose an algorithm by its size meets the others'
 * choice in the messages (size headers: a 2-rank reduce of 20000 against 12000 ints used to
 * hang in Rabenseifner's algorithm against the binomial tree; without the area at 3 and 4
 * ranks the rooted and all-to-all forms used to hang: allgather of 1000 against 1666 ints per
 * rank in Bruck's algorithm, gather and scatter tree against linear, ring allgather against
 * recursive doubling or Bruck). */
#include <stdlib.h>
#include "wtest.h"

static int rank, size, last;
static int *buf, *out;
static const char *DIFFERS = "differs between the ranks";

#define MAXN (600 * 1024)

static void fill(int v, int n)
{
    for (int i = 0; i < n; i++) {
        buf[i] = i + v;
        out[i] = -7;
    }
}

static void verdict(int rc, const char *func, const char *what, int big, int small)
{
    if (rc != MPI_SUCCESS)
        EXPECT_ERR(rc, MPI_ERR_TRUNCATE, func, DIFFERS);
    int failed = rc != MPI_SUCCESS, any = 0;
    EXPECT_OK(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
    CHECK(any, "%s %d/%d: no rank reported the mismatch", what, big, small);
    int x = rank + 1, sum = 0;
    rc = MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS || sum != size * (size + 1) / 2)
        FAIL("after %s %d/%d: allreduce rc %d sum %d", what, big, small, rc, sum);
}

static int wait_rc(int rc, MPI_Request *req)
{
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Wait(req, MPI_STATUS_IGNORE);
}

/* One pair of counts (in ints): `big` everywhere but the last rank, which passes `small`. */
static void pair(int big, int small)
{
    int n = rank == last ? small : big;
    MPI_Request req;
    int rc;

    fill(rank, big);
    rc = MPI_Bcast(buf, n, MPI_INT, 0, MPI_COMM_WORLD);
    verdict(rc, "MPI_Bcast", "bcast", big, small);
    fill(rank, big);
    rc = wait_rc(MPI_Ibcast(buf, n, MPI_INT, 0, MPI_COMM_WORLD, &req), &req);
    verdict(rc, "MPI_Wait", "ibcast", big, small);

    fill(rank, big);
    rc = MPI_Reduce(buf, out, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    verdict(rc, "MPI_Reduce", "reduce", big, small);
    fill(rank, big);
    rc = MPI_Allreduce(buf, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    verdict(rc, "MPI_Allreduce", "allreduce", big, small);
    fill(rank, big);
    rc = wait_rc(MPI_Iallreduce(buf, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req), &req);
    verdict(rc, "MPI_Wait", "iallreduce", big, small);

    /* The rooted and all-to-all forms: per-rank blocks, so the totals are size times these. */
    int b = big / size, s = small / size, m = rank == last ? s : b;
    if (b == s)
        return;
    fill(rank, big);
    rc = MPI_Gather(buf, m, MPI_INT, out, m, MPI_INT, 0, MPI_COMM_WORLD);
    verdict(rc, "MPI_Gather", "gather", b, s);
    fill(rank, big);
    rc = MPI_Scatter(buf, m, MPI_INT, out, m, MPI_INT, 0, MPI_COMM_WORLD);
    verdict(rc, "MPI_Scatter", "scatter", b, s);
    fill(rank, big);
    rc = MPI_Allgather(buf, m, MPI_INT, out, m, MPI_INT, MPI_COMM_WORLD);
    verdict(rc, "MPI_Allgather", "allgather", b, s);
    fill(rank, big);
    rc = MPI_Alltoall(buf, m, MPI_INT, out, m, MPI_INT, MPI_COMM_WORLD);
    verdict(rc, "MPI_Alltoall", "alltoall", b, s);
    fill(rank, big);
    rc = MPI_Reduce_scatter_block(buf, out, m, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    verdict(rc, "MPI_Reduce_scatter_block", "reduce_scatter_block", b, s);
    fill(rank, big);
    rc = MPI_Scan(buf, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    verdict(rc, "MPI_Scan", "scan", big, small);
    fill(rank, big);
    rc = MPI_Exscan(buf, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    verdict(rc, "MPI_Exscan", "exscan", big, small);
}

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    last = size - 1;
    buf = malloc(MAXN * sizeof(int));
    out = malloc(MAXN * sizeof(int));
    if (size < 2 || !buf || !out) {
        MPI_Finalize();
        return wtest_finish();
    }
    /* Counts in ints, each pair straddling one limit (both directions):
     * 16 KiB (eager cell payload, allreduce), 64 KiB (reduce, allgather result), 256 KiB
     * (bcast), 1 MiB (alltoall send buffer); 7000/9000 straddle the gather/scatter limit
     * (32 KiB in all) at 3 and 4 ranks. */
    int pairs[][2] = {{3000, 5000},     {5000, 3000},     {7000, 9000},     {9000, 7000},
                      {12000, 20000},   {20000, 12000},   {60000, 70000},   {70000, 60000},
                      {200000, 400000}, {400000, 200000}};
    for (unsigned k = 0; k < sizeof pairs / sizeof pairs[0]; k++)
        pair(pairs[k][0], pairs[k][1]);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
