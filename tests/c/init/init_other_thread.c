/* The main thread is the one that called MPI_Init_thread, even when that is not the process's
 * first thread. */
#include "wtest.h"
#include <pthread.h>

static int provided = -1, init_rc = -1, flag_in_initializer = -1;

static void *initializer(void *arg)
{
    (void)arg;
    init_rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    MPI_Is_thread_main(&flag_in_initializer);
    return NULL;
}

int main(void)
{
    pthread_t t;
    int flag = -1;

    CHECK_INT(pthread_create(&t, NULL, initializer, NULL), 0);
    pthread_join(t, NULL);
    CHECK_INT(init_rc, MPI_SUCCESS);
    wtest_world_rank();
    CHECK_INT(provided, MPI_THREAD_MULTIPLE);
    CHECK_INT(flag_in_initializer, 1);
    EXPECT_OK(MPI_Is_thread_main(&flag));
    CHECK_INT(flag, 0);
    /* MPI_Init with NULL argc/argv is allowed. */
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
