/* Seed 001's listings as a test (OpenMP): the rank printout (listing 1), MPI_Barrier in place
 * of `#pragma omp barrier` (listing 3) and MPI_Reduce against an OpenMP array reduction
 * (listing 4), with their results checked. */
#include "wtest.h"
#include <omp.h>
#include <stdatomic.h>

#define NT 4
#define N 64

int main(void)
{
    MPI_Comm threadcomm;
    MPI_Init(NULL, NULL);
    MPIX_Threadcomm_init(MPI_COMM_WORLD, NT, &threadcomm);
    atomic_int bad = 0;
#pragma omp parallel num_threads(NT)
    {
        if (omp_get_num_threads() != NT)
            atomic_fetch_add(&bad, 1);
        int rank, size;
        MPIX_Threadcomm_start(threadcomm);
        MPI_Comm_size(threadcomm, &size);
        MPI_Comm_rank(threadcomm, &rank);
        printf("  Rank %d / %d\n", rank, size);
        MPIX_Threadcomm_finish(threadcomm);
    }

    /* Listing 3: after MPI_Barrier every thread sees what every other wrote before it. */
    atomic_int arrived = 0;
#pragma omp parallel num_threads(NT)
    {
        MPIX_Threadcomm_start(threadcomm);
        atomic_fetch_add(&arrived, 1);
        MPI_Barrier(threadcomm);
        if (atomic_load(&arrived) != NT)
            atomic_fetch_add(&bad, 1);
        MPIX_Threadcomm_finish(threadcomm);
    }

    /* Listing 4: the same sums both ways. */
    int sum[N], omp_sum[N];
    for (int i = 0; i < N; i++)
        omp_sum[i] = 0;
#pragma omp parallel num_threads(NT)
    {
        MPIX_Threadcomm_start(threadcomm);
        int my[N];
        int tid = omp_get_thread_num();
        for (int i = 0; i < N; i++)
            my[i] = tid + i;
        MPI_Reduce(my, sum, N, MPI_INT, MPI_SUM, 0, threadcomm);
        MPIX_Threadcomm_finish(threadcomm);
    }
#pragma omp parallel num_threads(NT) reduction(+ : omp_sum[:N])
    {
        int tid = omp_get_thread_num();
        for (int i = 0; i < N; i++)
            omp_sum[i] = tid + i;
    }
    for (int i = 0; i < N; i++)
        CHECK(sum[i] == omp_sum[i] && sum[i] == NT * (NT - 1) / 2 + NT * i,
              "sum[%d] = %d, OpenMP %d", i, sum[i], omp_sum[i]);
    CHECK_INT(atomic_load(&bad), 0);
    MPIX_Threadcomm_free(&threadcomm);
    MPI_Finalize();
    if (wtest_errs == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
