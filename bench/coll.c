/* Collective latency: every blocking collective at the sizes asked for. Each measure runs a
 * warm-up, then timed batches; a batch's time is the slowest rank's average per call, and the
 * line printed is the best batch (the least disturbed by other load on the machine).
 *
 * Usage: coll [SECONDS [MEASURES [SIZES]]]: seconds per batch (0.05), a comma-separated list
 * of measures (default: all), a comma-separated list of sizes in bytes (default:
 * 8,4096,65536,1048576). A size is per block for the gather/scatter/all-to-all families (what
 * one rank sends to one other), the whole vector for the reductions, the message for bcast.
 * `bcast_rot` and `reduce_rot` move the root to the next rank every call; the neighbourhood
 * measures run on a periodic 1-D ring (two neighbours per rank, a block each).
 * Output: one line per measure, "name bytes microseconds". Standard MPI only: it is compiled
 * with each implementation's own mpicc. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

enum {
    BARRIER, BCAST, BCAST_ROT, REDUCE, REDUCE_ROT, ALLREDUCE, GATHER, GATHERV, SCATTER,
    SCATTERV, ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV, ALLTOALLW, REDUCE_SCATTER,
    REDUCE_SCATTER_BLOCK, SCAN, EXSCAN, NEIGHBOR_ALLGATHER, NEIGHBOR_ALLTOALL, NMEASURES
};

static const char *names[NMEASURES] = {
    "barrier", "bcast", "bcast_rot", "reduce", "reduce_rot", "allreduce", "gather", "gatherv",
    "scatter", "scatterv", "allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw",
    "reduce_scatter", "reduce_scatter_block", "scan", "exscan", "neighbor_allgather",
    "neighbor_alltoall"};

/* Buffers and per-rank arrays, sized for the largest measure. */
static char *a, *b;
static int *counts, *displs;
static MPI_Datatype *types;
static MPI_Comm ring;

static void call(int which, int bytes, int i)
{
    int n = bytes / 8, nb = bytes; /* doubles for reductions, bytes for data movers */
    MPI_Comm w = MPI_COMM_WORLD;
    switch (which) {
    case BARRIER: MPI_Barrier(w); break;
    case BCAST: MPI_Bcast(a, nb, MPI_BYTE, 0, w); break;
    case BCAST_ROT: MPI_Bcast(a, nb, MPI_BYTE, i % size, w); break;
    case REDUCE: MPI_Reduce(a, b, n, MPI_DOUBLE, MPI_SUM, 0, w); break;
    case REDUCE_ROT: MPI_Reduce(a, b, n, MPI_DOUBLE, MPI_SUM, i % size, w); break;
    case ALLREDUCE: MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, w); break;
    case GATHER: MPI_Gather(a, nb, MPI_BYTE, b, nb, MPI_BYTE, 0, w); break;
    case GATHERV: MPI_Gatherv(a, nb, MPI_BYTE, b, counts, displs, MPI_BYTE, 0, w); break;
    case SCATTER: MPI_Scatter(a, nb, MPI_BYTE, b, nb, MPI_BYTE, 0, w); break;
    case SCATTERV: MPI_Scatterv(a, counts, displs, MPI_BYTE, b, nb, MPI_BYTE, 0, w); break;
    case ALLGATHER: MPI_Allgather(a, nb, MPI_BYTE, b, nb, MPI_BYTE, w); break;
    case ALLGATHERV: MPI_Allgatherv(a, nb, MPI_BYTE, b, counts, displs, MPI_BYTE, w); break;
    case ALLTOALL: MPI_Alltoall(a, nb, MPI_BYTE, b, nb, MPI_BYTE, w); break;
    case ALLTOALLV:
        MPI_Alltoallv(a, counts, displs, MPI_BYTE, b, counts, displs, MPI_BYTE, w);
        break;
    case ALLTOALLW: {
        /* displacements in bytes: the same numbers, since the type is MPI_BYTE */
        MPI_Alltoallw(a, counts, displs, types, b, counts, displs, types, w);
        break;
    }
    case REDUCE_SCATTER: {
        /* n doubles in all, split as evenly as possible */
        MPI_Reduce_scatter(a, b, counts, MPI_DOUBLE, MPI_SUM, w);
        break;
    }
    case REDUCE_SCATTER_BLOCK:
        MPI_Reduce_scatter_block(a, b, n / size > 0 ? n / size : 1, MPI_DOUBLE, MPI_SUM, w);
        break;
    case SCAN: MPI_Scan(a, b, n, MPI_DOUBLE, MPI_SUM, w); break;
    case EXSCAN: MPI_Exscan(a, b, n, MPI_DOUBLE, MPI_SUM, w); break;
    case NEIGHBOR_ALLGATHER: MPI_Neighbor_allgather(a, nb, MPI_BYTE, b, nb, MPI_BYTE, ring); break;
    case NEIGHBOR_ALLTOALL: MPI_Neighbor_alltoall(a, nb, MPI_BYTE, b, nb, MPI_BYTE, ring); break;
    }
}

