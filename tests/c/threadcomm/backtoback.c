/* Back-to-back small collectives on a thread communicator with no synchronisation between
 * them (MPICH 5.0.2 hangs after a few thousand MPI_Reduce calls): ITERS rounds of
 * MPI_Reduce, MPI_Allreduce and MPI_Bcast with every result checked.
 *   ./backtoback [iters] [threads]   (defaults 1000000, 2) */
#include "wtest.h"
#include "threads.h"
#include <stdatomic.h>

static MPI_Comm tc;
static int iters = 1000000, nt = 2;
static atomic_int wrong;

static void region(void *unused)
{
    (void)unused;
    int r = -1;
    MPIX_Threadcomm_start(tc);
    MPI_Comm_rank(tc, &r);
    int base = nt * (nt - 1) / 2;
    for (int i = 0; i < iters; i++) {
        int v = r + (i & 1023), s = -1, root = i % nt;
        MPI_Reduce(&v, &s, 1, MPI_INT, MPI_SUM, root, tc);
        if (r == root && s != nt * (i & 1023) + base)
            atomic_fetch_add(&wrong, 1);
        MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, tc);
        if (s != nt * (i & 1023) + base)
            atomic_fetch_add(&wrong, 1);
        int b = r == root ? i : -1;
        MPI_Bcast(&b, 1, MPI_INT, root, tc);
        if (b != i)
            atomic_fetch_add(&wrong, 1);
    }
    MPIX_Threadcomm_finish(tc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc > 1)
        iters = atoi(argv[1]);
    if (argc > 2)
        nt = atoi(argv[2]);
    MPIX_Threadcomm_init(MPI_COMM_SELF, nt, &tc);
    run_threads(nt, region, NULL);
    CHECK_INT(atomic_load(&wrong), 0);
    MPIX_Threadcomm_free(&tc);
    MPI_Finalize();
    if (wtest_errs == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
