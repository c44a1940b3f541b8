/* Thread communicators on one process: ranks, blocking and nonblocking point-to-point
 * (eager and single-copy sizes, MPI_ANY_SOURCE, probes, synchronous sends), barrier,
 * broadcast, reduce and allreduce, many start/finish cycles. Built with pthreads and with
 * -fopenmp (manifest). */
#include "wtest.h"
#include "threads.h"
#include <stdatomic.h>

#define NT 4
#define BIG (1 << 20)

static MPI_Comm tc;
static atomic_int seen_ranks;
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

static void region(void *unused)
{
    (void)unused;
    int rank = -1, size = -1, rc;
    rc = MPIX_Threadcomm_start(tc);
    TCHECK(rc == MPI_SUCCESS, "start: %d", rc);
    MPI_Comm_rank(tc, &rank);
    MPI_Comm_size(tc, &size);
    TCHECK(size == NT, "size %d", size);
    TCHECK(rank >= 0 && rank < NT, "rank %d", rank);
    atomic_fetch_or(&seen_ranks, 1 << rank);
    int flag = 0;
    MPIX_Comm_test_threadcomm(tc, &flag);
    TCHECK(flag == 1, "test_threadcomm %d", flag);

    int right = (rank + 1) % NT, left = (rank + NT - 1) % NT;

    /* Blocking ring, small (eager): sends first, then receives. */
    int out = rank * 10 + 1, in = -1;
    MPI_Status st;
    MPI_Send(&out, 1, MPI_INT, right, 7, tc);
    MPI_Recv(&in, 1, MPI_INT, left, 7, tc, &st);
    TCHECK(in == left * 10 + 1, "ring got %d from %d", in, left);
    TCHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7, "status %d %d", st.MPI_SOURCE, st.MPI_TAG);
    int cnt = -1;
    MPI_Get_count(&st, MPI_INT, &cnt);
    TCHECK(cnt == 1, "count %d", cnt);

    /* Large (single copy): even ranks send first, odd receive first. */
    int *big = malloc(BIG * sizeof(int)), *bigin = malloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++)
        big[i] = rank * 1000003 + i;
    if (rank % 2 == 0) {
        MPI_Send(big, BIG, MPI_INT, right, 8, tc);
        MPI_Recv(bigin, BIG, MPI_INT, left, 8, tc, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(bigin, BIG, MPI_INT, left, 8, tc, MPI_STATUS_IGNORE);
        MPI_Send(big, BIG, MPI_INT, right, 8, tc);
    }
    int bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += bigin[i] != left * 1000003 + i;
    TCHECK(bad == 0, "%d wrong ints in the large message", bad);

    /* Nonblocking ring, both sizes, receives posted first. */
    MPI_Request r[4];
    int sin = -1;
    MPI_Irecv(&sin, 1, MPI_INT, left, 9, tc, &r[0]);
    MPI_Irecv(bigin, BIG, MPI_INT, left, 10, tc, &r[1]);
    MPI_Isend(&out, 1, MPI_INT, right, 9, tc, &r[2]);
    MPI_Isend(big, BIG, MPI_INT, right, 10, tc, &r[3]);
    MPI_Status sts[4];
    rc = MPI_Waitall(4, r, sts);
    TCHECK(rc == MPI_SUCCESS, "waitall %d", rc);
    TCHECK(sin == left * 10 + 1, "irecv got %d", sin);
    TCHECK(sts[1].MPI_SOURCE == left && sts[1].MPI_TAG == 10, "big status %d %d",
           sts[1].MPI_SOURCE, sts[1].MPI_TAG);
    bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += bigin[i] != left * 1000003 + i;
    TCHECK(bad == 0, "%d wrong ints in the nonblocking large message", bad);

    /* MPI_ANY_SOURCE: everybody sends its rank to 0; probes first. */
    if (rank != 0) {
        MPI_Ssend(&rank, 1, MPI_INT, 0, 11, tc);
    } else {
        int got = 0;
        for (int i = 1; i < NT; i++) {
            int pflag = 0, v = -1;
            MPI_Status ps;
            MPI_Probe(MPI_ANY_SOURCE, 11, tc, &ps);
            MPI_Iprobe(ps.MPI_SOURCE, 11, tc, &pflag, MPI_STATUS_IGNORE);
            TCHECK(pflag == 1, "iprobe after probe");
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &st);
            TCHECK(v == st.MPI_SOURCE && v >= 1 && v < NT, "any source got %d from %d", v,
                   st.MPI_SOURCE);
            got |= 1 << v;
        }
        TCHECK(got == ((1 << NT) - 2), "sources %x", got);
        int pflag = 1;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &pflag, MPI_STATUS_IGNORE);
        TCHECK(pflag == 0, "nothing left to probe");
    }

    /* Message order between one pair. */
    if (rank == 1) {
        for (int i = 0; i < 100; i++)
            MPI_Send(&i, 1, MPI_INT, 2, 12, tc);
    } else if (rank == 2) {
        for (int i = 0; i < 100; i++) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, 1, 12, tc, MPI_STATUS_IGNORE);
            TCHECK(v == i, "order: got %d, expected %d", v, i);
        }
    }

    /* Collectives. */
    MPI_Barrier(tc);
    for (int root = 0; root < NT; root++) {
        int v[3] = {-1, -1, -1};
        if (rank == root)
            v[0] = 100 + root, v[1] = 200 + root, v[2] = 300 + root;
        MPI_Bcast(v, 3, MPI_INT, root, tc);
        TCHECK(v[0] == 100 + root && v[2] == 300 + root, "bcast from %d got %d %d", root, v[0],
               v[2]);
        int sum = -1, mine[2] = {rank, 1};
        int res[2] = {-1, -1};
        MPI_Reduce(mine, res, 2, MPI_INT, MPI_SUM, root, tc);
        if (rank == root)
            TCHECK(res[0] == NT * (NT - 1) / 2 && res[1] == NT, "reduce at %d: %d %d", root,
                   res[0], res[1]);
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_MAX, tc);
        TCHECK(sum == NT - 1, "allreduce max %d", sum);
        int inplace = rank + 1;
        MPI_Allreduce(MPI_IN_PLACE, &inplace, 1, MPI_INT, MPI_PROD, tc);
        TCHECK(inplace == 24, "allreduce in place %d", inplace);
    }
    /* Back-to-back collectives with no synchronisation between them. */
    for (int i = 0; i < 20000; i++) {
        int v = rank + i, s = -1;
        MPI_Reduce(&v, &s, 1, MPI_INT, MPI_SUM, i % NT, tc);
        if (rank == i % NT)
            TCHECK(s == NT * i + NT * (NT - 1) / 2, "reduce %d: %d", i, s);
        MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, tc);
        TCHECK(s == NT * i + NT * (NT - 1) / 2, "allreduce %d: %d", i, s);
        int b = rank == 0 ? i : -1;
        MPI_Bcast(&b, 1, MPI_INT, 0, tc);
        TCHECK(b == i, "bcast %d: %d", i, b);
        if (atomic_load(&errors_in_threads) > 10)
            break;
    }
    free(big);
    free(bigin);
    rc = MPIX_Threadcomm_finish(tc);
    TCHECK(rc == MPI_SUCCESS, "finish: %d", rc);
}

static void cycle(void *unused)
{
    (void)unused;
    int rank = -1, v, s = -1;
    MPIX_Threadcomm_start(tc);
    MPI_Comm_rank(tc, &rank);
    v = rank;
    MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, tc);
    TCHECK(s == NT * (NT - 1) / 2, "cycle allreduce %d", s);
    MPIX_Threadcomm_finish(tc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int flag = 1;
    MPIX_Comm_test_threadcomm(MPI_COMM_WORLD, &flag);
    CHECK_INT(flag, 0);
    CHECK_INT(MPIX_Threadcomm_init(MPI_COMM_SELF, NT, &tc), MPI_SUCCESS);
    run_threads(NT, region, NULL);
    CHECK_INT(atomic_load(&seen_ranks), (1 << NT) - 1);
    for (int i = 0; i < 1000; i++)
        run_threads(NT, cycle, NULL);
    CHECK_INT(atomic_load(&errors_in_threads), 0);
    CHECK_INT(MPIX_Threadcomm_free(&tc), MPI_SUCCESS);
    CHECK(tc == MPI_COMM_NULL, "freed handle is MPI_COMM_NULL");
    MPI_Finalize();
    if (wtest_errs == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
