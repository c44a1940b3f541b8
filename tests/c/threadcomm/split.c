/* MPI_Comm_split and MPI_Comm_split_type of a thread communicator inside its region
 * (docs/threadcomm.md): collective over its thread ranks; each colour's new thread
 * communicator holds its ranks in key order (then old rank order), is born active, carries
 * its own traffic and collectives, inherits the errhandler, and is freed with MPI_Comm_free
 * before finish. Run on one or several processes with argv[1] threads each (at least 2 in
 * all). Checked, each round:
 *  - colour rank % 3 with key -rank on one process (reverse order), key rank on several;
 *    the new rank and size, an allreduce of the old ranks, a ring of sends, a bcast;
 *  - MPI_UNDEFINED gives MPI_COMM_NULL (rank 0 here), the others still split;
 *  - a split of the split (nested), freed first;
 *  - MPI_COMM_TYPE_SHARED: one communicator per process, the process's threads;
 *  - on several processes, keys that put a later process's rank first: refused on every
 *    rank with MPI_ERR_UNSUPPORTED_OPERATION and MPI_COMM_NULL, the region goes on. */
#include "wtest.h"
#include "threads.h"
#include "tcheck.h"
#include <stdlib.h>

static MPI_Comm tc;
static int nprocs, nt;

/* Traffic and collectives on `c`, whose old ranks (in tc) are `olds` in new rank order. */
static void traffic(MPI_Comm c, const int *olds, int n, int round)
{
    int r = -1, s = -1, flag = 0;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &s);
    TEXPECT(s == n && r >= 0 && r < n);
    TEXPECT(MPIX_Comm_test_threadcomm(c, &flag) == MPI_SUCCESS && flag == 1);
    int old = -1;
    MPI_Comm_rank(tc, &old);
    TEXPECT(olds[r] == old);
    int sum = -1, want = 0;
    for (int i = 0; i < n; i++)
        want += olds[i];
    TEXPECT(MPI_Allreduce(&old, &sum, 1, MPI_INT, MPI_SUM, c) == MPI_SUCCESS && sum == want);
    int right = (r + 1) % n, left = (r + n - 1) % n, in = -1, out = 1000 * old + round;
    MPI_Status st;
    TEXPECT(MPI_Sendrecv(&out, 1, MPI_INT, right, 4, &in, 1, MPI_INT, left, 4, c, &st) ==
            MPI_SUCCESS);
    TEXPECT(in == 1000 * olds[left] + round && st.MPI_SOURCE == left);
    int b = r == n - 1 ? 77 + round : -1;
    TEXPECT(MPI_Bcast(&b, 1, MPI_INT, n - 1, c) == MPI_SUCCESS && b == 77 + round);
    TEXPECT(MPI_Barrier(c) == MPI_SUCCESS);
    /* The errhandler came with it: a bad rank returns, no abort. */
    TEXPECT(err_class(MPI_Send(&out, 1, MPI_INT, n, 0, c)) == MPI_ERR_RANK);
}

/* The old ranks of colour `color` in new rank order, for the split by colour rank % 3 and
 * key `rev ? -rank : rank` with rank 0 passing MPI_UNDEFINED. */
static int members(int color, int size, int rev, int *olds)
{
    int n = 0;
    for (int k = 0; k < size; k++) {
        int i = rev ? size - 1 - k : k;
        if (i != 0 && i % 3 == color)
            olds[n++] = i;
    }
    return n;
}

static void region(void *arg)
{
    int round = *(int *)arg;
    TEXPECT(MPIX_Threadcomm_start(tc) == MPI_SUCCESS);
    int rank = -1, size = -1;
    MPI_Comm_rank(tc, &rank);
    MPI_Comm_size(tc, &size);
    MPI_Comm_set_errhandler(tc, MPI_ERRORS_RETURN);
    int rev = nprocs == 1, olds[64];

    MPI_Comm s = MPI_COMM_WORLD;
    int color = rank == 0 ? MPI_UNDEFINED : rank % 3;
    TEXPECT(MPI_Comm_split(tc, color, rev ? -rank : rank, &s) == MPI_SUCCESS);
    if (rank == 0) {
        TEXPECT(s == MPI_COMM_NULL);
    } else {
        TEXPECT(s != MPI_COMM_NULL && s != tc);
        int n = members(color, size, rev, olds);
        traffic(s, olds, n, round);
        /* A split of the split: new ranks by parity, same key order. */
        int r = -1;
        MPI_Comm_rank(s, &r);
        MPI_Comm t = MPI_COMM_NULL;
        TEXPECT(MPI_Comm_split(s, r % 2, r, &t) == MPI_SUCCESS && t != MPI_COMM_NULL);
        int sub[64], m = 0;
        for (int i = r % 2; i < n; i += 2)
            sub[m++] = olds[i];
        traffic(t, sub, m, round);
        TEXPECT(MPI_Comm_free(&t) == MPI_SUCCESS && t == MPI_COMM_NULL);
        TEXPECT(MPI_Comm_free(&s) == MPI_SUCCESS && s == MPI_COMM_NULL);
    }

    /* Shared memory: the threads of each process. */
    MPI_Comm sh = MPI_COMM_NULL;
    TEXPECT(MPI_Comm_split_type(tc, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &sh) ==
            MPI_SUCCESS);
    int first = rank - rank % nt; /* every process has nt threads here */
    for (int i = 0; i < nt; i++)
        olds[i] = first + i;
    traffic(sh, olds, nt, round);
    TEXPECT(MPI_Comm_free(&sh) == MPI_SUCCESS);
    MPI_Comm none = MPI_COMM_WORLD;
    TEXPECT(MPI_Comm_split_type(tc, MPI_UNDEFINED, 0, MPI_INFO_NULL, &none) == MPI_SUCCESS &&
            none == MPI_COMM_NULL);

    /* Reversed keys across processes: refused everywhere, nothing made. */
    if (nprocs > 1) {
        MPI_Comm bad = MPI_COMM_WORLD;
        TEXPECT(err_class(MPI_Comm_split(tc, 0, -rank, &bad)) == MPI_ERR_UNSUPPORTED_OPERATION);
        TEXPECT(bad == MPI_COMM_NULL);
    }
    /* Argument errors. */
    TEXPECT(err_class(MPI_Comm_split(tc, -3, 0, &s)) == MPI_ERR_ARG);
    TEXPECT(err_class(MPI_Comm_split(tc, 0, 0, NULL)) == MPI_ERR_ARG);
    TEXPECT(MPIX_Threadcomm_finish(tc) == MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    nt = argc > 1 ? atoi(argv[1]) : 4;
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_INT(MPIX_Threadcomm_init(MPI_COMM_WORLD, nt, &tc), MPI_SUCCESS);
    for (int round = 0; round < 20; round++)
        run_threads(nt, region, &round);
    CHECK_INT(atomic_load(&errors_in_threads), 0);
    /* Outside the region the thread communicator is refused. */
    MPI_Comm s;
    CHECK_INT(err_class(MPI_Comm_split(tc, 0, 0, &s)), MPI_ERR_COMM);
    CHECK_INT(MPIX_Threadcomm_free(&tc), MPI_SUCCESS);
    MPI_Finalize();
    if (wtest_errs == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