/* The per-rank arrays of measure `which` at `bytes`. */
static void setup(int which, int bytes)
{
    int n = bytes / 8;
    for (int r = 0; r < size; r++) {
        if (which == REDUCE_SCATTER) {
            counts[r] = n / size + (r < n % size);
            if (n < size)
                counts[r] = 1;
        } else {
            counts[r] = bytes;
        }
        displs[r] = r * bytes;
        types[r] = MPI_BYTE;
    }
}

static double batch(int which, int bytes, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        call(which, bytes, i);
    double mine = (MPI_Wtime() - t0) / iters, worst = 0;
    MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

static void measure(int which, int bytes, double seconds)
{
    setup(which, bytes);
    /* Calibrate: iterations for about `seconds` per batch. */
    double t = batch(which, bytes, 10);
    t = batch(which, bytes, 10);
    int iters = (int)(seconds / (t > 1e-9 ? t : 1e-9));
    if (iters < 5)
        iters = 5;
    MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
    double best = 1e30;
    for (int k = 0; k < 7; k++) {
        double x = batch(which, bytes, iters);
        if (x < best)
            best = x;
    }
    if (rank == 0)
        printf("%s %d %.3f\n", names[which], bytes, best * 1e6);
    fflush(stdout);
}

static int listed(const char *list, const char *name)
{
    if (!list || !*list || !strcmp(list, "all"))
        return 1;
    size_t len = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += len)
        if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == 0))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.05;
    const char *which = argc > 2 ? argv[2] : "all";
    const char *sizes = argc > 3 ? argv[3] : "8,4096,65536,1048576";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int list[16], nsizes = 0, biggest = 8;
    for (const char *p = sizes; *p && nsizes < 16;) {
        list[nsizes] = atoi(p);
        if (list[nsizes] > biggest)
            biggest = list[nsizes];
        nsizes++;
        p = strchr(p, ',');
        if (!p)
            break;
        p++;
    }
    size_t cap = (size_t)biggest * (size > 2 ? size : 2) + 64;
    a = calloc(cap, 1);
    b = calloc(cap, 1);
    for (size_t k = 0; k < cap / 8; k++)
        ((double *)a)[k] = rank + (double)k;
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    counts = calloc(size, sizeof(int));
    displs = calloc(size, sizeof(int));
    types = calloc(size, sizeof(MPI_Datatype));
    for (int m = 0; m < NMEASURES; m++) {
        if (!listed(which, names[m]))
            continue;
        if (m == BARRIER) {
            measure(m, 0, seconds);
            continue;
        }
        for (int k = 0; k < nsizes; k++)
            measure(m, list[k], seconds);
    }
    free(a), free(b), free(counts), free(displs), free(types);
    MPI_Comm_free(&ring);
    MPI_Finalize();
    return 0;
}
