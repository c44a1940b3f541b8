/* Back-to-back collectives on a thread communicator whose sizes cross the one-process rounds'
 * inline limit (64 bytes: 16 ints inline, 17 ints and 300 ints not), with rotating roots and
 * no synchronisation between calls (ranks run several rounds ahead of each other), and a
 * non-commutative user op that shows the combination order. Every result is checked.
 *   ./rounds [threads] [iters]   (defaults 3, 400) */
#include "wtest.h"
#include "threads.h"
#include "tcheck.h"

#define MAXC 300

static MPI_Comm tc;
static MPI_Op digits;
static int nt = 3, iters = 400;
static const int counts[] = {1, 16, 17, MAXC};

/* inout = in "followed by" inout: ranks' digits in rank order (not commutative). */
static void digits_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++) {
        int b = ((int *)inout)[i], scale = 1;
        while (scale <= b)
            scale *= 10;
        ((int *)inout)[i] = ((int *)in)[i] * scale + b;
    }
}

/* The digits 1..k, i.e. 12..k (ranks 0..k-1 contributing rank + 1). */
static int digits_upto(int k)
{
    int v = 0;
    for (int d = 1; d <= k; d++)
        v = v * 10 + d;
    return v;
}

static void region(void *unused)
{
    (void)unused;
    int r = -1;
    static _Thread_local int v[MAXC], s[MAXC], big[MAXC * 8];
    MPIX_Threadcomm_start(tc);
    MPI_Comm_rank(tc, &r);
    for (int i = 0; i < iters; i++) {
        int c = counts[i % 4], root = i % nt;
        for (int k = 0; k < c; k++)
            v[k] = r * 1000 + k + i;
        int sum0 = nt * (nt - 1) / 2 * 1000 + nt * i;

        MPI_Allreduce(v, s, c, MPI_INT, MPI_SUM, tc);
        for (int k = 0; k < c; k++)
            TEXPECT(s[k] == sum0 + nt * k);

        for (int k = 0; k < c; k++)
            s[k] = -1;
        MPI_Reduce(v, s, c, MPI_INT, MPI_SUM, root, tc);
        for (int k = 0; k < c; k++)
            TEXPECT(r == root ? s[k] == sum0 + nt * k : s[k] == -1);

        for (int k = 0; k < c; k++)
            s[k] = r == root ? i + k : -1;
        MPI_Bcast(s, c, MPI_INT, root, tc);
        for (int k = 0; k < c; k++)
            TEXPECT(s[k] == i + k);

        for (int k = 0; k < c; k++)
            v[k] = r + 1;
        MPI_Reduce(v, s, c, MPI_INT, digits, root, tc);
        if (r == root)
            for (int k = 0; k < c; k++)
                TEXPECT(s[k] == digits_upto(nt));
        MPI_Scan(v, s, c, MPI_INT, digits, tc);
        for (int k = 0; k < c; k++)
            TEXPECT(s[k] == digits_upto(r + 1));
        for (int k = 0; k < c; k++)
            s[k] = -7;
        MPI_Exscan(v, s, c, MPI_INT, digits, tc);
        for (int k = 0; k < c; k++)
            TEXPECT(r == 0 ? s[k] == -7 : s[k] == digits_upto(r));

        /* Every rank's block of c ints, rank-tagged. */
        for (int k = 0; k < c; k++)
            v[k] = r * 100000 + i * 10 + k % 10;
        MPI_Allgather(v, c, MPI_INT, big, c, MPI_INT, tc);
        for (int p = 0; p < nt; p++)
            for (int k = 0; k < c; k++)
                TEXPECT(big[p * c + k] == p * 100000 + i * 10 + k % 10);
        for (int k = 0; k < nt * c; k++)
            big[k] = r == root ? k + i : -1;
        MPI_Scatter(big, c, MPI_INT, s, c, MPI_INT, root, tc);
        for (int k = 0; k < c; k++)
            TEXPECT(s[k] == r * c + k + i);
    }
    MPIX_Threadcomm_finish(tc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc > 1)
        nt = atoi(argv[1]);
    if (argc > 2)
        iters = atoi(argv[2]);
    if (nt < 1 || nt > 8) {
        FAIL("threads=%d: 1 to 8 are supported", nt);
        return 1;
    }
    MPI_Op_create(digits_fn, 0, &digits);
    MPIX_Threadcomm_init(MPI_COMM_SELF, nt, &tc);
    run_threads(nt, region, NULL);
    CHECK_INT(atomic_load(&errors_in_threads), 0);
    MPIX_Threadcomm_free(&tc);
    MPI_Op_free(&digits);
    MPI_Finalize();
    if (wtest_errs == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
