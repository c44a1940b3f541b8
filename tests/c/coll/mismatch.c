/* More erroneous collectives (issue 25, item 3; countmismatch.c has bcast/reduce/allreduce
 * through the shared-memory area): the last rank passes a count that differs from the
 * others', in nonblocking forms, in the vector forms (alltoallv, alltoallw, scatterv,
 * gatherv), and on the point-to-point algorithms (run with WEFT_COLL_SHM_MAX=0); and
 * reductions whose ranks pass different predefined ops. No call hangs; every rank that
 * receives a message of the wrong size leaves with MPI_ERR_TRUNCATE and a message saying the
 * count or datatype differs between the ranks (the rank named below for each case must);
 * a different op fails with MPI_ERR_OP where the ranks compare it (the shared-memory area:
 * reduce, allreduce, reduce_scatter(_block), scan, exscan).
 * A rank whose receive failed forwards an empty message, so a whole subtree fails.
 * After each case a correct collective still gives the right answer. */
#include <stdlib.h>
#include <string.h>
#include "wtest.h"

#define N 4096
static int rank, size, last;
static int buf[N], out[N];
static const char *DIFFERS = "differs between the ranks";

static void fill(int v)
{
    for (int i = 0; i < N; i++) {
        buf[i] = i + v;
        out[i] = -7;
    }
}

/* Any error must be the mismatch; `must`: this rank has to see one. */
static void check(int rc, int must, const char *func, const char *what)
{
    if (must)
        EXPECT_ERR(rc, MPI_ERR_TRUNCATE, func, DIFFERS);
    else if (rc != MPI_SUCCESS)
        EXPECT_ERR(rc, MPI_ERR_TRUNCATE, func, DIFFERS);
    (void)what;
}

static int wait_rc(int rc, MPI_Request *req)
{
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Wait(req, MPI_STATUS_IGNORE);
}

static void still_usable(const char *after)
{
    int x = rank + 1, sum = 0;
    int rc = MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS || sum != size * (size + 1) / 2)
        FAIL("after %s: allreduce rc %d sum %d", after, rc, sum);
}

