/* Partitioned partitions move while the sender is outside MPI (issue #22): the sender readies
 * partitions 0..PARTS-2 (out of order, from two threads, MPI_Pready_list), then waits outside
 * MPI (spinning on a flag in a shared-memory window, no MPI call) until the receiver has seen
 * each of them arrive with MPI_Parrived and checked its data; only then does it ready the last
 * one. The partitions are far above the eager size, so they arrive only if the receiver can
 * take them without the sender making progress. Also: the last partition has not arrived
 * before it is readied, three rounds on the same requests (persistent restart), every value
 * checked. A timeout (not a hang) fails the test where partitions wait for the sender.
 * Where the kernel refuses process_vm_readv between the ranks, partitions wait for the
 * sender by design: SKIP. */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>

#include "wtest.h"

#define PARTS 4
#define PART_INTS (64 * 1024) /* 256 KiB per partition */
#define WAIT_S 5 /* seconds */

static MPI_Request sreq;

/* Partitions readied together by one thread (MPI_Pready_list, any order). */
struct batch {
    int n;
    int parts[PARTS];
};

static void *ready_batch(void *arg)
{
    struct batch *b = arg;
    int rc = MPI_Pready_list(b->n, b->parts, sreq);
    if (rc != MPI_SUCCESS)
        FAIL("MPI_Pready_list of %d partitions: error %d", b->n, rc);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1, rank = -1, size = -1;
    EXPECT_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK_INT(provided, MPI_THREAD_MULTIPLE);
    wtest_errors_return();
    EXPECT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK_INT(size, 2);
    rank = wtest_world_rank();
    if (!wtest_cma_allowed()) {
        if (rank == 0)
            printf("SKIP: the kernel refuses process_vm_readv between the ranks\n");
        MPI_Finalize();
        return 77;
    }

    /* The go flag lives in rank 1's part of a shared-memory window; both ranks touch it only
     * with atomic loads and stores (no MPI call while the sender waits on it). */
    MPI_Comm node;
    EXPECT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int *flag = NULL, disp;
    MPI_Aint fsize;
    MPI_Win win;
    EXPECT_OK(MPI_Win_allocate_shared(rank == 1 ? (MPI_Aint)sizeof(int) : 0, sizeof(int),
                                      MPI_INFO_NULL, node, &flag, &win));
    EXPECT_OK(MPI_Win_shared_query(win, 1, &fsize, &disp, &flag));
    if (rank == 1)
        __atomic_store_n(flag, 0, __ATOMIC_SEQ_CST);
    MPI_Barrier(MPI_COMM_WORLD);

    static int buf[PARTS * PART_INTS];
    MPI_Request rreq = MPI_REQUEST_NULL;
    if (rank == 0)
        EXPECT_OK(MPI_Psend_init(buf, PARTS, PART_INTS, MPI_INT, 1, 3, MPI_COMM_WORLD,
                                 MPI_INFO_NULL, &sreq));
    else
        EXPECT_OK(MPI_Precv_init(buf, PARTS, PART_INTS, MPI_INT, 0, 3, MPI_COMM_WORLD,
                                 MPI_INFO_NULL, &rreq));
    for (int round = 0; round < 3; round++) {
        if (rank == 0) {
            for (int i = 0; i < PARTS * PART_INTS; i++)
                buf[i] = i * 3 + round;
            EXPECT_OK(MPI_Start(&sreq));
            /* Partition PARTS-2 from one thread, PARTS-3..0 (descending) from another. */
            struct batch one = {1, {PARTS - 2}}, low = {0, {0}};
            for (int p = PARTS - 3; p >= 0; p--)
                low.parts[low.n++] = p;
            pthread_t a, b;
            pthread_create(&a, NULL, ready_batch, &one);
            pthread_create(&b, NULL, ready_batch, &low);
            pthread_join(a, NULL);
            pthread_join(b, NULL);
            /* Wait outside MPI (libc clock only) for the receiver's word. */
            time_t deadline = time(NULL) + WAIT_S;
            while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != round + 1 && time(NULL) < deadline)
                ;
            CHECK(__atomic_load_n(flag, __ATOMIC_ACQUIRE) == round + 1,
                  "round %d: the receiver saw the readied partitions arrive while this sender "
                  "was outside MPI",
                  round);
            EXPECT_OK(MPI_Pready(PARTS - 1, sreq));
            EXPECT_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        } else {
            memset(buf, 0xff, sizeof buf);
            EXPECT_OK(MPI_Start(&rreq));
            int seen[PARTS - 1] = {0}, left = PARTS - 1;
            time_t deadline = time(NULL) + WAIT_S;
            while (left > 0 && time(NULL) < deadline) {
                for (int p = 0; p < PARTS - 1; p++) {
                    int arrived = 0;
                    if (seen[p])
                        continue;
                    EXPECT_OK(MPI_Parrived(rreq, p, &arrived));
                    if (!arrived)
                        continue;
                    seen[p] = 1;
                    left--;
                    for (int i = p * PART_INTS; i < (p + 1) * PART_INTS; i++)
                        if (buf[i] != i * 3 + round) {
                            FAIL("round %d: partition %d element %d is %d, not %d", round, p,
                                 i, buf[i], i * 3 + round);
                            break;
                        }
                }
            }
            CHECK(left == 0,
                  "round %d: %d readied partitions did not arrive while the sender waited "
                  "outside MPI",
                  round, left);
            int last = -1;
            EXPECT_OK(MPI_Parrived(rreq, PARTS - 1, &last));
            CHECK_INT(last, 0); /* the sender readies it only after the flag below */
            __atomic_store_n(flag, round + 1, __ATOMIC_RELEASE);
            MPI_Status st;
            EXPECT_OK(MPI_Wait(&rreq, &st));
            CHECK_INT(st.MPI_SOURCE, 0);
            CHECK_INT(st.MPI_TAG, 3);
            int count = -1;
            EXPECT_OK(MPI_Get_count(&st, MPI_INT, &count));
            CHECK_INT(count, PARTS * PART_INTS);
            for (int i = 0; i < PARTS * PART_INTS; i++)
                if (buf[i] != i * 3 + round) {
                    FAIL("round %d: element %d is %d, not %d", round, i, buf[i], i * 3 + round);
                    break;
                }
        }
    }
    EXPECT_OK(MPI_Request_free(rank == 0 ? &sreq : &rreq));
    EXPECT_OK(MPI_Win_free(&win));
    EXPECT_OK(MPI_Comm_free(&node));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
