/* Collectives given the same memory as send and receive buffer (not MPI_IN_PLACE) fail with
 * MPI_ERR_BUFFER naming the function, before anything moves: blocking, nonblocking and
 * persistent forms, the rank's own block of a gather/allgather, v/w forms, and rooted forms
 * called at the root alone (as MPICH's errors/coll/noalias3 does: a nonblocking one
 * accepted there could never complete and would write into the freed buffer later). The
 * buffers are untouched afterwards and the communicator still works. */
#include "wtest.h"

#define N 2

static int *sbuf, *counts, *displs;
static MPI_Datatype *types;
static int size, rank;

static void check_untouched(const char *what)
{
    for (int i = 0; i < N * size; i++)
        if (sbuf[i] != 100 + i) {
            FAIL("%s: sbuf[%d] = %d, expected %d (data moved)", what, i, sbuf[i], 100 + i);
            break;
        }
}

/* kind 0: blocking, 1: nonblocking, 2: persistent */
static int call(int kind, int which, MPI_Request *req)
{
    MPI_Comm c = MPI_COMM_WORLD;
    MPI_Info info = MPI_INFO_NULL;
    int *own = &sbuf[rank * N];
    switch (which) {
    case 0:
        return kind == 0 ? MPI_Gather(sbuf, N, MPI_INT, sbuf, N, MPI_INT, 0, c)
             : kind == 1 ? MPI_Igather(sbuf, N, MPI_INT, sbuf, N, MPI_INT, 0, c, req)
                         : MPI_Gather_init(sbuf, N, MPI_INT, sbuf, N, MPI_INT, 0, c, info, req);
    case 1:
        return kind == 0 ? MPI_Gatherv(sbuf, N, MPI_INT, sbuf, counts, displs, MPI_INT, 0, c)
             : kind == 1 ? MPI_Igatherv(sbuf, N, MPI_INT, sbuf, counts, displs, MPI_INT, 0, c, req)
                         : MPI_Gatherv_init(sbuf, N, MPI_INT, sbuf, counts, displs, MPI_INT, 0, c,
                                            info, req);
    case 2:
        return kind == 0 ? MPI_Scatter(sbuf, N, MPI_INT, sbuf, N, MPI_INT, 0, c)
             : kind == 1 ? MPI_Iscatter(sbuf, N, MPI_INT, sbuf, N, MPI_INT, 0, c, req)
                         : MPI_Scatter_init(sbuf, N, MPI_INT, sbuf, N, MPI_INT, 0, c, info, req);
    case 3:
        return kind == 0 ? MPI_Scatterv(sbuf, counts, displs, MPI_INT, sbuf, N, MPI_INT, 0, c)
             : kind == 1 ? MPI_Iscatterv(sbuf, counts, displs, MPI_INT, sbuf, N, MPI_INT, 0, c, req)
                         : MPI_Scatterv_init(sbuf, counts, displs, MPI_INT, sbuf, N, MPI_INT, 0, c,
                                             info, req);
    case 4: /* the rank's own block of the receive buffer */
        return kind == 0 ? MPI_Allgather(own, N, MPI_INT, sbuf, N, MPI_INT, c)
             : kind == 1 ? MPI_Iallgather(own, N, MPI_INT, sbuf, N, MPI_INT, c, req)
                         : MPI_Allgather_init(own, N, MPI_INT, sbuf, N, MPI_INT, c, info, req);
    case 5:
        return kind == 0 ? MPI_Allgatherv(own, N, MPI_INT, sbuf, counts, displs, MPI_INT, c)
             : kind == 1 ? MPI_Iallgatherv(own, N, MPI_INT, sbuf, counts, displs, MPI_INT, c, req)
                         : MPI_Allgatherv_init(own, N, MPI_INT, sbuf, counts, displs, MPI_INT, c,
                                               info, req);
    case 6:
        return kind == 0 ? MPI_Alltoall(sbuf, N, MPI_INT, sbuf, N, MPI_INT, c)
             : kind == 1 ? MPI_Ialltoall(sbuf, N, MPI_INT, sbuf, N, MPI_INT, c, req)
                         : MPI_Alltoall_init(sbuf, N, MPI_INT, sbuf, N, MPI_INT, c, info, req);
    case 7:
        return kind == 0 ? MPI_Alltoallv(sbuf, counts, displs, MPI_INT, sbuf, counts, displs, MPI_INT, c)
             : kind == 1 ? MPI_Ialltoallv(sbuf, counts, displs, MPI_INT, sbuf, counts, displs,
                                          MPI_INT, c, req)
                         : MPI_Alltoallv_init(sbuf, counts, displs, MPI_INT, sbuf, counts, displs,
                                              MPI_INT, c, info, req);
    case 8: {
        int bd[64];
        for (int i = 0; i < size; i++)
            bd[i] = displs[i] * (int)sizeof(int);
        return kind == 0 ? MPI_Alltoallw(sbuf, counts, bd, types, sbuf, counts, bd, types, c)
             : kind == 1 ? MPI_Ialltoallw(sbuf, counts, bd, types, sbuf, counts, bd, types, c, req)
                         : MPI_Alltoallw_init(sbuf, counts, bd, types, sbuf, counts, bd, types, c,
                                              info, req);
    }
    case 9:
        return kind == 0 ? MPI_Reduce(sbuf, sbuf, N, MPI_INT, MPI_SUM, 0, c)
             : kind == 1 ? MPI_Ireduce(sbuf, sbuf, N, MPI_INT, MPI_SUM, 0, c, req)
                         : MPI_Reduce_init(sbuf, sbuf, N, MPI_INT, MPI_SUM, 0, c, info, req);
    case 10: /* overlapping, not equal */
        return kind == 0 ? MPI_Allreduce(sbuf, sbuf + 1, N, MPI_INT, MPI_SUM, c)
             : kind == 1 ? MPI_Iallreduce(sbuf, sbuf + 1, N, MPI_INT, MPI_SUM, c, req)
                         : MPI_Allreduce_init(sbuf, sbuf + 1, N, MPI_INT, MPI_SUM, c, info, req);
    case 11:
        return kind == 0 ? MPI_Reduce_scatter(sbuf, sbuf, counts, MPI_INT, MPI_SUM, c)
             : kind == 1 ? MPI_Ireduce_scatter(sbuf, sbuf, counts, MPI_INT, MPI_SUM, c, req)
                         : MPI_Reduce_scatter_init(sbuf, sbuf, counts, MPI_INT, MPI_SUM, c, info, req);
    case 12:
        return kind == 0 ? MPI_Reduce_scatter_block(sbuf, sbuf, N, MPI_INT, MPI_SUM, c)
             : kind == 1 ? MPI_Ireduce_scatter_block(sbuf, sbuf, N, MPI_INT, MPI_SUM, c, req)
                         : MPI_Reduce_scatter_block_init(sbuf, sbuf, N, MPI_INT, MPI_SUM, c, info,
                                                         req);
    case 13:
        return kind == 0 ? MPI_Scan(sbuf, sbuf, N, MPI_INT, MPI_SUM, c)
             : kind == 1 ? MPI_Iscan(sbuf, sbuf, N, MPI_INT, MPI_SUM, c, req)
                         : MPI_Scan_init(sbuf, sbuf, N, MPI_INT, MPI_SUM, c, info, req);
    default:
        return kind == 0 ? MPI_Exscan(sbuf, sbuf, N, MPI_INT, MPI_SUM, c)
             : kind == 1 ? MPI_Iexscan(sbuf, sbuf, N, MPI_INT, MPI_SUM, c, req)
                         : MPI_Exscan_init(sbuf, sbuf, N, MPI_INT, MPI_SUM, c, info, req);
    }
}

