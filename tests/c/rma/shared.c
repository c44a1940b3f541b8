/* MPI_Win_allocate_shared: contiguous by default (rank r's memory follows rank r-1's),
 * alloc_shared_noncontig honoured, shared_query gives addresses every process can load and
 * store, MPI_PROC_NULL names the first rank with memory, MPI_Win_sync + barrier order them;
 * attributes; zero-size ranks; passive-target reads while the target computes outside MPI. */
#include "wtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_rank = rank;
    for (int noncontig = 0; noncontig < 2; noncontig++) {
        MPI_Info info = MPI_INFO_NULL;
        if (noncontig) {
            MPI_Info_create(&info);
            MPI_Info_set(info, "alloc_shared_noncontig", "true");
        }
        int n = rank == 0 ? 0 : 10 * rank; /* rank 0 has none */
        int *mine;
        MPI_Win win;
        MPI_Win_allocate_shared(n * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &mine, &win);
        for (int i = 0; i < n; i++)
            mine[i] = rank * 100 + i;
        MPI_Win_sync(win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_sync(win);
        for (int r = 0; r < size; r++) {
            MPI_Aint sz;
            int du;
            int *p;
            MPI_Win_shared_query(win, r, &sz, &du, &p);
            CHECK_INT(sz, r == 0 ? 0 : 10 * r * (int)sizeof(int));
            CHECK_INT(du, sizeof(int));
            if (r == 0)
                CHECK(p == NULL, "a rank without memory has no address");
            for (int i = 0; i < sz / (int)sizeof(int); i++)
                CHECK(p[i] == r * 100 + i, "noncontig=%d rank %d elem %d = %d", noncontig, r, i, p[i]);
            if (!noncontig && r > 1) {
                int *prev;
                MPI_Win_shared_query(win, r - 1, &sz, &du, &prev);
                CHECK(prev + sz / sizeof(int) == p, "rank %d's memory follows rank %d's", r, r - 1);
            }
        }
        if (size > 1) {
            MPI_Aint sz;
            int du, *p, *p1;
            MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &p);
            MPI_Win_shared_query(win, 1, &sz, &du, &p1);
            CHECK(p == p1, "MPI_PROC_NULL names rank 1, the first with memory");
        }
        int *flavor, flag;
        MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
        CHECK(flag && *flavor == MPI_WIN_FLAVOR_SHARED, "flavor");
        int *model;
        MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
        CHECK(flag && *model == MPI_WIN_UNIFIED, "model");
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_free(&win);
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
    }

    /* Passive target: rank 0 sleeps outside MPI while the others read and write its memory. */
    for (int created = 0; created < 2; created++) {
        int *base, *mem = NULL;
        MPI_Win win;
        if (created) {
            mem = calloc(4, sizeof(int));
            base = mem;
            MPI_Win_create(base, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        } else {
            MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
            memset(base, 0, 4 * sizeof(int));
        }
        base[0] = 42;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            usleep(500000);
        } else {
            double t0 = MPI_Wtime();
            int v = 0;
            for (int i = 0; i < 100; i++) {
                MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
                MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
                MPI_Win_unlock(0, win);
            }
            double dt = MPI_Wtime() - t0;
            CHECK_INT(v, 42);
            CHECK(dt < 0.25, "100 passive gets took %.3f s while the target slept", dt);
            int one = 1;
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Accumulate(&one, 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_SUM, win);
            MPI_Win_unlock(0, win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            CHECK_INT(base[1], size - 1);
        MPI_Win_free(&win);
        free(mem);
    }
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
