/* Thread communicators over several processes (issue 17): each process brings its threads
 * (argv[1] threads on even processes, argv[2] on odd ones, so the counts may differ); ranks
 * are numbered by process, then by arrival. Point-to-point between threads of different
 * processes (small and large, blocking and nonblocking, MPI_ANY_SOURCE, probes, order),
 * every collective checked against the values it must produce, back to back, and repeated
 * start/finish cycles. */
#include "wtest.h"
#include "threads.h"
#include <stdatomic.h>
#include <stdlib.h>

#define BIG (1 << 18)
#define MAXR 64

static MPI_Comm tc;
static int nprocs, me_proc, nt, total, first; /* this process's first thread rank */
static int counts[MAXR];
static atomic_int errors_in_threads;

#define TCHECK(cond, ...)                                                                \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            atomic_fetch_add(&errors_in_threads, 1);                                     \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
        }                                                                                \
    } while (0)

/* The process owning thread rank r. */
static int proc_of(int r)
{
    int f = 0;
    for (int p = 0; p < nprocs; p++) {
        if (r < f + counts[p])
            return p;
        f += counts[p];
    }
    return -1;
}

static void p2p(int rank)
{
    int right = (rank + 1) % total, left = (rank + total - 1) % total;
    int out = rank * 10 + 1, in = -1;
    MPI_Status st;
    MPI_Send(&out, 1, MPI_INT, right, 7, tc);
    MPI_Recv(&in, 1, MPI_INT, left, 7, tc, &st);
    TCHECK(in == left * 10 + 1, "ring got %d from %d", in, left);
    TCHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7, "status %d %d", st.MPI_SOURCE, st.MPI_TAG);

    /* Large, both directions at once, nonblocking. */
    int *big = malloc(BIG * sizeof(int)), *bigin = malloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++)
        big[i] = rank * 1000003 + i;
    MPI_Request r[4];
    int sin = -1;
    MPI_Irecv(&sin, 1, MPI_INT, left, 9, tc, &r[0]);
    MPI_Irecv(bigin, BIG, MPI_INT, left, 10, tc, &r[1]);
    MPI_Isend(&out, 1, MPI_INT, right, 9, tc, &r[2]);
    MPI_Isend(big, BIG, MPI_INT, right, 10, tc, &r[3]);
    MPI_Status sts[4];
    int rc = MPI_Waitall(4, r, sts);
    TCHECK(rc == MPI_SUCCESS, "waitall %d", rc);
    TCHECK(sin == left * 10 + 1, "irecv got %d", sin);
    TCHECK(sts[1].MPI_SOURCE == left && sts[1].MPI_TAG == 10, "big status %d %d",
           sts[1].MPI_SOURCE, sts[1].MPI_TAG);
    int bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += bigin[i] != left * 1000003 + i;
    TCHECK(bad == 0, "%d wrong ints in the large message", bad);
    /* Blocking large both ways at once (the transports must not wait for each other). */
    MPI_Sendrecv(big, BIG, MPI_INT, right, 11, bigin, BIG, MPI_INT, left, 11, tc,
                 MPI_STATUS_IGNORE);
    bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += bigin[i] != left * 1000003 + i;
    TCHECK(bad == 0, "%d wrong ints after sendrecv", bad);
    free(big);
    free(bigin);

    /* MPI_ANY_SOURCE at the last rank (in the last process): probes, then receives. */
    int last = total - 1;
    if (rank != last) {
        MPI_Ssend(&rank, 1, MPI_INT, last, 12, tc);
    } else {
        long got = 0;
        for (int i = 0; i < total - 1; i++) {
            int v = -1;
            MPI_Status ps;
            MPI_Probe(MPI_ANY_SOURCE, 12, tc, &ps);
            MPI_Recv(&v, 1, MPI_INT, ps.MPI_SOURCE, 12, tc, &st);
            TCHECK(v == st.MPI_SOURCE && v >= 0 && v < last, "any source got %d from %d", v,
                   st.MPI_SOURCE);
            got |= 1L << v;
        }
        TCHECK(got == (1L << last) - 1, "sources %lx", got);
        int pflag = 1;
        /* (Rank 0's tag-13 messages below may already be here.) */
        MPI_Iprobe(MPI_ANY_SOURCE, 12, tc, &pflag, MPI_STATUS_IGNORE);
        TCHECK(pflag == 0, "nothing left to probe");
    }

    /* Order between a pair in different processes: rank 0 to the last rank. */
    if (rank == 0) {
        for (int i = 0; i < 200; i++)
            MPI_Send(&i, 1, MPI_INT, last, 13, tc);
    } else if (rank == last) {
        for (int i = 0; i < 200; i++) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, 0, 13, tc, MPI_STATUS_IGNORE);
            TCHECK(v == i, "order: got %d, expected %d", v, i);
        }
    }
}