static const char *names[3][15] = {
    {"MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv", "MPI_Allgather",
     "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Alltoallw", "MPI_Reduce",
     "MPI_Allreduce", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan"},
    {"MPI_Igather", "MPI_Igatherv", "MPI_Iscatter", "MPI_Iscatterv", "MPI_Iallgather",
     "MPI_Iallgatherv", "MPI_Ialltoall", "MPI_Ialltoallv", "MPI_Ialltoallw", "MPI_Ireduce",
     "MPI_Iallreduce", "MPI_Ireduce_scatter", "MPI_Ireduce_scatter_block", "MPI_Iscan",
     "MPI_Iexscan"},
    {"MPI_Gather_init", "MPI_Gatherv_init", "MPI_Scatter_init", "MPI_Scatterv_init",
     "MPI_Allgather_init", "MPI_Allgatherv_init", "MPI_Alltoall_init", "MPI_Alltoallv_init",
     "MPI_Alltoallw_init", "MPI_Reduce_init", "MPI_Allreduce_init", "MPI_Reduce_scatter_init",
     "MPI_Reduce_scatter_block_init", "MPI_Scan_init", "MPI_Exscan_init"},
};

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (size > 64)
        return 1;
    sbuf = malloc(N * size * sizeof(int) + sizeof(int));
    counts = malloc(size * sizeof(int));
    displs = malloc(size * sizeof(int));
    types = malloc(size * sizeof(MPI_Datatype));
    for (int i = 0; i < size; i++) {
        counts[i] = N;
        displs[i] = i * N;
        types[i] = MPI_INT;
    }
    for (int kind = 0; kind < 3; kind++) {
        for (int which = 0; which < 15; which++) {
            int rooted = which < 4 || which == 9;
            if (rooted && rank != 0)
                continue; /* the root alone calls: the others would not join */
            for (int i = 0; i < N * size + 1; i++)
                sbuf[i] = 100 + i;
            MPI_Request req = MPI_REQUEST_NULL;
            EXPECT_ERR(call(kind, which, &req), MPI_ERR_BUFFER, names[kind][which], "recvbuf");
            CHECK(req == MPI_REQUEST_NULL, "%s left a request", names[kind][which]);
            check_untouched(names[kind][which]);
        }
    }
    /* MPI_Reduce_local: MPI_IN_PLACE on either side and aliasing are MPI_ERR_BUFFER. */
    EXPECT_ERR(MPI_Reduce_local(sbuf, sbuf, N, MPI_INT, MPI_SUM), MPI_ERR_BUFFER,
               "MPI_Reduce_local", "inoutbuf");
    EXPECT_ERR(MPI_Reduce_local(sbuf, sbuf + 1, N, MPI_INT, MPI_SUM), MPI_ERR_BUFFER,
               "MPI_Reduce_local", "inoutbuf");
    EXPECT_ERR(MPI_Reduce_local(MPI_IN_PLACE, sbuf, N, MPI_INT, MPI_SUM), MPI_ERR_BUFFER,
               "MPI_Reduce_local", "inbuf");
    EXPECT_ERR(MPI_Reduce_local(sbuf, MPI_IN_PLACE, N, MPI_INT, MPI_SUM), MPI_ERR_BUFFER,
               "MPI_Reduce_local", "inoutbuf");
    check_untouched("MPI_Reduce_local");
    /* Nothing may be pending on the buffer: free it, then communicate. */
    free(sbuf);
    int *junk = malloc(64 * sizeof(int));
    for (int i = 0; i < 64; i++)
        junk[i] = -1;
    int x = rank + 1, sum = 0;
    EXPECT_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_INT(sum, size * (size + 1) / 2);
    int big[4096], bsum[4096];
    for (int i = 0; i < 4096; i++)
        big[i] = i;
    EXPECT_OK(MPI_Allreduce(big, bsum, 4096, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_INT(bsum[4095], 4095 * size);
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 64; i++)
        if (junk[i] != -1) {
            FAIL("memory reused after free was written: junk[%d] = %d", i, junk[i]);
            break;
        }
    /* Disjoint parts of one array are no alias. */
    int arr[2 * 64 * N];
    for (int i = 0; i < N * size; i++)
        arr[i] = rank;
    EXPECT_OK(MPI_Alltoall(arr, N, MPI_INT, arr + N * size, N, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < N * size; i++)
        CHECK_INT(arr[N * size + i], i / N);
    free(junk);
    free(counts);
    free(displs);
    free(types);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
