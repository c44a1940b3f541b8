/* An integer sum as a user op, and the sums it gives over ranks (commute_differs.c,
 * opkinds.c): every rank contributes buf[i] = i + rank. */
#ifndef WEFT_TEST_ISUM_H
#define WEFT_TEST_ISUM_H
#include <mpi.h>

static void isum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *x = in, *y = inout;
    for (int i = 0; i < *len; i++)
        y[i] += x[i];
}

/* Element i of the sum over ranks lo..hi of buf. */
static int sum_of(int i, int lo, int hi)
{
    return (hi - lo + 1) * i + (lo + hi) * (hi - lo + 1) / 2;
}

/* Whether out[0..n) holds elements off.. of the sum over ranks lo..hi. */
static int all_equal(const int *out, int n, int lo, int hi, int off)
{
    for (int i = 0; i < n; i++)
        if (out[i] != sum_of(i + off, lo, hi))
            return 0;
    return 1;
}
#endif
