/* Seed 000's stream example: T threads per process, thread i of rank 0 paired with thread i
 * of rank 1, each pair on its own stream communicator (one MPIX stream per thread), under
 * MPI_THREAD_MULTIPLE. Each thread ping-pongs eager and rendezvous messages with checked
 * values, probes, uses persistent requests, and runs collectives on its stream communicator
 * while the other threads do the same. Argument: T (threads per process). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include "wtest.h"

#define ITERS 200
#define BIG 40000

static int rank, peer, nthreads;
static MPI_Comm comms[64];

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg, i, j;
    MPI_Comm c = comms[id];
    int *big = malloc(BIG * sizeof(int));
    for (i = 0; i < ITERS; i++) {
        int out = rank * 1000000 + id * 10000 + i, in = -1;
        if (rank == 0) {
            EXPECT_OK(MPI_Send(&out, 1, MPI_INT, peer, i, c));
            EXPECT_OK(MPI_Recv(&in, 1, MPI_INT, peer, i, c, MPI_STATUS_IGNORE));
        } else {
            MPI_Status st;
            EXPECT_OK(MPI_Recv(&in, 1, MPI_INT, peer, MPI_ANY_TAG, c, &st));
            CHECK_INT(st.MPI_TAG, i);
            EXPECT_OK(MPI_Send(&out, 1, MPI_INT, peer, i, c));
        }
        if (in != peer * 1000000 + id * 10000 + i) {
            FAIL("thread %d iteration %d: got %d", id, i, in);
            break;
        }
        if (i % 40 == 0) {
            MPI_Request r[2];
            int *back = malloc(BIG * sizeof(int));
            for (j = 0; j < BIG; j++)
                big[j] = rank + id * 7 + i + j;
            EXPECT_OK(MPI_Irecv(back, BIG, MPI_INT, peer, 7, c, &r[0]));
            EXPECT_OK(MPI_Isend(big, BIG, MPI_INT, peer, 7, c, &r[1]));
            EXPECT_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
            for (j = 0; j < BIG; j++)
                if (back[j] != peer + id * 7 + i + j) {
                    FAIL("thread %d large: back[%d] = %d", id, j, back[j]);
                    break;
                }
            free(back);
        }
    }
    /* A probe, a persistent pair and collectives on the stream communicator. */
    int v = 100 + id + rank, got = -1, flag = 0, count = -1;
    MPI_Status st;
    EXPECT_OK(MPI_Send(&v, 1, MPI_INT, peer, 99, c));
    EXPECT_OK(MPI_Probe(peer, 99, c, &st));
    EXPECT_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT(count, 1);
    EXPECT_OK(MPI_Iprobe(peer, 99, c, &flag, MPI_STATUS_IGNORE));
    CHECK_INT(flag, 1);
    EXPECT_OK(MPI_Recv(&got, 1, MPI_INT, peer, 99, c, MPI_STATUS_IGNORE));
    CHECK_INT(got, 100 + id + peer);
    MPI_Request pr[2];
    EXPECT_OK(MPI_Recv_init(&got, 1, MPI_INT, peer, 98, c, &pr[0]));
    EXPECT_OK(MPI_Send_init(&v, 1, MPI_INT, peer, 98, c, &pr[1]));
    for (i = 0; i < 3; i++) {
        got = -1;
        EXPECT_OK(MPI_Startall(2, pr));
        EXPECT_OK(MPI_Waitall(2, pr, MPI_STATUSES_IGNORE));
        CHECK_INT(got, 100 + id + peer);
    }
    EXPECT_OK(MPI_Request_free(&pr[0]));
    EXPECT_OK(MPI_Request_free(&pr[1]));
    int sum = -1, mine = id + rank * 10;
    EXPECT_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK_INT(sum, 2 * id + 10);
    MPI_Request ar;
    sum = -1;
    EXPECT_OK(MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_MAX, c, &ar));
    EXPECT_OK(MPI_Wait(&ar, MPI_STATUS_IGNORE));
    CHECK_INT(sum, id + 10);
    int b = rank == 0 ? 4242 + id : -1;
    EXPECT_OK(MPI_Bcast(&b, 1, MPI_INT, 0, c));
    CHECK_INT(b, 4242 + id);
    EXPECT_OK(MPI_Barrier(c));
    free(big);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1, i, size = -1;
    pthread_t th[64];
    EXPECT_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    wtest_world_rank();
    wtest_errors_return();
    CHECK_INT(provided, MPI_THREAD_MULTIPLE);
    nthreads = argc > 1 ? atoi(argv[1]) : 2;
    EXPECT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    EXPECT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_INT(size, 2);
    peer = 1 - rank;
    MPIX_Stream streams[64];
    for (i = 0; i < nthreads; i++) {
        EXPECT_OK(MPIX_Stream_create(MPI_INFO_NULL, &streams[i]));
        EXPECT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, streams[i], &comms[i]));
        MPIX_Stream back = MPIX_STREAM_NULL;
        EXPECT_OK(MPIX_Comm_get_stream(comms[i], 0, &back));
        CHECK(back == streams[i], "MPIX_Comm_get_stream gives the attached stream");
        EXPECT_OK(MPI_Comm_set_errhandler(comms[i], MPI_ERRORS_RETURN));
    }
    for (i = 0; i < nthreads; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    /* A duplicate of a stream communicator runs on the same stream. */
    MPI_Comm dup;
    EXPECT_OK(MPI_Comm_dup(comms[0], &dup));
    MPIX_Stream s0 = MPIX_STREAM_NULL;
    EXPECT_OK(MPIX_Comm_get_stream(dup, 0, &s0));
    CHECK(s0 == streams[0], "the duplicate keeps the stream");
    int x = rank + 1, y = -1;
    EXPECT_OK(MPI_Sendrecv(&x, 1, MPI_INT, peer, 5, &y, 1, MPI_INT, peer, 5, dup, MPI_STATUS_IGNORE));
    CHECK_INT(y, peer + 1);
    /* Freeing a stream still attached is refused; after the communicators go it works. */
    EXPECT_ERR(MPIX_Stream_free(&streams[0]), MPI_ERR_OTHER, "MPIX_Stream_free", "attached to 2 communicators");
    EXPECT_OK(MPI_Comm_free(&dup));
    for (i = 0; i < nthreads; i++)
        EXPECT_OK(MPI_Comm_free(&comms[i]));
    for (i = 0; i < nthreads; i++) {
        EXPECT_OK(MPIX_Stream_free(&streams[i]));
        CHECK(streams[i] == MPIX_STREAM_NULL, "the freed handle is MPIX_STREAM_NULL");
    }
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
