/* Instructions of one half of a notification round trip (bench/README.md, Seed 004's RMA
 * proposals), both sides, with no waiting inside the measured calls: rank 0 (the origin)
 * makes 32 notified puts (modes notify, early: MPIX_Put_notify) or 32 put + flush +
 * zero-byte send (mode send); then, once they have all arrived, rank 1 (the target) takes
 * them: 32 MPIX_Win_notify_request + MPI_Wait (notify), 32 MPI_Wait on requests it made
 * before the origin's batch, whose making is counted too (early), or 32 zero-byte MPI_Recv
 * (send). Only those calls run between CALLGRIND_TOGGLE_COLLECTs (valgrind
 * --collect-atstart=no), so each rank's count divided by N is its side's cost per half round
 * trip. Window: allocate (MPI_Win_allocate) or create (MPI_Win_create over 512 bytes of
 * MPI_Alloc_mem memory, reached by cross-memory attach).
 * Usage: rma_notify_instructions notify|early|send allocate|create N (N a multiple of 32). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

#include "rma_window.h"

static void origin_batch(int notify, MPI_Win win)
{
    long v = 1;
    for (int k = 0; k < 32; k++) {
        if (notify) {
            MPIX_Put_notify(&v, 1, MPI_LONG, 1, k, 1, MPI_LONG, 0, win);
        } else {
            MPI_Put(&v, 1, MPI_LONG, 1, k, 1, MPI_LONG, win);
            MPI_Win_flush(1, win);
            MPI_Send(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        }
    }
}

/* The target's half: make a request and wait for it (notify: after the notifications
 * arrived), wait for requests made before they arrived (early), or receive (send). */
static void target_batch(int notify, int early, MPI_Win win, MPI_Request *reqs)
{
    for (int k = 0; k < 32; k++) {
        if (early) {
            MPI_Wait(&reqs[k], MPI_STATUS_IGNORE);
        } else if (notify) {
            MPI_Request r;
            MPIX_Win_notify_request(win, 0, 1, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
}

int main(int argc, char **argv)
{
    int rank;
    if (argc < 4)
        return 2;
    int early = strcmp(argv[1], "early") == 0;
    int notify = early || strcmp(argv[1], "notify") == 0;
    int create = strcmp(argv[2], "create") == 0;
    int n = atoi(argv[3]);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long *base;
    MPI_Request reqs[32];
    MPI_Win win = bench_window(create, 64 * sizeof(long), sizeof(long), MPI_INFO_NULL, &base);
    MPI_Win_lock_all(0, win);
    for (int i = -64; i < n; i += 32) { /* two batches of warm-up */
        int measured = i >= 0;
        if (rank == 1) {
            if (early) {
                if (measured)
                    CALLGRIND_TOGGLE_COLLECT;
                for (int k = 0; k < 32; k++)
                    MPIX_Win_notify_request(win, 0, 1, &reqs[k]);
                if (measured)
                    CALLGRIND_TOGGLE_COLLECT;
            }
            MPI_Send(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            MPI_Recv(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (measured)
                CALLGRIND_TOGGLE_COLLECT;
            target_batch(notify, early, win, reqs);
            if (measured)
                CALLGRIND_TOGGLE_COLLECT;
        } else {
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (measured)
                CALLGRIND_TOGGLE_COLLECT;
            origin_batch(notify, win);
            if (measured)
                CALLGRIND_TOGGLE_COLLECT;
            MPI_Send(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
        }
    }
    MPI_Win_unlock_all(win);
    bench_window_free(create, &win, base);
    MPI_Finalize();
    return 0;
}