/* The v and w collectives and reduce-scatter: rank k contributes k + 1 ints. */
static void vcolls(int rank, int i, int root)
{
    int n = total, k, j, sum = 0;
    int *cnt = malloc(n * sizeof(int)), *dsp = malloc(n * sizeof(int));
    for (k = 0; k < n; k++) {
        cnt[k] = k + 1;
        dsp[k] = sum;
        sum += k + 1;
    }
    int *mine = malloc((rank + 1) * sizeof(int)), *all = malloc(sum * sizeof(int));
    for (j = 0; j <= rank; j++)
        mine[j] = 100 * rank + j + i;
    for (k = 0; k < sum; k++)
        all[k] = -1;
    MPI_Gatherv(mine, rank + 1, MPI_INT, all, cnt, dsp, MPI_INT, root, tc);
    if (rank == root)
        for (k = 0; k < n; k++)
            for (j = 0; j <= k; j++)
                TCHECK(all[dsp[k] + j] == 100 * k + j + i, "gatherv[%d][%d] = %d", k, j,
                       all[dsp[k] + j]);
    for (k = 0; k < sum; k++)
        all[k] = -1;
    MPI_Allgatherv(mine, rank + 1, MPI_INT, all, cnt, dsp, MPI_INT, tc);
    for (k = 0; k < n; k++)
        for (j = 0; j <= k; j++)
            TCHECK(all[dsp[k] + j] == 100 * k + j + i, "allgatherv[%d][%d] = %d", k, j,
                   all[dsp[k] + j]);
    for (k = 0; k < n; k++)
        for (j = 0; j <= k; j++)
            all[dsp[k] + j] = 1000 * k + j + i;
    for (j = 0; j <= rank; j++)
        mine[j] = -1;
    MPI_Scatterv(all, cnt, dsp, MPI_INT, mine, rank + 1, MPI_INT, root, tc);
    for (j = 0; j <= rank; j++)
        TCHECK(mine[j] == 1000 * rank + j + i, "scatterv[%d] = %d", j, mine[j]);
    /* Alltoallv: rank r sends r + 1 ints to everybody (value 10 * r + dest). */
    int *sc = malloc(n * sizeof(int)), *sd = malloc(n * sizeof(int));
    int *sb = malloc(n * (rank + 1) * sizeof(int)), *rb = malloc(sum * sizeof(int));
    for (k = 0; k < n; k++) {
        sc[k] = rank + 1;
        sd[k] = k * (rank + 1);
        for (j = 0; j <= rank; j++)
            sb[k * (rank + 1) + j] = 10 * rank + k + i;
    }
    for (k = 0; k < sum; k++)
        rb[k] = -1;
    MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, cnt, dsp, MPI_INT, tc);
    for (k = 0; k < n; k++)
        for (j = 0; j <= k; j++)
            TCHECK(rb[dsp[k] + j] == 10 * k + rank + i, "alltoallv[%d][%d] = %d", k, j,
                   rb[dsp[k] + j]);
    /* Alltoallw: the same in bytes. */
    MPI_Datatype *ty = malloc(n * sizeof(MPI_Datatype));
    int *sdb = malloc(n * sizeof(int)), *rdb = malloc(n * sizeof(int));
    for (k = 0; k < n; k++) {
        ty[k] = MPI_INT;
        sdb[k] = sd[k] * (int)sizeof(int);
        rdb[k] = dsp[k] * (int)sizeof(int);
    }
    for (k = 0; k < sum; k++)
        rb[k] = -1;
    MPI_Alltoallw(sb, sc, sdb, ty, rb, cnt, rdb, ty, tc);
    for (k = 0; k < n; k++)
        for (j = 0; j <= k; j++)
            TCHECK(rb[dsp[k] + j] == 10 * k + rank + i, "alltoallw[%d][%d] = %d", k, j,
                   rb[dsp[k] + j]);
    /* Reduce-scatter: element e of every rank's input is rank + e; rank r gets r + 1. */
    int *in = malloc((sum + 2 * n) * sizeof(int)), out[MAXR];
    for (k = 0; k < sum + 2 * n; k++)
        in[k] = rank + k;
    MPI_Reduce_scatter(in, out, cnt, MPI_INT, MPI_SUM, tc);
    for (j = 0; j <= rank; j++)
        TCHECK(out[j] == n * (n - 1) / 2 + n * (dsp[rank] + j), "reduce_scatter[%d] = %d", j,
               out[j]);
    MPI_Reduce_scatter_block(in, out, 2, MPI_INT, MPI_SUM, tc);
    for (j = 0; j < 2; j++)
        TCHECK(out[j] == n * (n - 1) / 2 + n * (2 * rank + j), "reduce_scatter_block[%d] = %d",
               j, out[j]);
    free(cnt), free(dsp), free(mine), free(all), free(sc), free(sd), free(sb), free(rb);
    free(ty), free(sdb), free(rdb), free(in);
}

