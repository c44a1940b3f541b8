/* Partitioned communication on thread communicators (issue 22): the threads of a region are
 * the ranks. argv[1] threads per process (at least 2); one process or several.
 * - ring: each rank sends 16 partitions to the next rank and receives them in 8 partitions
 *   from the previous one, partitions readied in reverse order, Parrived polled, values
 *   checked; small (copied) and large (single-copy) partitions, several rounds.
 * - shared: a process's first rank makes a partitioned send that all threads of its process
 *   but one fill and ready (interleaved, out of order); the receiving rank polls Parrived
 *   and checks each partition as it arrives.
 * - MPI_PROC_NULL peers complete at once; finish refuses while a partitioned request lives;
 *   user receives with MPI_ANY_TAG never see the partitioned traffic. */
#include "wtest.h"
#include "threads.h"
#include <stdatomic.h>
#include <stdlib.h>

#define SP 16 /* send partitions */
#define RP 8  /* receive partitions */
#define ROUNDS 3

static MPI_Comm tc;
static int nprocs, me_proc, nt, total, first;
static atomic_int errors_in_threads;
static MPI_Request shared_send;
static int *shared_buf;

#define TCHECK(cond, ...)                                                                \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            atomic_fetch_add(&errors_in_threads, 1);                                     \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
        }                                                                                \
    } while (0)

static int value(int sender, int round, int i)
{
    return sender * 1000003 + round * 7919 + i;
}

/* The ring with `per` ints per send partition. */
static void ring(int rank, int per)
{
    int right = (rank + 1) % total, left = (rank + total - 1) % total;
    int n = SP * per;
    int *out = calloc(n, sizeof(int)), *in = calloc(n, sizeof(int));
    MPI_Request s, r;
    TCHECK(MPI_Psend_init(out, SP, per, MPI_INT, right, 5, tc, MPI_INFO_NULL, &s) == MPI_SUCCESS,
           "psend_init");
    TCHECK(MPI_Precv_init(in, RP, n / RP, MPI_INT, left, 5, tc, MPI_INFO_NULL, &r) == MPI_SUCCESS,
           "precv_init");
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < n; i++)
            in[i] = -1;
        MPI_Start(&r);
        MPI_Start(&s);
        for (int p = SP - 1; p >= 0; p--) {
            for (int i = p * per; i < (p + 1) * per; i++)
                out[i] = value(rank, round, i);
            TCHECK(MPI_Pready(p, s) == MPI_SUCCESS, "pready %d", p);
        }
        /* Poll until every receive partition is in; check each as it arrives. */
        int seen[RP] = {0}, left_to_see = RP;
        for (long spins = 0; left_to_see > 0 && spins < 100000000L; spins++) {
            for (int p = 0; p < RP; p++) {
                int flag = 0;
                if (seen[p])
                    continue;
                TCHECK(MPI_Parrived(r, p, &flag) == MPI_SUCCESS, "parrived");
                if (!flag)
                    continue;
                seen[p] = 1;
                left_to_see--;
                int bad = 0, per_r = n / RP;
                for (int i = p * per_r; i < (p + 1) * per_r; i++)
                    bad += in[i] != value(left, round, i);
                TCHECK(bad == 0, "ring per=%d round %d: partition %d has %d wrong ints", per,
                       round, p, bad);
            }
        }
        TCHECK(left_to_see == 0, "ring: %d partitions never arrived", left_to_see);
        MPI_Status st;
        TCHECK(MPI_Wait(&r, &st) == MPI_SUCCESS, "wait recv");
        TCHECK(st.MPI_SOURCE == left && st.MPI_TAG == 5, "status %d %d", st.MPI_SOURCE,
               st.MPI_TAG);
        int cnt = -1;
        MPI_Get_count(&st, MPI_INT, &cnt);
        TCHECK(cnt == n, "count %d", cnt);
        TCHECK(MPI_Wait(&s, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait send");
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += in[i] != value(left, round, i);
        TCHECK(bad == 0, "ring per=%d round %d: %d wrong ints", per, round, bad);
    }
    MPI_Request_free(&s);
    MPI_Request_free(&r);
    free(out);
    free(in);
}

