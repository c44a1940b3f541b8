/* MPI_THREAD_MULTIPLE: T threads per rank exchange concurrently on MPI_COMM_WORLD (shared
 * communicator, distinct tags per thread) and on MPI_COMM_SELF (a separate communicator),
 * blocking and nonblocking, eager and rendezvous sizes; values are checked. Run with
 * WEFT_NUM_VCIS=1 and >1 (the manifest does). */
#include <pthread.h>
#include "pt2pt_util.h"

#define T 4
#define ITERS 300
#define BIG 20000

static int rank, peer;

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg, i, j, in = -1, out;
    int *bs = malloc(BIG * sizeof(int)), *br = malloc(BIG * sizeof(int));
    MPI_Request r[2];
    MPI_Status st;
    for (i = 0; i < ITERS; i++) {
        out = rank * 1000000 + id * 10000 + i;
        if (i % 3 == 0) {
            EXPECT_OK(MPI_Sendrecv(&out, 1, MPI_INT, peer, id, &in, 1, MPI_INT, peer, id, MPI_COMM_WORLD, &st));
        } else {
            EXPECT_OK(MPI_Irecv(&in, 1, MPI_INT, peer, id, MPI_COMM_WORLD, &r[0]));
            EXPECT_OK(MPI_Isend(&out, 1, MPI_INT, peer, id, MPI_COMM_WORLD, &r[1]));
            EXPECT_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        }
        if (in != peer * 1000000 + id * 10000 + i) {
            FAIL("thread %d iteration %d: got %d", id, i, in);
            break;
        }
        /* A message to oneself on MPI_COMM_SELF, tag by thread. */
        int self_in = -1;
        EXPECT_OK(MPI_Sendrecv(&out, 1, MPI_INT, 0, id, &self_in, 1, MPI_INT, 0, id, MPI_COMM_SELF, MPI_STATUS_IGNORE));
        if (self_in != out) {
            FAIL("thread %d: self message %d != %d", id, self_in, out);
            break;
        }
        if (i % 50 == 0) {
            for (j = 0; j < BIG; j++)
                bs[j] = j + id + i;
            EXPECT_OK(MPI_Sendrecv(bs, BIG, MPI_INT, peer, 100 + id, br, BIG, MPI_INT, peer, 100 + id, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (j = 0; j < BIG; j++)
                if (br[j] != j + id + i) {
                    FAIL("thread %d large: br[%d] = %d", id, j, br[j]);
                    break;
                }
        }
    }
    free(bs);
    free(br);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1, i;
    pthread_t th[T];
    EXPECT_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK_INT(provided, MPI_THREAD_MULTIPLE);
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    peer = rank ^ 1;
    for (i = 0; i < T; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    pair_sync(peer);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
