/* The windows of the RMA benchmarks (rma_seed004.c, rma_notify_instructions.c): `bytes`
 * bytes with displacement unit `unit`, from MPI_Win_allocate, or (create) MPI_Win_create
 * over MPI_Alloc_mem memory; `info` may name keys such as mpi_win_scope. The memory is at
 * *base; bench_window_free frees both. */
#ifndef RMA_WINDOW_H
#define RMA_WINDOW_H
#include <mpi.h>

static inline MPI_Win bench_window(int create, MPI_Aint bytes, int unit, MPI_Info info, void *base)
{
    MPI_Win win;
    if (create) {
        MPI_Alloc_mem(bytes, MPI_INFO_NULL, base);
        MPI_Win_create(*(void **)base, bytes, unit, info, MPI_COMM_WORLD, &win);
    } else {
        MPI_Win_allocate(bytes, unit, info, MPI_COMM_WORLD, base, &win);
    }
    return win;
}

/* A window's scope info: mpi_win_scope=`scope` (free it with MPI_Info_free). */
static inline MPI_Info bench_scope_info(const char *scope)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_win_scope", scope);
    return info;
}

static inline void bench_window_free(int create, MPI_Win *win, void *base)
{
    MPI_Win_free(win);
    if (create)
        MPI_Free_mem(base);
}
#endif
