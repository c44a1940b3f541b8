/* Partitioned point-to-point (MPI 4.0 §4.2): partitions readied out of order by several
 * threads, MPI_Parrived polled until every partition is in (and before: a partition the
 * sender has not readied has not arrived), send and receive partition counts that differ,
 * a non-contiguous receive type whose partitions cut the send partitions, Pready_range and
 * Pready_list, several rounds of one pair of requests, two pairs matched in init order,
 * MPI_PROC_NULL, and the argument errors. */
#include <pthread.h>

#include "wtest.h"

#define PARTS 16
#define COUNT 1024 /* ints per send partition */
#define THREADS 4

static MPI_Request sreq;

struct job {
    int first;
};

static void *ready_some(void *arg)
{
    struct job *j = arg;
    /* Thread t readies partitions t, t+THREADS, ... from the highest down (out of order). */
    for (int p = PARTS - THREADS + j->first; p >= 0; p -= THREADS)
        if (MPI_Pready(p, sreq) != MPI_SUCCESS)
            FAIL("MPI_Pready(%d) failed", p);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    EXPECT_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_INT(provided, MPI_THREAD_MULTIPLE);

    /* 1. Threads ready 16 partitions out of order; the receiver uses 32 partitions and
     * polls MPI_Parrived; three rounds on the same requests. */
    static int sbuf[PARTS * COUNT], rbuf[PARTS * COUNT];
    MPI_Request rreq = MPI_REQUEST_NULL;
    if (rank == 0)
        EXPECT_OK(MPI_Psend_init(sbuf, PARTS, COUNT, MPI_INT, 1, 5, MPI_COMM_WORLD,
                                 MPI_INFO_NULL, &sreq));
    else
        EXPECT_OK(MPI_Precv_init(rbuf, 2 * PARTS, COUNT / 2, MPI_INT, 0, 5, MPI_COMM_WORLD,
                                 MPI_INFO_NULL, &rreq));
    for (int round = 0; round < 3; round++) {
        if (rank == 0) {
            for (int i = 0; i < PARTS * COUNT; i++)
                sbuf[i] = i * 7 + round;
            EXPECT_OK(MPI_Start(&sreq));
            pthread_t t[THREADS];
            struct job jobs[THREADS];
            for (int k = 0; k < THREADS; k++) {
                jobs[k].first = k;
                pthread_create(&t[k], NULL, ready_some, &jobs[k]);
            }
            for (int k = 0; k < THREADS; k++)
                pthread_join(t[k], NULL);
            EXPECT_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
            CHECK(sreq != MPI_REQUEST_NULL, "a partitioned request stays after completion");
        } else {
            memset(rbuf, 0xff, sizeof rbuf);
            EXPECT_OK(MPI_Start(&rreq));
            int seen[2 * PARTS] = {0}, left = 2 * PARTS;
            while (left > 0) {
                for (int p = 0; p < 2 * PARTS; p++) {
                    int flag = 0;
                    if (seen[p])
                        continue;
                    EXPECT_OK(MPI_Parrived(rreq, p, &flag));
                    if (flag) {
                        seen[p] = 1;
                        left--;
                        /* An arrived partition's data is there before the request completes. */
                        for (int i = p * COUNT / 2; i < (p + 1) * COUNT / 2; i++)
                            if (rbuf[i] != i * 7 + round) {
                                FAIL("round %d partition %d: rbuf[%d] = %d, expected %d",
                                     round, p, i, rbuf[i], i * 7 + round);
                                break;
                            }
                    }
                }
            }
            MPI_Status st;
            EXPECT_OK(MPI_Wait(&rreq, &st));
            CHECK_INT(st.MPI_SOURCE, 0);
            CHECK_INT(st.MPI_TAG, 5);
            int n = -1;
            MPI_Get_count(&st, MPI_INT, &n);
            CHECK_INT(n, PARTS * COUNT);
        }
    }
    if (rank == 0) {
        /* Inactive after completion: Pready is an error. */
        EXPECT_CLASS(MPI_Pready(0, sreq), MPI_ERR_REQUEST);
        EXPECT_OK(MPI_Request_free(&sreq));
    } else {
        /* Not a send request; and inactive. */
        EXPECT_CLASS(MPI_Pready(0, rreq), MPI_ERR_REQUEST);
        EXPECT_OK(MPI_Request_free(&rreq));
    }

    /* 2. A partition not readied has not arrived; Pready_range and Pready_list; two pairs
     * with the same tag matched in init order; a strided receive type whose partitions cut
     * the send partitions (33 send partitions of 2 doubles, 6 receive partitions of 11). */
    {
        double s1[66], s2[66], r1[132], r2[66];
        MPI_Request a, b;
        MPI_Datatype vec, strided;
        MPI_Type_vector(11, 1, 2, MPI_DOUBLE, &vec);
        MPI_Type_create_resized(vec, 0, 22 * sizeof(double), &strided);
        MPI_Type_free(&vec);
        MPI_Type_commit(&strided);
        if (rank == 0) {
            for (int i = 0; i < 66; i++) {
                s1[i] = i + 0.5;
                s2[i] = -i;
            }
            EXPECT_OK(MPI_Psend_init(s1, 33, 2, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &a));
            EXPECT_OK(MPI_Psend_init(s2, 3, 22, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &b));
            EXPECT_OK(MPI_Start(&b));
            EXPECT_OK(MPI_Start(&a));
            EXPECT_ERR(MPI_Pready(33, a), MPI_ERR_ARG, "MPI_Pready", "partition");
            EXPECT_ERR(MPI_Pready_range(3, 1, a), MPI_ERR_ARG, "MPI_Pready_range", "partition_low");
            int list[3] = {2, 0, 1};
            EXPECT_OK(MPI_Pready_list(3, list, b));
            /* Partition 32 of a (the last) waits for the receiver's go-ahead. */
            EXPECT_OK(MPI_Pready_range(0, 31, a));
            EXPECT_CLASS(MPI_Pready(5, a), MPI_ERR_ARG); /* twice in one round */
            int go = 0;
            MPI_Recv(&go, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            EXPECT_OK(MPI_Pready(32, a));
            EXPECT_OK(MPI_Wait(&a, MPI_STATUS_IGNORE));
            EXPECT_OK(MPI_Wait(&b, MPI_STATUS_IGNORE));
        } else {
            memset(r1, 0, sizeof r1);
            memset(r2, 0, sizeof r2);
            EXPECT_OK(MPI_Precv_init(r1, 6, 1, strided, 0, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &a));
            EXPECT_OK(MPI_Precv_init(r2, 1, 66, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &b));
            EXPECT_OK(MPI_Start(&a));
            EXPECT_OK(MPI_Start(&b));
            EXPECT_ERR(MPI_Parrived(a, 6, &(int){0}), MPI_ERR_ARG, "MPI_Parrived", "partition");
            /* Receive partition 5 holds doubles 55..65 of the message: send partition 32
             * (64, 65) is not readied until we say so. Partition 0 arrives meanwhile. */
            int flag = 0;
            while (!flag)
                EXPECT_OK(MPI_Parrived(a, 0, &flag));
            for (int k = 0; k < 100; k++) {
                EXPECT_OK(MPI_Parrived(a, 5, &flag));
                CHECK_INT(flag, 0);
            }
            int go = 1;
            MPI_Send(&go, 1, MPI_INT, 0, 77, MPI_COMM_WORLD);
            EXPECT_OK(MPI_Wait(&a, MPI_STATUS_IGNORE));
            EXPECT_OK(MPI_Wait(&b, MPI_STATUS_IGNORE));
            for (int i = 0; i < 66; i++) {
                CHECK(r1[2 * i] == i + 0.5, "r1[%d] = %g", 2 * i, r1[2 * i]);
                CHECK(r1[2 * i + 1] == 0, "r1[%d] = %g (a gap)", 2 * i + 1, r1[2 * i + 1]);
                CHECK(r2[i] == -i, "r2[%d] = %g", i, r2[i]);
            }
        }
        MPI_Request_free(&a);
        MPI_Request_free(&b);
        MPI_Type_free(&strided);
    }

    /* 3. MPI_PROC_NULL: completes at once, every partition has arrived. */
    {
        int x[4];
        MPI_Request s, r;
        int flag = 0;
        EXPECT_OK(MPI_Psend_init(x, 2, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
        EXPECT_OK(MPI_Precv_init(x, 2, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
        EXPECT_OK(MPI_Start(&s));
        EXPECT_OK(MPI_Start(&r));
        EXPECT_OK(MPI_Pready_range(0, 1, s));
        EXPECT_OK(MPI_Parrived(r, 1, &flag));
        CHECK_INT(flag, 1);
        EXPECT_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        EXPECT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MPI_Request_free(&s);
        MPI_Request_free(&r);
    }

    /* 4. Empty partitions (count 0) still arrive one by one (mpi4py's test_p2p_buf_part):
     * not before they are readied, each after. */
    {
        MPI_Request s, r;
        int flag = 1, dummy = 0;
        int peer = 1 - rank;
        EXPECT_OK(MPI_Psend_init(&dummy, 3, 0, MPI_INT, peer, 4, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
        EXPECT_OK(MPI_Precv_init(&dummy, 3, 0, MPI_INT, peer, 4, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
        EXPECT_OK(MPI_Start(&r));
        MPI_Barrier(MPI_COMM_WORLD);
        for (int p = 0; p < 3; p++) {
            EXPECT_OK(MPI_Parrived(r, p, &flag));
            CHECK_INT(flag, 0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        EXPECT_OK(MPI_Start(&s));
        EXPECT_OK(MPI_Pready(1, s));
        flag = 0;
        while (!flag)
            EXPECT_OK(MPI_Parrived(r, 1, &flag));
        EXPECT_OK(MPI_Parrived(r, 0, &flag));
        CHECK_INT(flag, 0);
        MPI_Barrier(MPI_COMM_WORLD); /* the peer readies its partition 0 only now */
        EXPECT_OK(MPI_Pready(0, s));
        EXPECT_OK(MPI_Pready(2, s));
        EXPECT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        EXPECT_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        MPI_Request_free(&s);
        MPI_Request_free(&r);
    }

    /* 5. Argument errors. */
    {
        int x;
        MPI_Request r;
        EXPECT_ERR(MPI_Psend_init(&x, -1, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
                   MPI_ERR_ARG, "MPI_Psend_init", "partitions");
        EXPECT_ERR(MPI_Psend_init(&x, 1, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
                   MPI_ERR_COUNT, "MPI_Psend_init", "count");
        EXPECT_ERR(MPI_Psend_init(&x, 1, 1, MPI_INT, size, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
                   MPI_ERR_RANK, "MPI_Psend_init", "dest");
        EXPECT_ERR(MPI_Precv_init(&x, 1, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD,
                                  MPI_INFO_NULL, &r),
                   MPI_ERR_RANK, "MPI_Precv_init", "source");
        EXPECT_ERR(MPI_Precv_init(&x, 1, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD,
                                  MPI_INFO_NULL, &r),
                   MPI_ERR_TAG, "MPI_Precv_init", "tag");
        EXPECT_ERR(MPI_Psend_init(&x, 1, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, NULL),
                   MPI_ERR_ARG, "MPI_Psend_init", "request");
        EXPECT_ERR(MPI_Pready(0, MPI_REQUEST_NULL), MPI_ERR_REQUEST, "MPI_Pready", "request");
        EXPECT_ERR(MPI_Parrived(MPI_REQUEST_NULL, 0, &x), MPI_ERR_REQUEST, "MPI_Parrived", "request");
        int y = 0;
        MPI_Request plain;
        EXPECT_OK(MPI_Send_init(&y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &plain));
        EXPECT_ERR(MPI_Pready(0, plain), MPI_ERR_REQUEST, "MPI_Pready", "request");
        MPI_Request_free(&plain);
    }

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
