/* Two threads each start their own session at the same time, build a communicator from
 * mpi://WORLD with their own string tag, and exchange messages on it; the sessions' traffic
 * must not mix. */
#include "wtest.h"
#include <pthread.h>

#define ROUNDS 200

struct arg {
    int id;
    int errs;
};

static void *worker(void *p)
{
    struct arg *a = p;
    MPI_Session s;
    MPI_Group g;
    MPI_Comm c;
    MPI_Info info;
    char tag[64];
    int rank, size, i;
    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
    if (MPI_Session_init(info, MPI_ERRORS_RETURN, &s) != MPI_SUCCESS) {
        a->errs++;
        return NULL;
    }
    MPI_Info_free(&info);
    MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    snprintf(tag, sizeof tag, "weft.test.threads.%d", a->id);
    if (MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) != MPI_SUCCESS) {
        a->errs++;
        return NULL;
    }
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    for (i = 0; i < ROUNDS; i++) {
        /* A ring: send my (thread, round) to the right, expect the left's. */
        int out[2] = {a->id, i}, in[2] = {-1, -1};
        MPI_Sendrecv(out, 2, MPI_INT, (rank + 1) % size, 7, in, 2, MPI_INT, (rank + size - 1) % size, 7, c,
                     MPI_STATUS_IGNORE);
        if (in[0] != a->id || in[1] != i)
            a->errs++;
    }
    MPI_Comm_free(&c);
    MPI_Group_free(&g);
    MPI_Session_finalize(&s);
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    struct arg a[2] = {{1, 0}, {2, 0}};
    int i;
    for (i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, &a[i]);
    for (i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    CHECK(a[0].errs == 0 && a[1].errs == 0, "thread errors: %d and %d", a[0].errs, a[1].errs);
    return wtest_finish();
}