static void rooted_and_reductions(int big, int small)
{
    /* The last rank passes `small`, everybody else `big`. */
    int n = rank == last ? small : big;
    MPI_Request req;

    fill(rank == 0 ? 0 : 100);
    int rc = wait_rc(MPI_Ibcast(buf, n, MPI_INT, 0, MPI_COMM_WORLD, &req), &req);
    /* A tree's last rank is a leaf: it receives from a rank with the root's size. */
    check(rc, rank == last, "MPI_Wait", "ibcast");
    if (rank != last && rc == MPI_SUCCESS && buf[big - 1] != big - 1)
        FAIL("ibcast %d/%d: buf[%d] = %d", big, small, big - 1, buf[big - 1]);
    still_usable("ibcast");

    fill(rank == 0 ? 0 : 100);
    rc = MPI_Bcast(buf, n, MPI_INT, 0, MPI_COMM_WORLD);
    check(rc, rank == last, "MPI_Bcast", "bcast");
    if (rank != last && buf[big - 1] != big - 1)
        FAIL("bcast %d/%d: buf[%d] = %d", big, small, big - 1, buf[big - 1]);
    still_usable("bcast");

    /* Every non-root passes `small` (MPICH's errors/coll/bcastlength): each fails, also
     * those whose parent in the tree has the same wrong size. */
    fill(rank == 0 ? 0 : 100);
    n = rank == 0 ? big : small;
    rc = wait_rc(MPI_Ibcast(buf, n, MPI_INT, 0, MPI_COMM_WORLD, &req), &req);
    check(rc, rank != 0, "MPI_Wait", "ibcast, all non-roots");
    still_usable("ibcast, all non-roots");
    rc = MPI_Bcast(buf, n, MPI_INT, 0, MPI_COMM_WORLD);
    check(rc, rank != 0, "MPI_Bcast", "bcast, all non-roots");
    still_usable("bcast, all non-roots");
    n = rank == last ? small : big;

    fill(rank);
    rc = wait_rc(MPI_Iallreduce(buf, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req), &req);
    check(rc, rank == last, "MPI_Wait", "iallreduce");
    still_usable("iallreduce");

    fill(rank);
    rc = MPI_Allreduce(buf, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(rc, rank == last, "MPI_Allreduce", "allreduce");
    still_usable("allreduce");

    /* Reduce: someone on the way to the root sees it; gather everyone's verdict. */
    fill(rank);
    rc = wait_rc(MPI_Ireduce(buf, out, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &req), &req);
    check(rc, 0, "MPI_Wait", "ireduce");
    int failed = rc != MPI_SUCCESS, any = 0;
    EXPECT_OK(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
    CHECK(any, "ireduce %d/%d: no rank reported the mismatch", big, small);

    fill(rank);
    rc = MPI_Reduce(buf, out, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    check(rc, 0, "MPI_Reduce", "reduce");
    failed = rc != MPI_SUCCESS;
    EXPECT_OK(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
    CHECK(any, "reduce %d/%d: no rank reported the mismatch", big, small);
}

static void vectors(int big, int small)
{
    static int counts[64], displs[64], rcounts[64], rdispls[64];
    static MPI_Datatype types[64];
    /* Gatherv: the last rank sends `small`, the root expects `big` from everyone. */
    for (int i = 0; i < size; i++) {
        counts[i] = big;
        displs[i] = i * big;
        types[i] = MPI_INT;
    }
    fill(rank);
    int rc = MPI_Gatherv(buf, rank == last ? small : big, MPI_INT, out, counts, displs, MPI_INT,
                         0, MPI_COMM_WORLD);
    check(rc, rank == 0, "MPI_Gatherv", "gatherv");
    if (rank == 0 && size > 2 && out[big] != 1)
        FAIL("gatherv: rank 1's block starts with %d", out[big]);
    still_usable("gatherv");

    /* Allgather: rank 0 sends `small` but expects `big` from everyone, as everybody else
     * does (MPICH's errors/coll/allgatherlength): rank 0 fails, nobody waits for it. */
    MPI_Request areq;
    fill(rank);
    rc = MPI_Allgather(buf, rank == 0 ? small : big, MPI_INT, out, big, MPI_INT,
                       MPI_COMM_WORLD);
    check(rc, rank == 0, "MPI_Allgather", "allgather");
    still_usable("allgather");
    fill(rank);
    rc = wait_rc(MPI_Iallgather(buf, rank == 0 ? small : big, MPI_INT, out, big, MPI_INT,
                                MPI_COMM_WORLD, &areq),
                 &areq);
    check(rc, rank == 0, "MPI_Wait", "iallgather");
    still_usable("iallgather");

    /* Scatterv: the root sends `big` to everyone, the last rank expects `small`. */
    fill(0);
    rc = MPI_Scatterv(buf, counts, displs, MPI_INT, out, rank == last ? small : big, MPI_INT, 0,
                      MPI_COMM_WORLD);
    check(rc, rank == last, "MPI_Scatterv", "scatterv");
    if (rank != last && out[0] != rank * big)
        FAIL("scatterv: rank %d got %d first", rank, out[0]);
    still_usable("scatterv");

    /* Alltoallv(w): the last rank sends `small` to everyone, who expect `big` from it: every
     * other rank receives a short message. */
    for (int i = 0; i < size; i++) {
        counts[i] = rank == last ? small : big;
        displs[i] = i * big;
        rcounts[i] = big;
        rdispls[i] = i * big;
    }
    if (rank == last)
        rcounts[last] = small;
    fill(rank);
    rc = MPI_Alltoallv(buf, counts, displs, MPI_INT, out, rcounts, rdispls, MPI_INT,
                       MPI_COMM_WORLD);
    check(rc, rank != last, "MPI_Alltoallv", "alltoallv");
    still_usable("alltoallv");

    MPI_Request req;
    fill(rank);
    rc = wait_rc(MPI_Ialltoallv(buf, counts, displs, MPI_INT, out, rcounts, rdispls, MPI_INT,
                                MPI_COMM_WORLD, &req),
                 &req);
    check(rc, rank != last, "MPI_Wait", "ialltoallv");
    still_usable("ialltoallv");

    /* Alltoallw: displacements in bytes. */
    for (int i = 0; i < size; i++) {
        displs[i] *= (int)sizeof(int);
        rdispls[i] *= (int)sizeof(int);
    }
    fill(rank);
    rc = MPI_Alltoallw(buf, counts, displs, types, out, rcounts, rdispls, types,
                       MPI_COMM_WORLD);
    check(rc, rank != last, "MPI_Alltoallw", "alltoallw");
    still_usable("alltoallw");
}

/* Different predefined ops: compared where the ranks meet in the shared-memory area. */
static void ops(void)
{
    MPI_Op op = rank == last ? MPI_MAX : MPI_SUM;
    fill(rank);
    int rc = MPI_Allreduce(buf, out, 4, MPI_INT, op, MPI_COMM_WORLD);
    EXPECT_ERR(rc, MPI_ERR_OP, "MPI_Allreduce", "the op differs between the ranks");
    still_usable("allreduce with different ops");
    /* Reduce: the root compares every rank's op, a non-root the root's (c/coll/rootop). */
    rc = MPI_Reduce(buf, out, 4, MPI_INT, op, 0, MPI_COMM_WORLD);
    if (rank == 0 || rank == last)
        EXPECT_ERR(rc, MPI_ERR_OP, "MPI_Reduce", "the op differs between the ranks");
    else
        EXPECT_OK(rc);
    still_usable("reduce with different ops");
    /* Reduce_scatter_block: every rank waits for every contribution, so every rank fails. */
    rc = MPI_Reduce_scatter_block(buf, out, 4, MPI_INT, op, MPI_COMM_WORLD);
    EXPECT_ERR(rc, MPI_ERR_OP, "MPI_Reduce_scatter_block", "the op differs between the ranks");
    still_usable("reduce_scatter_block with different ops");
    int counts[64];
    for (int i = 0; i < size; i++)
        counts[i] = 2;
    rc = MPI_Reduce_scatter(buf, out, counts, MPI_INT, op, MPI_COMM_WORLD);
    EXPECT_ERR(rc, MPI_ERR_OP, "MPI_Reduce_scatter", "the op differs between the ranks");
    still_usable("reduce_scatter with different ops");
    /* Scan and exscan: a rank compares the ops of the ranks it combines (those below it), so
     * the last one, whose op differs from all of theirs, fails; the others need not. */
    rc = MPI_Scan(buf, out, 4, MPI_INT, op, MPI_COMM_WORLD);
    if (rank == last)
        EXPECT_ERR(rc, MPI_ERR_OP, "MPI_Scan", "the op differs between the ranks");
    else
        EXPECT_OK(rc);
    still_usable("scan with different ops");
    rc = MPI_Exscan(buf, out, 4, MPI_INT, op, MPI_COMM_WORLD);
    if (rank == last)
        EXPECT_ERR(rc, MPI_ERR_OP, "MPI_Exscan", "the op differs between the ranks");
    else
        EXPECT_OK(rc);
    still_usable("exscan with different ops");
}

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    last = size - 1;
    if (size < 2 || size > 64) {
        MPI_Finalize();
        return wtest_finish();
    }
    /* Both directions, small and above the shared-memory limit (N / size ints a block). */
    int pairs[][2] = {{10, 5}, {5, 10}, {1000, 500}, {500, 1000}};
    for (unsigned k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        rooted_and_reductions(pairs[k][0], pairs[k][1]);
        int b = pairs[k][0] / size, s = pairs[k][1] / size;
        if (b != s)
            vectors(b, s);
    }
    const char *shm = getenv("WEFT_COLL_SHM_MAX");
    if (!(shm && strcmp(shm, "0") == 0))
        ops();
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
