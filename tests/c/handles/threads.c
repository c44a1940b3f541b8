/* Under MPI_THREAD_MULTIPLE, threads create, use and free info objects and errhandlers at the
 * same time: every handle stays distinct and keeps its own contents. */
#include "wtest.h"
#include <pthread.h>

#define THREADS 4
#define ROUNDS 3000

static int thread_errs[THREADS];

static void handler(MPI_Comm *c, int *e, ...) { (void)c; (void)e; }

static void *work(void *arg)
{
    int id = (int)(intptr_t)arg;
    char want[32], got[32];
    for (int i = 0; i < ROUNDS; i++) {
        MPI_Info a, b;
        MPI_Errhandler eh;
        int flag = 0, buflen = sizeof got, n = -1;
        snprintf(want, sizeof want, "%d:%d", id, i);
        if (MPI_Info_create(&a) || MPI_Info_create(&b) || a == b) {
            thread_errs[id]++;
            break;
        }
        MPI_Info_set(a, "owner", want);
        MPI_Info_set(b, "other", "x");
        MPI_Info_get_string(a, "owner", &buflen, got, &flag);
        MPI_Info_get_nkeys(a, &n);
        if (!flag || strcmp(got, want) != 0 || n != 1)
            thread_errs[id]++;
        if (MPI_Comm_create_errhandler(handler, &eh) != MPI_SUCCESS || MPI_Errhandler_free(&eh) != MPI_SUCCESS)
            thread_errs[id]++;
        if (MPI_Info_free(&a) != MPI_SUCCESS || MPI_Info_free(&b) != MPI_SUCCESS || a != MPI_INFO_NULL)
            thread_errs[id]++;
    }
    return NULL;
}

/* Failing calls from several threads: each gets its own class and a string. */
static int error_errs[2];
static void *errors(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int i = 0; i < ROUNDS; i++) {
        int rc, cls = -1, len = 0, v = -7;
        char s[MPI_MAX_ERROR_STRING];
        rc = id ? MPI_Comm_rank((MPI_Comm)WTEST_GARBAGE, &v) : MPI_Comm_size(MPI_COMM_WORLD, NULL);
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, s, &len);
        if (cls != (id ? MPI_ERR_COMM : MPI_ERR_ARG) || len <= 0 || v != -7)
            error_errs[id]++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    pthread_t t[THREADS], e[2];

    EXPECT_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    wtest_world_rank();
    wtest_errors_return();
    CHECK_INT(provided, MPI_THREAD_MULTIPLE);
    for (int i = 0; i < THREADS; i++)
        CHECK_INT(pthread_create(&t[i], NULL, work, (void *)(intptr_t)i), 0);
    for (int i = 0; i < 2; i++)
        CHECK_INT(pthread_create(&e[i], NULL, errors, (void *)(intptr_t)i), 0);
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK(thread_errs[i] == 0, "thread %d: %d errors", i, thread_errs[i]);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(e[i], NULL);
        CHECK(error_errs[i] == 0, "error thread %d: %d wrong results", i, error_errs[i]);
    }
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
