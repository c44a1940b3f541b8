/* Memory per communicator: proportional set size (PSS, /proc/self/smaps_rollup) of each rank
 * before and after creating N duplicates of MPI_COMM_WORLD with one small MPI_Allreduce on
 * each (so every duplicate sets up whatever its collectives need). Prints, from rank 0:
 *   COMM_MEM ranks=<n> comms=<N> pss_kb_per_comm_per_rank=<average over ranks> max=<worst rank>
 * Usage: comm_mem [N] (default 100). Standard MPI only (Linux). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long pss_kb(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long kb = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "Pss:", 4)) {
            kb = atol(line + 4);
            break;
        }
    fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm *comms = malloc(n * sizeof(MPI_Comm));
    /* Warm up: one duplicate with a collective, freed, so first-use costs are not counted. */
    MPI_Comm warm;
    double x = rank, y;
    MPI_Comm_dup(MPI_COMM_WORLD, &warm);
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, warm);
    MPI_Comm_free(&warm);
    MPI_Barrier(MPI_COMM_WORLD);
    long before = pss_kb();
    for (int i = 0; i < n; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comms[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long after = pss_kb();
    /* Nobody unmaps shared pages (freeing its communicators) before every rank has read its
     * PSS: a shared page's share grows as its other mappers go. */
    MPI_Barrier(MPI_COMM_WORLD);
    double mine = (double)(after - before) / n, sum = 0, worst = 0;
    MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("COMM_MEM ranks=%d comms=%d pss_kb_per_comm_per_rank=%.2f max=%.2f\n", size, n,
               sum / size, worst);
    for (int i = 0; i < n; i++)
        MPI_Comm_free(&comms[i]);
    free(comms);
    MPI_Finalize();
    return 0;
}
