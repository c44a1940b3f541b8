/* Context-id agreements of several threads at once, on different parents, in orders that
 * differ between processes. Each phase deadlocked when an agreement could own the
 * context-id mask before all its members had entered it (an MPI_Comm_idup's agreement
 * waiting for a process whose threads wait for other agreements first).
 *
 * A: four threads each MPI_Comm_idup their own duplicate of MPI_COMM_WORLD. On odd ranks
 *    threads 1 and 3 start after threads 0 and 2 have started; on even ranks threads 0 and 2
 *    start only after threads 1 and 3 have finished.
 * B: two threads each MPI_Comm_idup MPI_COMM_SELF under an application lock, then their own
 *    duplicate of MPI_COMM_WORLD; on each rank one thread starts its MPI_COMM_SELF idup only
 *    after the other has started its world idup (a different thread on odd and even ranks).
 * C: two threads create communicators on MPI_COMM_WORLD with MPI_Comm_create_group at once
 *    (tag = thread) on overlapping groups: thread 0 for everyone; thread 1 first for all
 *    but the last rank, then for everyone. The last rank starts thread 1's, the others
 *    thread 0's first. */
#include <pthread.h>
#include "wtest.h"

#define THREADS 4
#define ITERS_C 10

static int rank, size;
static MPI_Comm comms[THREADS];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t app_lock = PTHREAD_MUTEX_INITIALIZER;
static int started, finished;

static void wait_until(int *counter, int value)
{
    pthread_mutex_lock(&mu);
    while (*counter < value)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

static void bump(int *counter)
{
    pthread_mutex_lock(&mu);
    (*counter)++;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

/* The duplicate works: ranks and a sum over it. */
static void check_dup(MPI_Comm parent, MPI_Comm d)
{
    int r, res, sum;
    EXPECT_OK(MPI_Comm_compare(parent, d, &res));
    CHECK_INT(res, MPI_CONGRUENT);
    EXPECT_OK(MPI_Comm_rank(d, &r));
    sum = r;
    EXPECT_OK(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, d));
    int n;
    MPI_Comm_size(d, &n);
    CHECK_INT(sum, n * (n - 1) / 2);
}

static void *phase_a(void *arg)
{
    int t = *(int *)arg;
    MPI_Comm d;
    MPI_Request req;
    int late = (rank % 2 == 0) == (t % 2 == 0);
    if (late && rank % 2)
        wait_until(&started, THREADS / 2);
    if (late && rank % 2 == 0)
        wait_until(&finished, THREADS / 2);
    EXPECT_OK(MPI_Comm_idup(comms[t], &d, &req));
    bump(&started);
    EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    bump(&finished);
    check_dup(comms[t], d);
    EXPECT_OK(MPI_Comm_free(&d));
    return NULL;
}

static void *phase_b(void *arg)
{
    int t = *(int *)arg;
    MPI_Comm self_dup, d;
    MPI_Request req;
    int late = t == rank % 2;
    if (late)
        wait_until(&started, 1);
    pthread_mutex_lock(&app_lock);
    EXPECT_OK(MPI_Comm_idup(MPI_COMM_SELF, &self_dup, &req));
    EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    pthread_mutex_unlock(&app_lock);
    check_dup(MPI_COMM_SELF, self_dup);
    EXPECT_OK(MPI_Comm_free(&self_dup));
    EXPECT_OK(MPI_Comm_idup(comms[t], &d, &req));
    bump(&started);
    EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_dup(comms[t], d);
    EXPECT_OK(MPI_Comm_free(&d));
    return NULL;
}

static void *phase_c(void *arg)
{
    int t = *(int *)arg, n, last = size - 1;
    MPI_Group world, most;
    MPI_Comm c;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_excl(world, 1, &last, &most);
    /* Thread 1 first on the last rank, thread 0 first elsewhere. */
    if ((rank == last) == (t == 0))
        wait_until(&started, 1);
    else
        bump(&started);
    if (t == 1 && rank != last) {
        EXPECT_OK(MPI_Comm_create_group(MPI_COMM_WORLD, most, 1, &c));
        EXPECT_OK(MPI_Comm_size(c, &n));
        CHECK_INT(n, size - 1);
        EXPECT_OK(MPI_Barrier(c));
        EXPECT_OK(MPI_Comm_free(&c));
    }
    EXPECT_OK(MPI_Comm_create_group(MPI_COMM_WORLD, world, t, &c));
    EXPECT_OK(MPI_Comm_size(c, &n));
    CHECK_INT(n, size);
    EXPECT_OK(MPI_Barrier(c));
    EXPECT_OK(MPI_Comm_free(&c));
    MPI_Group_free(&most);
    MPI_Group_free(&world);
    return NULL;
}

static void run(void *(*phase)(void *), int threads)
{
    pthread_t th[THREADS];
    int ids[THREADS], i;
    started = finished = 0;
    for (i = 0; i < threads; i++) {
        ids[i] = i;
        pthread_create(&th[i], NULL, phase, &ids[i]);
    }
    for (i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    int provided, i;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK_INT(provided, MPI_THREAD_MULTIPLE);
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (i = 0; i < THREADS; i++) {
        EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]));
        MPI_Comm_set_errhandler(comms[i], MPI_ERRORS_RETURN);
    }
    run(phase_a, THREADS);
    run(phase_b, 2);
    for (i = 0; i < ITERS_C; i++)
        run(phase_c, 2);
    for (i = 0; i < THREADS; i++)
        MPI_Comm_free(&comms[i]);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