static void colls(int rank, int rounds)
{
    int n = total, k;
    int *all = malloc(n * sizeof(int)), *src = malloc(n * sizeof(int));
    MPI_Barrier(tc);
    for (int i = 0; i < rounds; i++) {
        int root = i % n, v = rank + i, s = -1;
        int b[2] = {-1, -1};
        if (rank == root)
            b[0] = 100 + i, b[1] = 200 + i;
        MPI_Bcast(b, 2, MPI_INT, root, tc);
        TCHECK(b[0] == 100 + i && b[1] == 200 + i, "bcast %d: %d %d", i, b[0], b[1]);
        MPI_Reduce(&v, &s, 1, MPI_INT, MPI_SUM, root, tc);
        if (rank == root)
            TCHECK(s == n * i + n * (n - 1) / 2, "reduce %d: %d", i, s);
        MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_MAX, tc);
        TCHECK(s == n - 1 + i, "allreduce %d: %d", i, s);
        s = rank + 1;
        MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_INT, MPI_SUM, tc);
        TCHECK(s == n * (n + 1) / 2, "allreduce in place %d", s);
        MPI_Scan(&v, &s, 1, MPI_INT, MPI_SUM, tc);
        TCHECK(s == (rank + 1) * i + rank * (rank + 1) / 2, "scan %d: %d", i, s);
        s = -7;
        MPI_Exscan(&v, &s, 1, MPI_INT, MPI_SUM, tc);
        if (rank > 0)
            TCHECK(s == rank * i + rank * (rank - 1) / 2, "exscan %d: %d", i, s);
        else
            TCHECK(s == -7, "exscan at rank 0 changed recvbuf: %d", s);
        for (k = 0; k < n; k++)
            all[k] = -1;
        MPI_Gather(&v, 1, MPI_INT, all, 1, MPI_INT, root, tc);
        if (rank == root)
            for (k = 0; k < n; k++)
                TCHECK(all[k] == k + i, "gather[%d] = %d", k, all[k]);
        for (k = 0; k < n; k++)
            all[k] = -1;
        MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, tc);
        for (k = 0; k < n; k++)
            TCHECK(all[k] == k + i, "allgather[%d] = %d", k, all[k]);
        for (k = 0; k < n; k++)
            src[k] = 10 * i + k;
        s = -1;
        MPI_Scatter(src, 1, MPI_INT, &s, 1, MPI_INT, root, tc);
        TCHECK(s == 10 * i + rank, "scatter %d: %d", i, s);
        for (k = 0; k < n; k++)
            src[k] = 1000 * rank + k;
        MPI_Alltoall(src, 1, MPI_INT, all, 1, MPI_INT, tc);
        for (k = 0; k < n; k++)
            TCHECK(all[k] == 1000 * k + rank, "alltoall[%d] = %d", k, all[k]);
        vcolls(rank, i, root);
        MPI_Request req;
        s = -1;
        MPI_Iallreduce(&v, &s, 1, MPI_INT, MPI_MIN, tc, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        TCHECK(s == i, "iallreduce %d: %d", i, s);
        if (atomic_load(&errors_in_threads) > 10)
            break;
    }
    free(all);
    free(src);
}

