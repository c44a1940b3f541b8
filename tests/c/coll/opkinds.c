/* Reductions whose ranks pass a predefined op (MPI_SUM) on some ranks and a user op (an
 * integer sum, commutative) on the others (issue 25): every reduction collective, blocking,
 * nonblocking and persistent, to every kind of root, small and large counts (the large ones
 * above the Rabenseifner thresholds). The algorithm a reduction runs may depend on the op's
 * kind, so such programs used to hang (a reduce to a root other than 0, reduce_scatter) or
 * fail with MPI_ERR_TRUNCATE (a large allreduce). Now no call hangs (the manifest's timeouts
 * fail an old build), every rank's error class is checked: MPI_SUCCESS or MPI_ERR_OP saying
 * the op differs, never another class; at least one rank reports it; a rank that succeeds
 * and holds a result holds the sum (the user function is a sum); afterwards a correct
 * collective works. Which ranks pass the user op: rank 0 alone, then the last rank alone. */
#include <stdlib.h>
#include "wtest.h"
#include "isum.h"

#define MAXN 20000 /* ints: above the large-message thresholds of reduce and allreduce */
static int rank, size, last, user_rank;
static int *buf, *out;
static MPI_Op user;
static const char *DIFFERS = "the op differs between the ranks";

static MPI_Op op(void)
{
    return rank == user_rank ? user : MPI_SUM;
}

static void fill(int n)
{
    for (int i = 0; i < n; i++) {
        buf[i] = i + rank;
        out[i] = -1;
    }
}

/* This rank's rc: MPI_SUCCESS with right values (`ok_values`) or MPI_ERR_OP saying the op
 * differs; some rank must have failed; then a correct collective works. */
