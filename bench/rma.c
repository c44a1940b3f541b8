/* RMA latency and bandwidth, 2 ranks: rank 0 is the origin, rank 1 the target. Each line:
 * "<name> <value>" (microseconds per operation, or MiB/s for bandwidth rows).
 *
 *   put_flush_<kind>   8-byte MPI_Put + MPI_Win_flush under MPI_Win_lock_all
 *   get_<kind>         8-byte MPI_Get + MPI_Win_flush
 *   acc_<kind>         8-byte MPI_Accumulate(MPI_SUM) + MPI_Win_flush
 *   fop_<kind>         MPI_Fetch_and_op on a long + flush
 *   cas_<kind>         MPI_Compare_and_swap on a long + flush
 *   putbw_<kind>       4 MiB MPI_Put + flush, MiB/s
 *   passive_<kind>     a get loop (lock/get/unlock x 100) while the target sleeps 2 s outside
 *                      MPI: milliseconds for the whole loop
 * <kind>: alloc (MPI_Win_allocate), create (MPI_Win_create), dynamic (create_dynamic+attach).
 * Usage: mpiexec -n 2 rma [iterations] [passive(0/1)] [kinds, default alloc,create,dynamic]
 * (windows spanning nodes: alloc,create). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BIG (4 << 20)

static int rank, iters = 20000, passive = 1;

static void bench(const char *kind)
{
    MPI_Win win;
    char *base = NULL, *mem = NULL;
    MPI_Aint tdisp = 0;
    if (!strcmp(kind, "alloc")) {
        MPI_Win_allocate(BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    } else if (!strcmp(kind, "create")) {
        MPI_Alloc_mem(BIG, MPI_INFO_NULL, &mem);
        base = mem;
        MPI_Win_create(base, BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else {
        MPI_Alloc_mem(BIG, MPI_INFO_NULL, &mem);
        base = mem;
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        MPI_Win_attach(win, base, BIG);
        MPI_Get_address(base, &tdisp);
        MPI_Bcast(&tdisp, 1, MPI_AINT, 1, MPI_COMM_WORLD);
    }
    memset(base, 0, BIG);
    char *src = malloc(BIG);
    memset(src, 1, BIG);
    long v = 1, r = 0, cmp = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        double t;
        MPI_Win_lock_all(0, win);
/* Warm-up: at least iters/10 operations and 50 ms, so that the first row does not pay for \
 * the core's climb out of a slower state (the 2-core machine drifts between two speeds). */ \
#define ROW(name, op)                                                                    \
    t = MPI_Wtime();                                                                     \
    for (int i = 0; i < iters / 10 || MPI_Wtime() - t < 0.05; i++) {                     \
        op;                                                                              \
        MPI_Win_flush(1, win);                                                           \
    }                                                                                    \
    t = MPI_Wtime();                                                                     \
    for (int i = 0; i < iters; i++) {                                                    \
        op;                                                                              \
        MPI_Win_flush(1, win);                                                           \
    }                                                                                    \
    printf("%s_%s %.3f\n", name, kind, (MPI_Wtime() - t) * 1e6 / iters);
        ROW("put_flush", MPI_Put(&v, 1, MPI_LONG, 1, tdisp, 1, MPI_LONG, win));
        ROW("get", MPI_Get(&r, 1, MPI_LONG, 1, tdisp, 1, MPI_LONG, win));
        ROW("acc", MPI_Accumulate(&v, 1, MPI_LONG, 1, tdisp, 1, MPI_LONG, MPI_SUM, win));
        ROW("fop", MPI_Fetch_and_op(&v, &r, MPI_LONG, 1, tdisp, MPI_SUM, win));
        ROW("cas", MPI_Compare_and_swap(&v, &cmp, &r, MPI_LONG, 1, tdisp, win));
        int reps = 50;
        t = MPI_Wtime();
        for (int i = 0; i < reps; i++) {
            MPI_Put(src, BIG, MPI_BYTE, 1, tdisp, BIG, MPI_BYTE, win);
            MPI_Win_flush(1, win);
        }
        printf("putbw_%s %.1f\n", kind, (double)BIG * reps / (MPI_Wtime() - t) / (1 << 20));
        MPI_Win_unlock_all(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (passive) {
        if (rank == 1) {
            sleep(2);
        } else {
            double t = MPI_Wtime();
            for (int i = 0; i < 100; i++) {
                MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
                MPI_Get(&r, 1, MPI_LONG, 1, tdisp, 1, MPI_LONG, win);
                MPI_Win_unlock(1, win);
            }
            printf("passive_%s %.3f\n", kind, (MPI_Wtime() - t) * 1e3);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (!strcmp(kind, "dynamic"))
        MPI_Win_detach(win, base);
    MPI_Win_free(&win);
    if (mem)
        MPI_Free_mem(mem);
    free(src);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc > 1)
        iters = atoi(argv[1]);
    if (argc > 2)
        passive = atoi(argv[2]);
    const char *kinds = argc > 3 ? argv[3] : "alloc,create,dynamic";
    if (strstr(kinds, "alloc"))
        bench("alloc");
    if (strstr(kinds, "create"))
        bench("create");
    if (strstr(kinds, "dynamic"))
        bench("dynamic");
    MPI_Finalize();
    return 0;
}
