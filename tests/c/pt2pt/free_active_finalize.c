/* Requests freed while active complete during MPI_Finalize (MPI 4.1 §3.7.3: the
 * implementation completes them; MPICH's pt2pt/rqfree). Rank 1 frees a large receive and a
 * large send that rank 0 matches only after rank 1 has gone into MPI_Finalize (rank 1 tells
 * it so first): rank 0's send and receive need rank 1 to take part (rendezvous), so rank 1
 * must not leave before. After MPI_Finalize the freed receive's buffer holds the data. */
#include "wtest.h"

#define N (1 << 17) /* ints: far above the eager limit */

static int in[N], out[N];

int main(int argc, char **argv)
{
    int rank, size, i, go = 1;
    MPI_Request r;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (i = 0; i < N; i++) {
        in[i] = -1;
        out[i] = rank * N + i;
    }
    if (rank == 1) {
        EXPECT_OK(MPI_Irecv(in, N, MPI_INT, 0, 7, MPI_COMM_WORLD, &r));
        EXPECT_OK(MPI_Request_free(&r));
        CHECK(r == MPI_REQUEST_NULL, "freed");
        EXPECT_OK(MPI_Isend(out, N, MPI_INT, 0, 8, MPI_COMM_WORLD, &r));
        EXPECT_OK(MPI_Request_free(&r));
        EXPECT_OK(MPI_Send(&go, 1, MPI_INT, 0, 6, MPI_COMM_WORLD));
    } else if (rank == 0) {
        EXPECT_OK(MPI_Recv(&go, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        EXPECT_OK(MPI_Send(out, N, MPI_INT, 1, 7, MPI_COMM_WORLD));
        EXPECT_OK(MPI_Recv(in, N, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (i = 0; i < N && in[i] == N + i; i++)
            ;
        CHECK(i == N, "rank 0 received rank 1's freed send: in[%d] = %d", i, in[i]);
    }
    EXPECT_OK(MPI_Finalize());
    if (rank == 1) {
        for (i = 0; i < N && in[i] == i; i++)
            ;
        CHECK(i == N, "the freed receive completed by MPI_Finalize: in[%d] = %d", i, in[i]);
    }
    return wtest_finish();
}
