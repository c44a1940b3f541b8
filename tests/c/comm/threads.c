/* Concurrent communicator creation: under MPI_THREAD_MULTIPLE two threads of every process
 * duplicate and split two different parents at the same time; every result is right. */
#include "wtest.h"
#include <pthread.h>

#define ROUNDS 300

static int size, rank;

static void *worker(void *arg)
{
    MPI_Comm parent = *(MPI_Comm *)arg;
    for (int i = 0; i < ROUNDS; i++) {
        MPI_Comm c, s;
        int res = -1, n = -1, v = rank, got = -1;
        EXPECT_OK(MPI_Comm_dup(parent, &c));
        EXPECT_OK(MPI_Comm_compare(c, parent, &res));
        CHECK_INT(res, MPI_CONGRUENT);
        EXPECT_OK(MPI_Comm_split(c, rank % 2, -rank, &s));
        EXPECT_OK(MPI_Comm_size(s, &n));
        CHECK_INT(n, rank % 2 ? size / 2 : (size + 1) / 2);
        if (size > 1) {
            EXPECT_OK(MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, i, &got, 1, MPI_INT,
                                   (rank + size - 1) % size, i, c, MPI_STATUS_IGNORE));
            CHECK_INT(got, (rank + size - 1) % size);
        }
        EXPECT_OK(MPI_Comm_free(&s));
        EXPECT_OK(MPI_Comm_free(&c));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Comm a, b;
    pthread_t t1, t2;

    EXPECT_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    wtest_world_rank();
    wtest_errors_return();
    CHECK_INT(provided, MPI_THREAD_MULTIPLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &b));
    MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(b, MPI_ERRORS_RETURN);
    /* the two threads start in opposite orders on neighbouring ranks */
    pthread_create(&t1, NULL, worker, rank % 2 ? &a : &b);
    pthread_create(&t2, NULL, worker, rank % 2 ? &b : &a);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    EXPECT_OK(MPI_Comm_free(&a));
    EXPECT_OK(MPI_Comm_free(&b));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
