/* Non-overtaking order per (sender, communicator, tag), eager and rendezvous interleaved,
 * and wildcards (MPI_ANY_SOURCE, MPI_ANY_TAG) with statuses. Needs 3+ ranks. */
#include "pt2pt_util.h"

#define M 200
#define BIG 50000

int main(int argc, char **argv)
{
    int rank, size, i, v;
    MPI_Status st;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *big = malloc(BIG * sizeof(int));

    /* Order: rank 1 sends M small messages then a big one then M small, same tag; rank 0
     * receives them in posting order with the sequence numbers it expects. */
    if (rank == 1) {
        for (i = 0; i < M; i++)
            EXPECT_OK(MPI_Send(&i, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
        for (i = 0; i < BIG; i++)
            big[i] = i ^ 0x5a5a;
        EXPECT_OK(MPI_Send(big, BIG, MPI_INT, 0, 5, MPI_COMM_WORLD));
        for (i = M; i < 2 * M; i++)
            EXPECT_OK(MPI_Send(&i, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
    } else if (rank == 0) {
        MPI_Request r[2 * M];
        int got[2 * M];
        /* half posted before, half after the messages arrive */
        for (i = 0; i < M; i++)
            EXPECT_OK(MPI_Irecv(&got[i], 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &r[i]));
        EXPECT_OK(MPI_Waitall(M, r, MPI_STATUSES_IGNORE));
        EXPECT_OK(MPI_Recv(big, BIG, MPI_INT, 1, 5, MPI_COMM_WORLD, &st));
        for (i = 0; i < BIG; i++)
            if (big[i] != (i ^ 0x5a5a)) {
                FAIL("big[%d] = %d", i, big[i]);
                break;
            }
        for (i = M; i < 2 * M; i++)
            EXPECT_OK(MPI_Recv(&got[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        for (i = 0; i < 2 * M; i++)
            if (got[i] != i) {
                FAIL("message %d carried %d", i, got[i]);
                break;
            }
    }
    all_sync();

    /* Tags select: rank 1 sends tag 1 then tag 2; rank 0 receives tag 2 first. */
    if (rank == 1) {
        v = 111;
        EXPECT_OK(MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
        v = 222;
        EXPECT_OK(MPI_Send(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD));
    } else if (rank == 0) {
        EXPECT_OK(MPI_Recv(&v, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &st));
        CHECK_INT(v, 222);
        CHECK_INT(st.MPI_TAG, 2);
        EXPECT_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK_INT(v, 111);
        CHECK_INT(st.MPI_SOURCE, 1);
        CHECK_INT(st.MPI_TAG, 1);
    }
    all_sync();

    /* Wildcards: every other rank sends its rank with tag = rank + 10; rank 0 receives with
     * ANY_SOURCE/ANY_TAG and checks each status names the sender. */
    if (rank != 0) {
        v = rank * 7;
        EXPECT_OK(MPI_Send(&v, 1, MPI_INT, 0, rank + 10, MPI_COMM_WORLD));
    } else {
        int seen[64] = {0};
        for (i = 1; i < size; i++) {
            EXPECT_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK_INT(v, st.MPI_SOURCE * 7);
            CHECK_INT(st.MPI_TAG, st.MPI_SOURCE + 10);
            if (st.MPI_SOURCE > 0 && st.MPI_SOURCE < 64)
                seen[st.MPI_SOURCE]++;
        }
        for (i = 1; i < size && i < 64; i++)
            CHECK_INT(seen[i], 1);
        /* ANY_SOURCE with a specific tag picks the right sender */
        all_sync();
        if (size > 2) {
            EXPECT_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 2 + 20, MPI_COMM_WORLD, &st));
            CHECK_INT(st.MPI_SOURCE, 2);
            CHECK_INT(v, 2);
            EXPECT_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK_INT(st.MPI_SOURCE, 1);
        }
        /* PROC_NULL receive */
        v = 77;
        EXPECT_OK(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
        CHECK_INT(v, 77);
        CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
        CHECK_INT(st.MPI_TAG, MPI_ANY_TAG);
        int c = -1;
        MPI_Get_count(&st, MPI_INT, &c);
        CHECK_INT(c, 0);
    }
    if (rank != 0) {
        all_sync();
        if (size > 2 && rank <= 2) {
            v = rank;
            EXPECT_OK(MPI_Send(&v, 1, MPI_INT, 0, rank + 20, MPI_COMM_WORLD));
        }
    }
    EXPECT_OK(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    all_sync();
    free(big);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
