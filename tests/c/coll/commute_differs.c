/* Reductions whose ranks pass user ops that differ in commutativity (the same function, an
 * integer sum, created with commute=1 on some ranks and 0 on others), and a user op on some
 * ranks against MPI_SUM on the others. A user op's op mark is its commutativity (coll::tag
 * FLAGS, the area's length words) and its algorithm never depends on it where the ranks have
 * not compared marks first (issue 25: a reduce to a root other than 0 and reduce_scatter
 * used to hang, other calls returned MPI_SUCCESS everywhere). No call hangs; any error is
 * MPI_ERR_OP saying the op differs; at least one rank reports it; a rank that succeeds and
 * has a result holds the right values (the function is a sum on every rank); afterwards a
 * correct collective works. First the agreeing case: every value right, no error. The
 * nonblocking forms carry the op mark too (in their tags, `coll::sched`): at least one rank
 * reports the difference, none hangs, and a call that succeeds has the right values.
 * opkinds.c has a predefined op against a user op in every form. */
#include <stdlib.h>
#include "wtest.h"
#include "isum.h"

#define MAXN 20000 /* ints: above the Rabenseifner thresholds of reduce and allreduce */
static int rank, size, last;
static int *buf, *out;
static const char *DIFFERS = "the op differs between the ranks";

static void fill(int n)
{
    for (int i = 0; i < n; i++)
        buf[i] = i + rank;
}

enum { DIFFER, AGREE };

/* rc's verdict: MPI_SUCCESS (then `ok_values`) or MPI_ERR_OP; AGREE: every rank must
 * succeed, DIFFER: at least one must fail. Then a correct collective must work. */
static void verdict(int rc, int ok_values, int agree, const char *func, int n)
{
    if (rc != MPI_SUCCESS)
        EXPECT_ERR(rc, MPI_ERR_OP, func, DIFFERS);
    else
        CHECK(ok_values, "%s of %d ints: MPI_SUCCESS with wrong values", func, n);
    int failed = rc != MPI_SUCCESS, any = 0;
    EXPECT_OK(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
    if (agree == AGREE)
        CHECK(!any, "%s of %d ints: a rank failed although the ops agree", func, n);
    else
        CHECK(any, "%s of %d ints: no rank reported the different op", func, n);
    int x = rank + 1, total = 0;
    rc = MPI_Allreduce(&x, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS || total != size * (size + 1) / 2)
        FAIL("after %s of %d ints: allreduce rc %d sum %d", func, n, rc, total);
}

static void with_count(MPI_Op op, int agree, int n)
{
    int rc;
    fill(n);
    rc = MPI_Allreduce(buf, out, n, MPI_INT, op, MPI_COMM_WORLD);
    verdict(rc, rc || all_equal(out, n, 0, last, 0), agree, "MPI_Allreduce", n);
    for (int root = 0; root < size; root += last) {
        fill(n);
        rc = MPI_Reduce(buf, out, n, MPI_INT, op, root, MPI_COMM_WORLD);
        verdict(rc, rc || rank != root || all_equal(out, n, 0, last, 0), agree, "MPI_Reduce", n);
        if (last == 0)
            break;
    }
    int block = n / size;
    fill(block * size);
    rc = MPI_Reduce_scatter_block(buf, out, block, MPI_INT, op, MPI_COMM_WORLD);
    verdict(rc, rc || all_equal(out, block, 0, last, rank * block), agree,
            "MPI_Reduce_scatter_block", n);
    fill(n);
    rc = MPI_Scan(buf, out, n, MPI_INT, op, MPI_COMM_WORLD);
    verdict(rc, rc || all_equal(out, n, 0, rank, 0), agree, "MPI_Scan", n);
    fill(n);
    rc = MPI_Exscan(buf, out, n, MPI_INT, op, MPI_COMM_WORLD);
    verdict(rc, rc || rank == 0 || all_equal(out, n, 0, rank - 1, 0), agree, "MPI_Exscan", n);
}

static int waited(int rc, MPI_Request *req)
{
    return rc != MPI_SUCCESS ? rc : MPI_Wait(req, MPI_STATUS_IGNORE);
}

static void nonblocking(MPI_Op op, int n)
{
    MPI_Request req;
    int rc;
    fill(n);
    rc = waited(MPI_Ireduce(buf, out, n, MPI_INT, op, last, MPI_COMM_WORLD, &req), &req);
    verdict(rc, rc || rank != last || all_equal(out, n, 0, last, 0), DIFFER, "MPI_Wait", n);
    fill(n);
    rc = waited(MPI_Iallreduce(buf, out, n, MPI_INT, op, MPI_COMM_WORLD, &req), &req);
    verdict(rc, rc || all_equal(out, n, 0, last, 0), DIFFER, "MPI_Wait", n);
    int block = n / size;
    fill(block * size);
    rc = waited(MPI_Ireduce_scatter_block(buf, out, block, MPI_INT, op, MPI_COMM_WORLD, &req),
                &req);
    verdict(rc, rc || all_equal(out, block, 0, last, rank * block), DIFFER, "MPI_Wait", n);
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
    MPI_Op commutative, not_commutative, mixed;
    EXPECT_OK(MPI_Op_create(isum, 1, &commutative));
    EXPECT_OK(MPI_Op_create(isum, 0, &not_commutative));
    /* The last rank alone says commutative, the others not. */
    EXPECT_OK(MPI_Op_create(isum, rank == last, &mixed));
    int counts[2] = {size * 4, MAXN};
    for (int c = 0; c < 2; c++) {
        with_count(commutative, AGREE, counts[c]);
        with_count(not_commutative, AGREE, counts[c]);
        with_count(mixed, DIFFER, counts[c]);
        /* Rank 0 alone passes MPI_SUM, the others the commutative user op. */
        with_count(rank == 0 ? MPI_SUM : commutative, DIFFER, counts[c]);
        nonblocking(mixed, counts[c]);
    }
    EXPECT_OK(MPI_Op_free(&commutative));
    EXPECT_OK(MPI_Op_free(&not_commutative));
    EXPECT_OK(MPI_Op_free(&mixed));
    free(buf);
    free(out);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
