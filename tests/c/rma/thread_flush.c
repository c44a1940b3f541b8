/* Thread-scope flushes order each thread's own operations (mpi_win_scope=thread, issue #18):
 * rank 0 runs THREADS threads, each putting round i into its data slot, flushing, then i into
 * its flag slot, flushing, ROUNDS times, all at once; rank 1 (the target) keeps reading each
 * thread's flag then data with acquire loads while they run, and must never see a flag ahead
 * of its data. At the end every slot holds ROUNDS. Needs MPI_THREAD_MULTIPLE. */
#include <pthread.h>
#include "wtest.h"

#define THREADS 4
#define ROUNDS 3000

static MPI_Win win;

static void *putter(void *arg)
{
    long t = (long)arg;
    for (long i = 1; i <= ROUNDS; i++) {
        EXPECT_OK(MPI_Put(&i, 1, MPI_LONG, 1, 2 * t, 1, MPI_LONG, win));
        EXPECT_OK(MPI_Win_flush(1, win));
        EXPECT_OK(MPI_Put(&i, 1, MPI_LONG, 1, 2 * t + 1, 1, MPI_LONG, win));
        EXPECT_OK(MPI_Win_flush_local(1, win));
        EXPECT_OK(MPI_Win_flush(1, win));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    rank = wtest_world_rank();
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_errors_return();
    if (provided < MPI_THREAD_MULTIPLE || size < 2) {
        printf("SKIP: needs MPI_THREAD_MULTIPLE and 2 ranks\n");
        MPI_Finalize();
        return 77;
    }
    MPI_Info info;
    long *mem;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_win_scope", "thread");
    EXPECT_OK(MPI_Win_allocate(2 * THREADS * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &mem, &win));
    MPI_Info_free(&info);
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    memset(mem, 0, 2 * THREADS * sizeof(long));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        pthread_t th[THREADS];
        EXPECT_OK(MPI_Win_lock_all(0, win));
        for (long t = 0; t < THREADS; t++)
            pthread_create(&th[t], NULL, putter, (void *)t);
        for (int t = 0; t < THREADS; t++)
            pthread_join(th[t], NULL);
        EXPECT_OK(MPI_Win_unlock_all(win));
    } else if (rank == 1) {
        long ahead = 0, looks = 0;
        int done = 0;
        while (!done) {
            done = 1;
            for (int t = 0; t < THREADS; t++) {
                long flag = __atomic_load_n(&mem[2 * t + 1], __ATOMIC_ACQUIRE);
                long data = __atomic_load_n(&mem[2 * t], __ATOMIC_ACQUIRE);
                looks++;
                if (data < flag && ahead++ == 0)
                    FAIL("thread %d: flag %ld ahead of data %ld", t, flag, data);
                if (flag < ROUNDS)
                    done = 0;
            }
        }
        CHECK(ahead == 0, "%ld of %ld looks saw a flag ahead of its data", ahead, looks);
        for (int t = 0; t < THREADS; t++)
            CHECK(mem[2 * t] == ROUNDS && mem[2 * t + 1] == ROUNDS, "thread %d: %ld %ld", t, mem[2 * t], mem[2 * t + 1]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_Win_free(&win));
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