static void verdict(int rc, int ok_values, const char *func, const char *form, int n)
{
    if (rc != MPI_SUCCESS)
        EXPECT_ERR(rc, MPI_ERR_OP, func, DIFFERS);
    else
        CHECK(ok_values, "%s (%s) of %d ints: MPI_SUCCESS with wrong values", func, form, n);
    int failed = rc != MPI_SUCCESS, any = 0;
    EXPECT_OK(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
    CHECK(any, "%s (%s) of %d ints, user op on rank %d: no rank reported the different op",
          func, form, n, user_rank);
    int x = rank + 1, total = 0;
    rc = MPI_Allreduce(&x, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS || total != size * (size + 1) / 2)
        FAIL("after %s (%s) of %d ints: allreduce rc %d sum %d", func, form, n, rc, total);
}

enum form { BLOCKING, NONBLOCKING, PERSISTENT };
static const char *FORMS[] = {"blocking", "nonblocking", "persistent"};

/* Finish a started nonblocking or persistent call (`rc` is the starting call's). */
static int finish(int rc, MPI_Request *req, enum form f)
{
    if (f == BLOCKING || rc != MPI_SUCCESS)
        return rc;
    if (f == PERSISTENT) {
        rc = MPI_Start(req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(req, MPI_STATUS_IGNORE);
        int frc = MPI_Request_free(req);
        return rc != MPI_SUCCESS ? rc : frc;
    }
    return MPI_Wait(req, MPI_STATUS_IGNORE);
}

static const char *name(enum form f, const char *blocking, const char *other)
{
    return f == BLOCKING ? blocking : other;
}

static void reduce(enum form f, int n, int root)
{
    MPI_Request req;
    int rc;
    fill(n);
    if (f == BLOCKING)
        rc = MPI_Reduce(buf, out, n, MPI_INT, op(), root, MPI_COMM_WORLD);
    else if (f == NONBLOCKING)
        rc = MPI_Ireduce(buf, out, n, MPI_INT, op(), root, MPI_COMM_WORLD, &req);
    else
        rc = MPI_Reduce_init(buf, out, n, MPI_INT, op(), root, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &req);
    rc = finish(rc, &req, f);
    verdict(rc, rank != root || all_equal(out, n, 0, last, 0), name(f, "MPI_Reduce", "MPI_Wait"),
            FORMS[f], n);
}

static void allreduce(enum form f, int n)
{
    MPI_Request req;
    int rc;
    fill(n);
    if (f == BLOCKING)
        rc = MPI_Allreduce(buf, out, n, MPI_INT, op(), MPI_COMM_WORLD);
    else if (f == NONBLOCKING)
        rc = MPI_Iallreduce(buf, out, n, MPI_INT, op(), MPI_COMM_WORLD, &req);
    else
        rc = MPI_Allreduce_init(buf, out, n, MPI_INT, op(), MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    rc = finish(rc, &req, f);
    verdict(rc, all_equal(out, n, 0, last, 0), name(f, "MPI_Allreduce", "MPI_Wait"), FORMS[f], n);
}

static void reduce_scatter(enum form f, int n, int block_form)
{
    MPI_Request req;
    int rc, block = n / size;
    int *counts = malloc(size * sizeof(int));
    for (int i = 0; i < size; i++)
        counts[i] = block;
    fill(block * size);
    if (block_form) {
        if (f == BLOCKING)
            rc = MPI_Reduce_scatter_block(buf, out, block, MPI_INT, op(), MPI_COMM_WORLD);
        else if (f == NONBLOCKING)
            rc = MPI_Ireduce_scatter_block(buf, out, block, MPI_INT, op(), MPI_COMM_WORLD, &req);
        else
            rc = MPI_Reduce_scatter_block_init(buf, out, block, MPI_INT, op(), MPI_COMM_WORLD,
                                               MPI_INFO_NULL, &req);
    } else {
        if (f == BLOCKING)
            rc = MPI_Reduce_scatter(buf, out, counts, MPI_INT, op(), MPI_COMM_WORLD);
        else if (f == NONBLOCKING)
            rc = MPI_Ireduce_scatter(buf, out, counts, MPI_INT, op(), MPI_COMM_WORLD, &req);
        else
            rc = MPI_Reduce_scatter_init(buf, out, counts, MPI_INT, op(), MPI_COMM_WORLD,
                                         MPI_INFO_NULL, &req);
    }
    rc = finish(rc, &req, f);
    free(counts);
    const char *func = block_form ? name(f, "MPI_Reduce_scatter_block", "MPI_Wait")
                                  : name(f, "MPI_Reduce_scatter", "MPI_Wait");
    verdict(rc, all_equal(out, block, 0, last, rank * block), func, FORMS[f], n);
}

static void prefix(enum form f, int n, int inclusive)
{
    MPI_Request req;
    int rc;
    fill(n);
    if (inclusive) {
        if (f == BLOCKING)
            rc = MPI_Scan(buf, out, n, MPI_INT, op(), MPI_COMM_WORLD);
        else if (f == NONBLOCKING)
            rc = MPI_Iscan(buf, out, n, MPI_INT, op(), MPI_COMM_WORLD, &req);
        else
            rc = MPI_Scan_init(buf, out, n, MPI_INT, op(), MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    } else {
        if (f == BLOCKING)
            rc = MPI_Exscan(buf, out, n, MPI_INT, op(), MPI_COMM_WORLD);
        else if (f == NONBLOCKING)
            rc = MPI_Iexscan(buf, out, n, MPI_INT, op(), MPI_COMM_WORLD, &req);
        else
            rc = MPI_Exscan_init(buf, out, n, MPI_INT, op(), MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    }
    rc = finish(rc, &req, f);
    int ok = inclusive ? all_equal(out, n, 0, rank, 0)
                       : rank == 0 || all_equal(out, n, 0, rank - 1, 0);
    verdict(rc, ok, inclusive ? name(f, "MPI_Scan", "MPI_Wait") : name(f, "MPI_Exscan", "MPI_Wait"),
            FORMS[f], n);
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
    EXPECT_OK(MPI_Op_create(isum, 1, &user));
    int counts[2] = {size * 4, MAXN};
    int users[2] = {0, last};
    for (int u = 0; u < 2; u++) {
        user_rank = users[u];
        for (int c = 0; c < 2; c++) {
            for (enum form f = BLOCKING; f <= PERSISTENT; f++) {
                int n = counts[c];
                reduce(f, n, 0);
                reduce(f, n, last);
                if (size > 2)
                    reduce(f, n, 1);
                allreduce(f, n);
                reduce_scatter(f, n, 1);
                reduce_scatter(f, n, 0);
                prefix(f, n, 1);
                prefix(f, n, 0);
            }
        }
    }
    EXPECT_OK(MPI_Op_free(&user));
    free(buf);
    free(out);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
