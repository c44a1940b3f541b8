/* Startup probe for bench/startup.py: a hello that times MPI_Init and MPI_Finalize.
 *
 * Every rank prints one line on stdout:
 *   STARTUP rank=R size=N main=T0 init=T1 init_end=T2 fin=T3 fin_end=T4
 * with CLOCK_MONOTONIC readings in nanoseconds (the clock Python's time.monotonic_ns() reads,
 * so the script can place them against the launcher's start and exit): T0 on entering main,
 * T1/T2 around MPI_Init, T3/T4 around MPI_Finalize. Nothing MPI-specific is used to measure,
 * so the same source builds unchanged with every MPI's mpicc.
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long long t_main = now_ns();
    long long t_init = now_ns();
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 2;
    long long t_init_end = now_ns();

    int rank = -1, size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    long long t_fin = now_ns();
    if (MPI_Finalize() != MPI_SUCCESS)
        return 3;
    long long t_fin_end = now_ns();

    printf("STARTUP rank=%d size=%d main=%lld init=%lld init_end=%lld fin=%lld fin_end=%lld\n",
           rank, size, t_main, t_init, t_init_end, t_fin, t_fin_end);
    fflush(stdout);
    return 0;
}
