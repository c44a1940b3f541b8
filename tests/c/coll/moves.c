/* Data-movement collectives: gather(v), scatter(v), allgather(v), alltoall(v, w), every root,
 * block sizes from 0 to 40000 ints, in-place forms. Every value encodes (source, destination,
 * index), so a misplaced block is caught. */
#include "wtest.h"

static int rank, size;
static const int blocks[] = {0, 1, 3, 100, 2000, 40000};
#define NB (int)(sizeof blocks / sizeof blocks[0])

static int val(int src, int dst, int i)
{
    return src * 1000003 + dst * 10007 + i;
}

static void gathers(int n)
{
    int *s = malloc((n + 1) * sizeof(int)), *r = malloc(((size_t)n * size + 1) * sizeof(int));
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < n; i++)
            s[i] = val(rank, root, i);
        for (int i = 0; i < n * size; i++)
            r[i] = -1;
        EXPECT_OK(MPI_Gather(s, n, MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD));
        if (rank == root) {
            int bad = 0;
            for (int k = 0; k < size; k++)
                for (int i = 0; i < n; i++)
                    bad += r[k * n + i] != val(k, root, i);
            CHECK(bad == 0, "gather n=%d root=%d: %d wrong", n, root, bad);
            /* In place. */
            for (int i = 0; i < n * size; i++)
                r[i] = i / (n ? n : 1) == root ? val(root, root, i % n) : -1;
            EXPECT_OK(MPI_Gather(MPI_IN_PLACE, n, MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD));
            bad = 0;
            for (int k = 0; k < size; k++)
                for (int i = 0; i < n; i++)
                    bad += r[k * n + i] != val(k, root, i);
            CHECK(bad == 0, "gather in place n=%d root=%d: %d wrong", n, root, bad);
        } else {
            EXPECT_OK(MPI_Gather(s, n, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD));
        }
        /* Scatter: the root's block k goes to rank k. */
        for (int k = 0; k < size; k++)
            for (int i = 0; i < n; i++)
                r[k * n + i] = val(root, k, i);
        for (int i = 0; i < n; i++)
            s[i] = -1;
        EXPECT_OK(MPI_Scatter(r, n, MPI_INT, s, n, MPI_INT, root, MPI_COMM_WORLD));
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += s[i] != val(root, rank, i);
        CHECK(bad == 0, "scatter n=%d root=%d: %d wrong", n, root, bad);
        if (rank == root)
            EXPECT_OK(MPI_Scatter(r, n, MPI_INT, MPI_IN_PLACE, n, MPI_INT, root, MPI_COMM_WORLD));
        else
            EXPECT_OK(MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, s, n, MPI_INT, root, MPI_COMM_WORLD));
        bad = 0;
        for (int i = 0; i < n; i++)
            bad += s[i] != val(root, rank, i);
        CHECK(bad == 0, "scatter (in place at root) n=%d root=%d: %d wrong", n, root, bad);
    }
    /* Allgather and its in-place form. */
    for (int i = 0; i < n; i++)
        s[i] = val(rank, 0, i);
    for (int i = 0; i < n * size; i++)
        r[i] = -1;
    EXPECT_OK(MPI_Allgather(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD));
    int bad = 0;
    for (int k = 0; k < size; k++)
        for (int i = 0; i < n; i++)
            bad += r[k * n + i] != val(k, 0, i);
    CHECK(bad == 0, "allgather n=%d: %d wrong", n, bad);
    for (int i = 0; i < n * size; i++)
        r[i] = i / (n ? n : 1) == rank ? val(rank, 1, i % n) : -1;
    EXPECT_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, n, MPI_INT, MPI_COMM_WORLD));
    bad = 0;
    for (int k = 0; k < size; k++)
        for (int i = 0; i < n; i++)
            bad += r[k * n + i] != val(k, 1, i);
    CHECK(bad == 0, "allgather in place n=%d: %d wrong", n, bad);
    free(s);
    free(r);
}

