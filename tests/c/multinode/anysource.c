/* Any-source receives mixing transports (run with WEFT_NODES=2 on 4 ranks: ranks 0,1 share a
 * logical node, 2,3 the other): rank 0 takes every message with MPI_ANY_SOURCE, small ones
 * (eager) and large ones (rendezvous) from its node peer (shared memory) and from the other
 * node (UCX), and checks contents and per-sender order. Also checks the node map itself:
 * MPI_COMM_TYPE_SHARED splits into the logical nodes, of argv[1] ranks each. */
#include "wtest.h"
#include <stdlib.h>

#define ROUNDS 40
#define LARGE (200 * 1000)

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_world_rank();

    MPI_Comm node;
    EXPECT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int node_size;
    MPI_Comm_size(node, &node_size);
    CHECK_INT(node_size, argc > 1 ? atoi(argv[1]) : 0);
    MPI_Comm_free(&node);

    int *buf = malloc(LARGE * sizeof(int));
    if (rank == 0) {
        int next[64] = {0};
        int total = (size - 1) * ROUNDS;
        for (int i = 0; i < total; i++) {
            MPI_Status st;
            EXPECT_OK(MPI_Recv(buf, LARGE, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            int src = st.MPI_SOURCE, seq = st.MPI_TAG;
            CHECK(src > 0 && src < size, "source %d", src);
            CHECK(seq == next[src], "from %d: message %d arrived when %d was due", src, seq, next[src]);
            next[src] = seq + 1;
            int count;
            MPI_Get_count(&st, MPI_INT, &count);
            int want = (seq % 3 == 0) ? LARGE : 1 + seq;
            CHECK(count == want, "from %d message %d: %d ints, expected %d", src, seq, count, want);
            for (int k = 0; k < count; k += 997)
                CHECK(buf[k] == src * 1000000 + seq + k, "from %d message %d: word %d is %d", src, seq, k, buf[k]);
            CHECK(buf[count - 1] == src * 1000000 + seq + count - 1, "from %d message %d: last word", src, seq);
        }
    } else {
        for (int seq = 0; seq < ROUNDS; seq++) {
            int n = (seq % 3 == 0) ? LARGE : 1 + seq;
            for (int k = 0; k < n; k++)
                buf[k] = rank * 1000000 + seq + k;
            if (seq % 2)
                EXPECT_OK(MPI_Ssend(buf, n, MPI_INT, 0, seq, MPI_COMM_WORLD));
            else
                EXPECT_OK(MPI_Send(buf, n, MPI_INT, 0, seq, MPI_COMM_WORLD));
        }
    }
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
