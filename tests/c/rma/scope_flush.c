/* mpi_win_scope (issue #18): a process-scope flush waits for the operations other threads of
 * the process have in progress on the window; a thread-scope flush does not.
 * Each rank runs two threads on an allocated window over MPI_COMM_SELF, its own target (so
 * the threads can read the target memory): thread A accumulates (MPI_SUM on longs, CPU atomics
 * element by element, in order) 1 into N elements; thread B waits until the first element
 * changed (A's accumulate is in progress), flushes, and reads the last element.
 * - process scope (the default): after the flush the last element holds its new value,
 *   every round;
 * - mpi_win_scope=thread: the flush returns while A's accumulate is still running in at
 *   least one of the rounds (the last element still old right after it).
 * Needs MPI_THREAD_MULTIPLE. */
#include <pthread.h>
#include "wtest.h"

#define N (4 << 20)
#define ROUNDS 5

static MPI_Win win;
static long *mem, *ones;

static void *accumulator(void *arg)
{
    (void)arg;
    EXPECT_OK(MPI_Accumulate(ones, N, MPI_LONG, 0, 0, N, MPI_LONG, MPI_SUM, win));
    return NULL;
}

/* One round: B's flush while A's accumulate runs. Whether the last element was updated
 * when the flush returned. */
static int flush_during_accumulate(long round)
{
    pthread_t a;
    pthread_create(&a, NULL, accumulator, NULL);
    while (__atomic_load_n(&mem[0], __ATOMIC_ACQUIRE) < round)
        ;
    EXPECT_OK(MPI_Win_flush(0, win));
    int done = __atomic_load_n(&mem[N - 1], __ATOMIC_ACQUIRE) == round;
    pthread_join(a, NULL);
    CHECK(mem[N - 1] == round, "round %ld: last element %ld after the accumulate", round,
          mem[N - 1]);
    return done;
}

static void run(const char *scope)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_win_scope", scope);
    EXPECT_OK(MPI_Win_allocate((MPI_Aint)N * sizeof(long), sizeof(long), info, MPI_COMM_SELF,
                               &mem, &win));
    MPI_Info_free(&info);
    memset(mem, 0, (size_t)N * sizeof(long));
    EXPECT_OK(MPI_Win_lock_all(0, win));
    int waited = 0, early = 0;
    for (long r = 1; r <= ROUNDS; r++) {
        if (flush_during_accumulate(r))
            waited++;
        else
            early++;
    }
    EXPECT_OK(MPI_Win_unlock_all(win));
    if (strcmp(scope, "process") == 0)
        CHECK(waited == ROUNDS, "process scope: %d of %d flushes returned before another "
              "thread's accumulate in progress ended", early, ROUNDS);
    else
        CHECK(early > 0, "thread scope: every one of %d flushes waited for another thread's "
              "accumulate", ROUNDS);
    EXPECT_OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    wtest_world_rank();
    wtest_errors_return();
    if (provided < MPI_THREAD_MULTIPLE) {
        printf("SKIP: needs MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 77;
    }
    ones = malloc((size_t)N * sizeof(long));
    for (long i = 0; i < N; i++)
        ones[i] = 1;
    run("process");
    run("thread");
    free(ones);
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
