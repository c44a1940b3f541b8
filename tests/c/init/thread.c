/* MPI_Init_thread at the level named by WTEST_LEVEL (single, funneled, serialized, multiple):
 * provided == required, MPI_Query_thread agrees, MPI_Is_thread_main is true on the main thread
 * and false on another pthread. */
#include "wtest.h"
#include <pthread.h>

static int other_flag = -1, other_rc = -1;

static void *other(void *arg)
{
    (void)arg;
    other_rc = MPI_Is_thread_main(&other_flag);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *name = getenv("WTEST_LEVEL");
    int required, provided = -1, queried = -1, flag = -1;

    if (!name) {
        fprintf(stderr, "WTEST_LEVEL is not set\n");
        return 2;
    }
    if (!strcmp(name, "single"))
        required = MPI_THREAD_SINGLE;
    else if (!strcmp(name, "funneled"))
        required = MPI_THREAD_FUNNELED;
    else if (!strcmp(name, "serialized"))
        required = MPI_THREAD_SERIALIZED;
    else if (!strcmp(name, "multiple"))
        required = MPI_THREAD_MULTIPLE;
    else {
        fprintf(stderr, "bad WTEST_LEVEL %s\n", name);
        return 2;
    }
    CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
              MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
          "thread levels are not monotonic");

    EXPECT_OK(MPI_Init_thread(&argc, &argv, required, &provided));
    wtest_world_rank();
    CHECK_INT(provided, required);
    EXPECT_OK(MPI_Query_thread(&queried));
    CHECK_INT(queried, provided);
    EXPECT_OK(MPI_Is_thread_main(&flag));
    CHECK_INT(flag, 1);

    if (required != MPI_THREAD_SINGLE) {
        /* FUNNELED allows MPI_Is_thread_main from any thread: it is how a thread learns
         * whether it may call MPI. */
        pthread_t t;
        CHECK_INT(pthread_create(&t, NULL, other, NULL), 0);
        pthread_join(t, NULL);
        CHECK_INT(other_rc, MPI_SUCCESS);
        CHECK_INT(other_flag, 0);
        flag = -1;
        EXPECT_OK(MPI_Is_thread_main(&flag));
        CHECK_INT(flag, 1);
    }
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
