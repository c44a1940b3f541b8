/* Persistent collectives: initialised once, started many times (MPI_Start and MPI_Startall),
 * with new data before every start; mixed with nonblocking and blocking collectives on the
 * same communicator; freed while inactive. */
#include "wtest.h"

#define N 300
static int rank, size;

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int bc[N], in[N], out[N], scan[N], *ag = malloc(N * size * sizeof(int));
    int *a2a_in = malloc(N * size * sizeof(int)), *a2a_out = malloc(N * size * sizeof(int));
    MPI_Request r[6];
    int root = size - 1;
    EXPECT_OK(MPI_Bcast_init(bc, N, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
    EXPECT_OK(MPI_Allreduce_init(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                 &r[1]));
    EXPECT_OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]));
    EXPECT_OK(MPI_Allgather_init(in, N, MPI_INT, ag, N, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                                 &r[3]));
    EXPECT_OK(MPI_Alltoall_init(a2a_in, N, MPI_INT, a2a_out, N, MPI_INT, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &r[4]));
    EXPECT_OK(MPI_Scan_init(in, scan, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &r[5]));
    for (int it = 0; it < 6; it++) {
        for (int i = 0; i < N; i++) {
            bc[i] = rank == root ? it * 1000 + i : -1;
            in[i] = rank * it + i;
        }
        for (int j = 0; j < N * size; j++)
            a2a_in[j] = rank * 100000 + it * 1000 + j;
        if (it % 2 == 0) {
            EXPECT_OK(MPI_Startall(6, r));
        } else {
            for (int k = 5; k >= 0; k--)
                EXPECT_OK(MPI_Start(&r[k]));
        }
        /* Other collectives in between, in the same order everywhere. */
        int x = rank, y = 0;
        EXPECT_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK_INT(y, size * (size - 1) / 2);
        EXPECT_OK(MPI_Waitall(6, r, MPI_STATUSES_IGNORE));
        for (int k = 0; k < 6; k++)
            CHECK(r[k] != MPI_REQUEST_NULL, "a persistent request stays allocated");
        int bad = 0;
        for (int i = 0; i < N; i++) {
            bad += bc[i] != it * 1000 + i;
            bad += out[i] != it * size * (size - 1) / 2 + size * i;
            bad += scan[i] != it * rank * (rank + 1) / 2 + (rank + 1) * i;
        }
        for (int q = 0; q < size; q++)
            for (int i = 0; i < N; i++) {
                bad += ag[q * N + i] != q * it + i;
                bad += a2a_out[q * N + i] != q * 100000 + it * 1000 + rank * N + i;
            }
        CHECK(bad == 0, "iteration %d: %d wrong values", it, bad);
    }
    for (int k = 0; k < 6; k++)
        EXPECT_OK(MPI_Request_free(&r[k]));
    free(ag);
    free(a2a_in);
    free(a2a_out);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
