/* Pack benchmark: one face of a 3-D array of doubles with a halo, (N+2)^3, the interior
 * of plane z = 1: a 2-level strided vector (inner: N doubles at stride N+2, outer: N of
 * those at stride (N+2)^2 doubles). Times MPI_Pack of that type against a hand-written C
 * loop doing the same copy, in the same program. Prints: "pack N BYTES mpi_ns loop_ns". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

#define REPS 41

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 128;
    long m = n + 2;
    double *a = malloc(sizeof(double) * m * m * m);
    for (long i = 0; i < m * m * m; i++)
        a[i] = (double)i;
    double *out = malloc(sizeof(double) * n * n), *ref = malloc(sizeof(double) * n * n);
    MPI_Datatype row, face;
    MPI_Type_vector(n, 1, (int)m, MPI_DOUBLE, &row);
    MPI_Type_create_hvector(n, 1, (MPI_Aint)(m * m * sizeof(double)), row, &face);
    MPI_Type_commit(&face);
    const double *base = a + m * m + m + 1; /* x=1, y=1, z=1 */
    double t_mpi[REPS], t_loop[REPS];
    volatile double sink = 0;
    for (int r = 0; r < REPS; r++) {
        int pos = 0;
        double t0 = now_ns();
        MPI_Pack(base, 1, face, out, (int)(sizeof(double) * n * n), &pos, MPI_COMM_SELF);
        double t1 = now_ns();
        double *o = ref;
        for (long x = 0; x < n; x++) {
            const double *p = base + x * m * m;
            for (long y = 0; y < n; y++)
                *o++ = p[y * m];
        }
        double t2 = now_ns();
        sink += out[r % (n * n)] + ref[r % (n * n)];
        t_mpi[r] = t1 - t0;
        t_loop[r] = t2 - t1;
    }
    if (memcmp(out, ref, sizeof(double) * n * n) != 0) {
        fprintf(stderr, "pack: MPI_Pack result differs from the loop\n");
        return 1;
    }
    qsort(t_mpi, REPS, sizeof(double), cmp);
    qsort(t_loop, REPS, sizeof(double), cmp);
    printf("pack %d %ld %.0f %.0f\n", n, (long)(sizeof(double) * n * n), t_mpi[REPS / 2], t_loop[REPS / 2]);
    (void)sink;
    MPI_Type_free(&face);
    MPI_Type_free(&row);
    free(a);
    free(out);
    free(ref);
    MPI_Finalize();
    return 0;
}
