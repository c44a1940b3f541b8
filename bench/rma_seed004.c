/* Seed 004's measurements (issue 18) on Weft's extensions, 2 ranks: rank 0 the origin,
 * rank 1 the target. Each line "<name> <microseconds>":
 *
 *   put_alloc          8-byte MPI_Put + MPI_Win_flush, MPI_Win_allocate window
 *   put_memhandle      the same through a window from MPIX_Win_from_memhandle (memory from
 *                      MPI_Alloc_mem attached to a dynamic window)
 *   put_dynamic        the same on the dynamic window itself
 *   flush_process_2t   8-byte put + flush per thread, 2 threads at once, mpi_win_scope=process
 *   flush_thread_2t    the same with mpi_win_scope=thread
 *   flush_*_busy       8-byte put + flush in one thread while another puts 1 MiB blocks
 *                      to the same target without a break, mpi_win_scope=process / thread:
 *                      a process-scope flush waits for the other thread's put in progress,
 *                      a thread-scope flush does not. Timed from the other thread's first
 *                      put on; the line also says how many 1 MiB puts it completed
 *                      meanwhile (the thread-scope rounds may all fit inside one)
 *   put_flush_pair     8-byte put + flush, per put (mpi_win_order=true window)
 *   put_ordered        8-byte puts without flushes (mpi_win_order=true), one flush at the end
 *   rt_put_flush_send  round trip: put + flush + send, answered the same way
 *   rt_notify          round trip: MPIX_Put_notify, answered by MPIX_Put_notify, each side
 *                      waiting with MPIX_Win_notify_request + MPI_Wait
 *   rt_*_create        the two round trips on an MPI_Win_create window (MPI_Alloc_mem memory)
 *
 * Usage: mpiexec -n 2 rma_seed004 [iterations] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rma_window.h"

#define BIG (4 << 20)

static int rank, iters = 20000;

static double put_flush_n(MPI_Win win, MPI_Aint disp, int n)
{
    long v = 1;
    for (int i = 0; i < n / 10; i++) {
        MPI_Put(&v, 1, MPI_LONG, 1, disp, 1, MPI_LONG, win);
        MPI_Win_flush(1, win);
    }
    double t = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Put(&v, 1, MPI_LONG, 1, disp, 1, MPI_LONG, win);
        MPI_Win_flush(1, win);
    }
    return (MPI_Wtime() - t) * 1e6 / n;
}

static double put_flush(MPI_Win win, MPI_Aint disp)
{
    return put_flush_n(win, disp, iters);
}

static void windows(void)
{
    MPI_Win alloc, dyn, hwin = MPI_WIN_NULL;
    char *abase, *mem;
    MPI_Aint addr;
    char h[MPIX_MAX_MEMHANDLE_SIZE];
    int hsize;
    MPI_Win_allocate(BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &abase, &alloc);
    MPI_Alloc_mem(BIG, MPI_INFO_NULL, &mem);
    memset(mem, 0, BIG);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
    MPI_Win_attach(dyn, mem, BIG);
    MPI_Get_address(mem, &addr);
    MPI_Bcast(&addr, 1, MPI_AINT, 1, MPI_COMM_WORLD);
    if (rank == 1)
        MPIX_Memhandle_create(mem, BIG, MPI_INFO_NULL, dyn, h, &hsize);
    MPI_Bcast(h, MPIX_MAX_MEMHANDLE_SIZE, MPI_BYTE, 1, MPI_COMM_WORLD);
    if (rank == 0) {
        MPIX_Win_from_memhandle(h, BIG, 1, MPI_INFO_NULL, 1, dyn, &hwin);
        MPI_Win_lock_all(0, alloc);
        printf("put_alloc %.3f\n", put_flush(alloc, 0));
        MPI_Win_unlock_all(alloc);
        MPI_Win_lock_all(0, dyn);
        printf("put_memhandle %.3f\n", put_flush(hwin, 0));
        printf("put_dynamic %.3f\n", put_flush(dyn, addr));
        MPI_Win_unlock_all(dyn);
        MPI_Win_free(&hwin);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1)
        MPIX_Memhandle_release(h, dyn);
    MPI_Win_detach(dyn, mem);
    MPI_Win_free(&dyn);
    MPI_Free_mem(mem);
    MPI_Win_free(&alloc);
}

struct job {
    MPI_Win win;
    int slot;
    double us;
};

static void *flusher(void *arg)
{
    struct job *j = arg;
    j->us = put_flush(j->win, j->slot);
    return NULL;
}

static void threads(const char *scope)
{
    long *base;
    MPI_Info info = bench_scope_info(scope);
    MPI_Win win = bench_window(0, 64 * sizeof(long), sizeof(long), info, &base);
    MPI_Info_free(&info);
    if (rank == 0) {
        MPI_Win_lock_all(0, win);
        struct job j[2] = {{win, 0, 0}, {win, 8, 0}};
        pthread_t t[2];
        for (int k = 0; k < 2; k++)
            pthread_create(&t[k], NULL, flusher, &j[k]);
        for (int k = 0; k < 2; k++)
            pthread_join(t[k], NULL);
        MPI_Win_unlock_all(win);
        printf("flush_%s_2t %.3f\n", scope, (j[0].us + j[1].us) / 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
}

/* One thread times 8-byte put + flush while another keeps putting 1 MiB blocks (its
 * operations in flight during the first one's flushes). */
