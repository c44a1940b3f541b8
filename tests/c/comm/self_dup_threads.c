/* Two threads per process duplicate MPI_COMM_SELF under an application lock and then each
 * duplicate its own world communicator, one thread of rank 0 and one of rank 1 starting late.
 * A duplicate of MPI_COMM_SELF must not wait for another thread's agreement in flight: that
 * agreement may be waiting for a peer whose thread waits for the lock held here (a deadlock
 * before `context_id::claim_alone`). */
#include <pthread.h>
#include <unistd.h>
#include "wtest.h"

#define THREADS 2
#define ROUNDS 3

static MPI_Comm comms[THREADS];
static pthread_mutex_t app_lock = PTHREAD_MUTEX_INITIALIZER;
static int rank, size;

static void *worker(void *arg)
{
    int t = *(int *)arg, i, r, s;
    for (i = 0; i < ROUNDS; i++) {
        MPI_Comm self_dup, dup;
        if (t == rank && i == 0)
            usleep(200 * 1000);
        pthread_mutex_lock(&app_lock);
        EXPECT_OK(MPI_Comm_dup(MPI_COMM_SELF, &self_dup));
        pthread_mutex_unlock(&app_lock);
        MPI_Comm_size(self_dup, &s);
        CHECK_INT(s, 1);
        EXPECT_OK(MPI_Comm_free(&self_dup));
        EXPECT_OK(MPI_Comm_dup(comms[t], &dup));
        MPI_Comm_rank(dup, &r);
        CHECK_INT(r, rank);
        int sum = 0;
        EXPECT_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, dup));
        CHECK_INT(sum, size * (size - 1) / 2);
        EXPECT_OK(MPI_Comm_free(&dup));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, i, ids[THREADS];
    pthread_t threads[THREADS];
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK_INT(provided, MPI_THREAD_MULTIPLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_rank = rank;
    for (i = 0; i < THREADS; i++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
    for (i = 0; i < THREADS; i++) {
        ids[i] = i;
        pthread_create(&threads[i], NULL, worker, &ids[i]);
    }
    for (i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    for (i = 0; i < THREADS; i++)
        MPI_Comm_free(&comms[i]);
    MPI_Finalize();
    return wtest_finish();
}
