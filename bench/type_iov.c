/* MPIX_Type_iov random access: a 1e6-block indexed type (blocks of 1-3 ints, gaps between
 * them); the cost of fetching segment 0 and segment 999999 (one segment per call), median
 * of many calls. Prints: "iov K ns_per_call" for K = 0, 500000, 999999. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int nb = 1000000;
    int *bl = malloc(nb * sizeof(int)), *di = malloc(nb * sizeof(int));
    for (int i = 0; i < nb; i++) {
        bl[i] = 1 + i % 3;
        di[i] = 4 * i;
    }
    MPI_Datatype t;
    MPI_Type_indexed(nb, bl, di, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Count len, bytes, got;
    /* MPICH 5.0.2 rejects max_iov_bytes = -1; a bound above the size means the same. */
    MPIX_Type_iov_len(t, (MPI_Count)1 << 40, &len, &bytes);
    if (len != nb) {
        fprintf(stderr, "type_iov: %lld segments, expected %d\n", (long long)len, nb);
        return 1;
    }
    MPI_Count ks[3] = {0, nb / 2, nb - 1};
    for (int j = 0; j < 3; j++) {
        MPIX_Iov iov;
        double samples[15];
        double t0 = now_ns();
        MPIX_Type_iov(t, ks[j], &iov, 1, &got);
        double one = now_ns() - t0;
        int calls = one > 1e6 ? 1 : one > 1e4 ? 20 : 2000;
        for (int s = 0; s < 15; s++) {
            double t0 = now_ns();
            for (int c = 0; c < calls; c++)
                MPIX_Type_iov(t, ks[j], &iov, 1, &got);
            samples[s] = (now_ns() - t0) / calls;
        }
        if (got != 1 || (MPI_Aint)iov.iov_base != 16 * (MPI_Aint)ks[j]) {
            fprintf(stderr, "type_iov: wrong segment %lld\n", (long long)ks[j]);
            return 1;
        }
        qsort(samples, 15, sizeof(double), cmp);
        printf("iov %lld %.1f\n", (long long)ks[j], samples[7]);
    }
    MPI_Type_free(&t);
    free(bl);
    free(di);
    MPI_Finalize();
    return 0;
}