static int busy_stop;
static long busy_puts;

static void *big_putter(void *arg)
{
    MPI_Win win = *(MPI_Win *)arg;
    static char block[1 << 20];
    while (!__atomic_load_n(&busy_stop, __ATOMIC_RELAXED)) {
        MPI_Put(block, sizeof block, MPI_BYTE, 1, 4096, sizeof block, MPI_BYTE, win);
        __atomic_add_fetch(&busy_puts, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void threads_busy(const char *scope)
{
    char *base;
    MPI_Info info = bench_scope_info(scope);
    MPI_Win win = bench_window(0, 4096 + (1 << 20), 1, info, &base);
    MPI_Info_free(&info);
    if (rank == 0) {
        MPI_Win_lock_all(0, win);
        pthread_t t;
        busy_stop = 0;
        busy_puts = 0;
        pthread_create(&t, NULL, big_putter, &win);
        while (__atomic_load_n(&busy_puts, __ATOMIC_RELAXED) == 0)
            ;
        long before = __atomic_load_n(&busy_puts, __ATOMIC_RELAXED);
        /* A process-scope flush may wait for a whole 1 MiB put: fewer rounds. */
        double us = put_flush_n(win, 0, iters / 20);
        long meanwhile = __atomic_load_n(&busy_puts, __ATOMIC_RELAXED) - before;
        __atomic_store_n(&busy_stop, 1, __ATOMIC_RELAXED);
        pthread_join(t, NULL);
        MPI_Win_unlock_all(win);
        printf("flush_%s_busy %.3f (%ld 1 MiB puts meanwhile)\n", scope, us, meanwhile);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
}

static void ordering(void)
{
    MPI_Info info;
    MPI_Win win;
    long *base, v = 1;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_win_order", "true");
    MPI_Win_allocate(64 * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &base, &win);
    MPI_Info_free(&info);
    if (rank == 0) {
        MPI_Win_lock_all(0, win);
        printf("put_flush_pair %.3f\n", put_flush(win, 0));
        for (int i = 0; i < iters / 10; i++)
            MPI_Put(&v, 1, MPI_LONG, 1, i % 64, 1, MPI_LONG, win);
        MPI_Win_flush(1, win);
        double t = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Put(&v, 1, MPI_LONG, 1, i % 64, 1, MPI_LONG, win);
        MPI_Win_flush(1, win);
        printf("put_ordered %.3f\n", (MPI_Wtime() - t) * 1e6 / iters);
        MPI_Win_unlock_all(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
}

/* The round trips on an allocated window (create 0, rows without a suffix) or on a window
 * created over MPI_Alloc_mem memory (create 1, rows ending in _create). */
static void round_trips(int create)
{
    long *base, v = 1;
    int peer = 1 - rank, n = iters / 4;
    MPI_Win win = bench_window(create, 64 * sizeof(long), sizeof(long), MPI_INFO_NULL, &base);
    MPI_Win_lock_all(0, win);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            MPI_Put(&v, 1, MPI_LONG, peer, 0, 1, MPI_LONG, win);
            MPI_Win_flush(peer, win);
            MPI_Send(NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Put(&v, 1, MPI_LONG, peer, 0, 1, MPI_LONG, win);
            MPI_Win_flush(peer, win);
            MPI_Send(NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        }
    }
    double rt_send = (MPI_Wtime() - t) * 1e6 / n;
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    MPI_Request r;
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            MPIX_Put_notify(&v, 1, MPI_LONG, peer, 0, 1, MPI_LONG, 0, win);
            MPIX_Win_notify_request(win, 0, 1, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPIX_Win_notify_request(win, 0, 1, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            MPIX_Put_notify(&v, 1, MPI_LONG, peer, 0, 1, MPI_LONG, 0, win);
        }
    }
    double rt_notify = (MPI_Wtime() - t) * 1e6 / n;
    MPI_Win_unlock_all(win);
    if (rank == 0) {
        const char *suffix = create ? "_create" : "";
        printf("rt_put_flush_send%s %.3f\n", suffix, rt_send);
        printf("rt_notify%s %.3f\n", suffix, rt_notify);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    bench_window_free(create, &win, base);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc > 1)
        iters = atoi(argv[1]);
    windows();
    threads("process");
    threads("thread");
    threads_busy("process");
    threads_busy("thread");
    ordering();
    round_trips(0);
    round_trips(1);
    MPI_Finalize();
    return 0;
}