static void region(void *unused)
{
    (void)unused;
    int rank = -1, size = -1, rc;
    rc = MPIX_Threadcomm_start(tc);
    TCHECK(rc == MPI_SUCCESS, "start: %d", rc);
    MPI_Comm_rank(tc, &rank);
    MPI_Comm_size(tc, &size);
    TCHECK(size == total, "size %d, expected %d", size, total);
    TCHECK(rank >= first && rank < first + nt, "rank %d not in this process's [%d, %d)", rank,
           first, first + nt);
    TCHECK(proc_of(rank) == me_proc, "rank %d", rank);
    p2p(rank);
    colls(rank, 300);
    rc = MPIX_Threadcomm_finish(tc);
    TCHECK(rc == MPI_SUCCESS, "finish: %d", rc);
}

static void cycle(void *unused)
{
    (void)unused;
    int rank = -1, s = -1, v;
    MPIX_Threadcomm_start(tc);
    MPI_Comm_rank(tc, &rank);
    v = rank;
    MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, tc);
    TCHECK(s == total * (total - 1) / 2, "cycle allreduce %d", s);
    /* A message to the next process's first thread, received in the same region. */
    int to = (rank + nt) % total, from = (rank + total - nt) % total, got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, to, 1, &got, 1, MPI_INT, from, 1, tc, MPI_STATUS_IGNORE);
    TCHECK(got == from, "cycle sendrecv got %d from %d", got, from);
    MPIX_Threadcomm_finish(tc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_rank(MPI_COMM_WORLD, &me_proc);
    int even = argc > 1 ? atoi(argv[1]) : 2, odd = argc > 2 ? atoi(argv[2]) : even;
    total = 0;
    for (int p = 0; p < nprocs; p++) {
        counts[p] = p % 2 ? odd : even;
        if (p < me_proc)
            first += counts[p];
        total += counts[p];
    }
    nt = counts[me_proc];
    CHECK_INT(MPIX_Threadcomm_init(MPI_COMM_WORLD, nt, &tc), MPI_SUCCESS);
    run_threads(nt, region, NULL);
    /* Only when each process sends to the next one's threads: equal counts. */
    if (even == odd)
        for (int i = 0; i < 200; i++)
            run_threads(nt, cycle, NULL);
    CHECK_INT(atomic_load(&errors_in_threads), 0);
    CHECK_INT(MPIX_Threadcomm_free(&tc), MPI_SUCCESS);
    CHECK(tc == MPI_COMM_NULL, "freed handle is MPI_COMM_NULL");
    MPI_Finalize();
    if (wtest_errs == 0 && me_proc == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