/* One process's threads fill one partitioned send. */
static void shared(int rank, int per)
{
    int idx = rank - first;
    int sender = first, receiver_idx = 1;
    /* The sending rank of process q is its first; it sends to local index 1 of the next
     * process (of this one when alone); that rank receives from the previous process. */
    int dest = (first + nt + 1) % total;
    int n = SP * per;
    MPI_Request r = MPI_REQUEST_NULL;
    int *in = NULL;
    if (idx == 0) {
        shared_buf = calloc(n, sizeof(int));
        TCHECK(MPI_Psend_init(shared_buf, SP, per, MPI_INT, dest, 6, tc, MPI_INFO_NULL,
                              &shared_send) == MPI_SUCCESS,
               "psend_init");
    }
    if (idx == receiver_idx) {
        in = malloc(n * sizeof(int));
        int source = ((rank - 1 - nt) % total + total) % total;
        TCHECK(MPI_Precv_init(in, SP, per, MPI_INT, source, 6, tc, MPI_INFO_NULL, &r) ==
                   MPI_SUCCESS,
               "precv_init");
    }
    int fillers = nt - 1, slot = idx == 0 ? 0 : idx - 1; /* every thread but the receiver */
    for (int round = 0; round < ROUNDS; round++) {
        if (idx == 0)
            MPI_Start(&shared_send);
        if (idx == receiver_idx) {
            for (int i = 0; i < n; i++)
                in[i] = -1;
            MPI_Start(&r);
        }
        MPI_Barrier(tc);
        if (idx != receiver_idx) {
            /* Descending, the filler's own partitions (p % fillers == slot). */
            for (int p = SP - 1; p >= 0; p--) {
                if (p % fillers != slot)
                    continue;
                for (int i = p * per; i < (p + 1) * per; i++)
                    shared_buf[i] = value(sender, round, i);
                TCHECK(MPI_Pready(p, shared_send) == MPI_SUCCESS, "pready %d", p);
            }
        } else {
            int source = ((rank - 1 - nt) % total + total) % total;
            int seen[SP] = {0}, left_to_see = SP;
            for (long spins = 0; left_to_see > 0 && spins < 100000000L; spins++) {
                for (int p = 0; p < SP; p++) {
                    int flag = 0;
                    if (seen[p])
                        continue;
                    MPI_Parrived(r, p, &flag);
                    if (!flag)
                        continue;
                    seen[p] = 1;
                    left_to_see--;
                    int bad = 0;
                    for (int i = p * per; i < (p + 1) * per; i++)
                        bad += in[i] != value(source, round, i);
                    TCHECK(bad == 0, "shared round %d: partition %d has %d wrong ints", round, p,
                           bad);
                }
            }
            TCHECK(left_to_see == 0, "shared: %d partitions never arrived", left_to_see);
            TCHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait recv");
        }
        MPI_Barrier(tc);
        if (idx == 0)
            TCHECK(MPI_Wait(&shared_send, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait send");
        MPI_Barrier(tc); /* the buffer is rewritten next round */
    }
    if (idx == 0) {
        MPI_Request_free(&shared_send);
        free(shared_buf);
    }
    if (idx == receiver_idx) {
        MPI_Request_free(&r);
        free(in);
    }
}

static int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

static void misc(int rank)
{
    /* MPI_PROC_NULL: both complete. */
    int buf[4];
    MPI_Request s, r;
    MPI_Psend_init(buf, 2, 2, MPI_INT, MPI_PROC_NULL, 1, tc, MPI_INFO_NULL, &s);
    MPI_Precv_init(buf, 2, 2, MPI_INT, MPI_PROC_NULL, 1, tc, MPI_INFO_NULL, &r);
    MPI_Start(&s);
    MPI_Start(&r);
    MPI_Pready_range(0, 1, s);
    int flag = 0;
    MPI_Parrived(r, 1, &flag);
    TCHECK(flag == 1, "proc_null parrived %d", flag);
    TCHECK(MPI_Wait(&s, MPI_STATUS_IGNORE) == MPI_SUCCESS, "proc_null send");
    TCHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS, "proc_null recv");
    /* A rank out of range is refused. */
    MPI_Request bad = MPI_REQUEST_NULL;
    TCHECK(err_class(MPI_Psend_init(buf, 2, 2, MPI_INT, total, 1, tc, MPI_INFO_NULL, &bad)) ==
               MPI_ERR_RANK,
           "bad dest");
    /* Finish refuses while a partitioned request lives. */
    TCHECK(err_class(MPIX_Threadcomm_finish(tc)) == MPI_ERR_PENDING, "finish with a live request");
    MPI_Request_free(&s);
    MPI_Request_free(&r);

    /* The partitioned traffic is invisible to user receives: a partitioned send (its hello
     * and data) and then a plain message; MPI_ANY_TAG receives the plain one. */
    int right = (rank + 1) % total, left = (rank + total - 1) % total;
    int pout[2] = {rank, rank + 1}, pin[2] = {-1, -1}, plain = rank * 3, got = -1;
    MPI_Psend_init(pout, 1, 2, MPI_INT, right, 3, tc, MPI_INFO_NULL, &s);
    MPI_Start(&s);
    MPI_Pready(0, s);
    MPI_Send(&plain, 1, MPI_INT, right, 4, tc);
    MPI_Status st;
    MPI_Recv(&got, 1, MPI_INT, left, MPI_ANY_TAG, tc, &st);
    TCHECK(got == left * 3 && st.MPI_TAG == 4, "any_tag got %d tag %d", got, st.MPI_TAG);
    MPI_Precv_init(pin, 1, 2, MPI_INT, left, 3, tc, MPI_INFO_NULL, &r);
    MPI_Start(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    TCHECK(pin[0] == left && pin[1] == left + 1, "late precv got %d %d", pin[0], pin[1]);
    MPI_Request_free(&s);
    MPI_Request_free(&r);
}

static void region(void *unused)
{
    (void)unused;
    TCHECK(MPIX_Threadcomm_start(tc) == MPI_SUCCESS, "start");
    int rank = -1;
    MPI_Comm_rank(tc, &rank);
    ring(rank, 4);         /* 16 B partitions: copied */
    ring(rank, 1 << 14);   /* 64 KiB partitions: the receiver copies from the sender */
    shared(rank, 8);
    shared(rank, 1 << 14);
    misc(rank);
    TCHECK(MPIX_Threadcomm_finish(tc) == MPI_SUCCESS, "finish");
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_rank(MPI_COMM_WORLD, &me_proc);
    nt = argc > 1 ? atoi(argv[1]) : 4;
    total = nt * nprocs;
    first = nt * me_proc;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK_INT(MPIX_Threadcomm_init(MPI_COMM_WORLD, nt, &tc), MPI_SUCCESS);
    for (int i = 0; i < 2; i++)
        run_threads(nt, region, NULL);
    CHECK_INT(atomic_load(&errors_in_threads), 0);
    CHECK_INT(MPIX_Threadcomm_free(&tc), MPI_SUCCESS);
    MPI_Finalize();
    if (wtest_errs == 0 && me_proc == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