static void vgathers(int n)
{
    /* Rank k contributes k % 3 * n + 1 ints, placed in reverse rank order with gaps. */
    int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int)), total = 0;
    for (int k = size - 1; k >= 0; k--) {
        counts[k] = k % 3 * n + 1;
        displs[k] = total + 2;
        total += counts[k] + 2;
    }
    int *s = malloc(counts[rank] * sizeof(int)), *r = malloc(total * sizeof(int));
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < counts[rank]; i++)
            s[i] = val(rank, root, i);
        for (int i = 0; i < total; i++)
            r[i] = -7;
        EXPECT_OK(MPI_Gatherv(s, counts[rank], MPI_INT, r, counts, displs, MPI_INT, root,
                              MPI_COMM_WORLD));
        if (rank == root) {
            int bad = 0;
            for (int k = 0; k < size; k++)
                for (int i = 0; i < counts[k]; i++)
                    bad += r[displs[k] + i] != val(k, root, i);
            bad += r[0] != -7;
            CHECK(bad == 0, "gatherv n=%d root=%d: %d wrong", n, root, bad);
        }
        for (int k = 0; k < size; k++)
            for (int i = 0; i < counts[k]; i++)
                r[displs[k] + i] = val(root, k, i);
        for (int i = 0; i < counts[rank]; i++)
            s[i] = -1;
        EXPECT_OK(MPI_Scatterv(r, counts, displs, MPI_INT, s, counts[rank], MPI_INT, root,
                               MPI_COMM_WORLD));
        int bad = 0;
        for (int i = 0; i < counts[rank]; i++)
            bad += s[i] != val(root, rank, i);
        CHECK(bad == 0, "scatterv n=%d root=%d: %d wrong", n, root, bad);
    }
    for (int i = 0; i < counts[rank]; i++)
        s[i] = val(rank, 2, i);
    for (int i = 0; i < total; i++)
        r[i] = -7;
    EXPECT_OK(MPI_Allgatherv(s, counts[rank], MPI_INT, r, counts, displs, MPI_INT,
                             MPI_COMM_WORLD));
    int bad = 0;
    for (int k = 0; k < size; k++)
        for (int i = 0; i < counts[k]; i++)
            bad += r[displs[k] + i] != val(k, 2, i);
    CHECK(bad == 0, "allgatherv n=%d: %d wrong", n, bad);
    EXPECT_OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, counts, displs, MPI_INT,
                             MPI_COMM_WORLD));
    bad = 0;
    for (int k = 0; k < size; k++)
        for (int i = 0; i < counts[k]; i++)
            bad += r[displs[k] + i] != val(k, 2, i);
    CHECK(bad == 0, "allgatherv in place n=%d: %d wrong", n, bad);
    free(s);
    free(r);
    free(counts);
    free(displs);
}

static void alltoalls(int n)
{
    int *s = malloc(((size_t)n * size + 1) * sizeof(int)), *r = malloc(((size_t)n * size + 1) * sizeof(int));
    for (int k = 0; k < size; k++)
        for (int i = 0; i < n; i++)
            s[k * n + i] = val(rank, k, i);
    EXPECT_OK(MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD));
    int bad = 0;
    for (int k = 0; k < size; k++)
        for (int i = 0; i < n; i++)
            bad += r[k * n + i] != val(k, rank, i);
    CHECK(bad == 0, "alltoall n=%d: %d wrong", n, bad);
    EXPECT_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s, n, MPI_INT, MPI_COMM_WORLD));
    bad = 0;
    for (int k = 0; k < size; k++)
        for (int i = 0; i < n; i++)
            bad += s[k * n + i] != val(k, rank, i);
    CHECK(bad == 0, "alltoall in place n=%d: %d wrong", n, bad);
    free(s);
    free(r);
    /* Alltoallv: rank a sends (a + b) % 3 * n + 1 ints to rank b. Alltoallw: same, bytes. */
    int *sc = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int));
    int *rc = malloc(size * sizeof(int)), *rd = malloc(size * sizeof(int));
    int *swb = malloc(size * sizeof(int)), *rwb = malloc(size * sizeof(int));
    MPI_Datatype *types = malloc(size * sizeof(MPI_Datatype));
    int st = 0, rt = 0;
    for (int k = 0; k < size; k++) {
        sc[k] = (rank + k) % 3 * n + 1;
        rc[k] = (k + rank) % 3 * n + 1;
        sd[k] = st;
        rd[k] = rt + 1;
        st += sc[k];
        rt += rc[k] + 1;
        swb[k] = sd[k] * (int)sizeof(int);
        rwb[k] = rd[k] * (int)sizeof(int);
        types[k] = MPI_INT;
    }
    s = malloc(st * sizeof(int));
    r = malloc(rt * sizeof(int));
    for (int k = 0; k < size; k++)
        for (int i = 0; i < sc[k]; i++)
            s[sd[k] + i] = val(rank, k, i);
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < rt; i++)
            r[i] = -3;
        if (pass == 0)
            EXPECT_OK(MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD));
        else if (pass == 1)
            EXPECT_OK(MPI_Alltoallw(s, sc, swb, types, r, rc, rwb, types, MPI_COMM_WORLD));
        else {
            for (int k = 0; k < size; k++)
                for (int i = 0; i < rc[k]; i++)
                    r[rd[k] + i] = val(rank, k, i);
            EXPECT_OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, r, rc, rd,
                                    MPI_INT, MPI_COMM_WORLD));
        }
        bad = 0;
        for (int k = 0; k < size; k++)
            for (int i = 0; i < rc[k]; i++)
                bad += r[rd[k] + i] != val(k, rank, i);
        CHECK(bad == 0, "alltoallv/w pass %d n=%d: %d wrong", pass, n, bad);
    }
    free(s);
    free(r);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(swb);
    free(rwb);
    free(types);
}

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int b = 0; b < NB; b++) {
        gathers(blocks[b]);
        vgathers(blocks[b]);
        alltoalls(blocks[b]);
    }
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
