/* Every enqueued collective on a real cudaStream_t with device buffers, against its
 * blocking counterpart on host buffers (same inputs, results copied back and compared
 * element by element): Allreduce (also in place, and with a host send buffer), Bcast,
 * Reduce (a non-root passes a one-element device buffer, which must not be touched beyond
 * it), Allgather, Alltoall, Reduce_scatter_block (the receive buffer holds recvcount
 * elements exactly, at the end of its allocation), Barrier. Each device buffer is its own
 * cudaMalloc of exactly the size the operation uses. Skips without CUDA. */
#include "wtest.h"
#include "wcuda.h"

#define N 37

static wcuda_stream cs;

static int *dev(int n)
{
    void *p = NULL;
    CU(wcuda.Malloc(&p, (size_t)n * sizeof(int)));
    return p;
}
static void put(int *d, const int *h, int n)
{
    CU(wcuda.MemcpyAsync(d, h, (size_t)n * sizeof(int), WCUDA_H2D, cs));
}
static void get(int *h, const int *d, int n)
{
    CU(wcuda.MemcpyAsync(h, d, (size_t)n * sizeof(int), WCUDA_D2H, cs));
}
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
    const char *why = wcuda_load();
    CHECK_INT(MPIX_Query_cuda_support(), why == NULL);
    if (why) {
        if (wtest_errs)
            return wtest_finish();
        wcuda_skip(rank, why);
    }

    CU(wcuda.StreamCreate(&cs));
    MPIX_Stream s;
    MPI_Comm c;
    EXPECT_OK(wcuda_mpix_stream(cs, &s));
    EXPECT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, s, &c));

    int total = N * size;
    int *in, *want, *got, *got2;
    CU(wcuda.MallocHost((void **)&in, total * sizeof(int)));
    CU(wcuda.MallocHost((void **)&want, total * sizeof(int)));
    CU(wcuda.MallocHost((void **)&got, total * sizeof(int)));
    CU(wcuda.MallocHost((void **)&got2, total * sizeof(int)));
    for (int i = 0; i < total; i++)
        in[i] = rank * 1000 + i * 3 - 50;
    int *d_in = dev(total), *d_n = dev(N), *d_n2 = dev(N), *d_all = dev(total);
    put(d_in, in, total);

    /* Allreduce: device to device, in place, host send buffer. */
    EXPECT_OK(MPI_Allreduce(in, want, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CU(wcuda.MemsetAsync(d_n, 0, N * sizeof(int), cs));
    EXPECT_OK(MPIX_Allreduce_enqueue(d_in, d_n, N, MPI_INT, MPI_SUM, c));
    get(got, d_n, N);
    put(d_n2, in, N);
    EXPECT_OK(MPIX_Allreduce_enqueue_c(MPI_IN_PLACE, d_n2, (MPI_Count)N, MPI_INT, MPI_SUM, c));
    get(got2, d_n2, N);
    EXPECT_OK(MPIX_Stream_synchronize(s));
    check_same("MPIX_Allreduce_enqueue (device)", got, want, N);
    check_same("MPIX_Allreduce_enqueue_c (device, in place)", got2, want, N);
    CU(wcuda.MemsetAsync(d_n, 0, N * sizeof(int), cs));
    EXPECT_OK(MPIX_Allreduce_enqueue(in, d_n, N, MPI_INT, MPI_SUM, c));
    get(got, d_n, N);
    EXPECT_OK(MPIX_Stream_synchronize(s));
    check_same("MPIX_Allreduce_enqueue (host send, device receive)", got, want, N);

    /* Bcast from the last rank. */
    memcpy(want, in, sizeof(int) * N);
    EXPECT_OK(MPI_Bcast(want, N, MPI_INT, size - 1, MPI_COMM_WORLD));
    put(d_n, in, N);
    EXPECT_OK(MPIX_Bcast_enqueue(d_n, N, MPI_INT, size - 1, c));
    get(got, d_n, N);
    EXPECT_OK(MPIX_Stream_synchronize(s));
    check_same("MPIX_Bcast_enqueue (device)", got, want, N);

    /* Reduce (MAX) to rank 0; the others pass a one-element device receive buffer (not
     * significant there: it must not be read or written past its end). */
    int *d_one = dev(1), one = 0x5a5a;
    put(d_one, &one, 1);
    EXPECT_OK(MPI_Reduce(in, want, N, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD));
    CU(wcuda.MemsetAsync(d_n, 0, N * sizeof(int), cs));
    EXPECT_OK(MPIX_Reduce_enqueue_c(d_in, rank == 0 ? d_n : d_one, (MPI_Count)N, MPI_INT,
                                    MPI_MAX, 0, c));
    get(got, d_n, N);
    get(&one, d_one, 1);
    EXPECT_OK(MPIX_Stream_synchronize(s));
    if (rank == 0)
        check_same("MPIX_Reduce_enqueue_c (device)", got, want, N);
    else
        CHECK_INT(one, 0x5a5a);

    /* Allgather. */
    EXPECT_OK(MPI_Allgather(in, N, MPI_INT, want, N, MPI_INT, MPI_COMM_WORLD));
    CU(wcuda.MemsetAsync(d_all, 0, total * sizeof(int), cs));
    EXPECT_OK(MPIX_Allgather_enqueue(d_in, N, MPI_INT, d_all, N, MPI_INT, c));
    get(got, d_all, total);
    EXPECT_OK(MPIX_Stream_synchronize(s));
    check_same("MPIX_Allgather_enqueue (device)", got, want, total);

    /* Alltoall. */
    EXPECT_OK(MPI_Alltoall(in, N, MPI_INT, want, N, MPI_INT, MPI_COMM_WORLD));
    CU(wcuda.MemsetAsync(d_all, 0, total * sizeof(int), cs));
    EXPECT_OK(MPIX_Alltoall_enqueue_c(d_in, N, MPI_INT, d_all, N, MPI_INT, c));
    get(got, d_all, total);
    EXPECT_OK(MPIX_Stream_synchronize(s));
    check_same("MPIX_Alltoall_enqueue_c (device)", got, want, total);

    /* Reduce_scatter_block (PROD of small values): the receive buffer is N elements. */
    int *small = malloc(total * sizeof(int));
    for (int i = 0; i < total; i++)
        small[i] = (rank + i) % 3 + 1;
    EXPECT_OK(MPI_Reduce_scatter_block(small, want, N, MPI_INT, MPI_PROD, MPI_COMM_WORLD));
    put(d_all, small, total);
    CU(wcuda.MemsetAsync(d_n, 0, N * sizeof(int), cs));
    EXPECT_OK(MPIX_Reduce_scatter_block_enqueue(d_all, d_n, N, MPI_INT, MPI_PROD, c));
    get(got, d_n, N);
    EXPECT_OK(MPIX_Stream_synchronize(s));
    check_same("MPIX_Reduce_scatter_block_enqueue (device)", got, want, N);
    /* In place: the input is the receive buffer's N*size elements. */
    put(d_all, small, total);
    EXPECT_OK(MPIX_Reduce_scatter_block_enqueue(MPI_IN_PLACE, d_all, N, MPI_INT, MPI_PROD, c));
    get(got, d_all, N);
    EXPECT_OK(MPIX_Stream_synchronize(s));
    check_same("MPIX_Reduce_scatter_block_enqueue (device, in place)", got, want, N);

    /* Barrier between device work: everyone's memset before it has run when it returns. */
    CU(wcuda.MemsetAsync(d_n, 0x01, N * sizeof(int), cs));
    EXPECT_OK(MPIX_Barrier_enqueue(c));
    get(got, d_n, N);
    EXPECT_OK(MPIX_Stream_synchronize(s));
    CHECK_INT(got[N - 1], 0x01010101);

    EXPECT_OK(MPI_Comm_free(&c));
    EXPECT_OK(MPIX_Stream_free(&s));
    CU(wcuda.StreamDestroy(cs));
    int *bufs[] = {d_in, d_n, d_n2, d_all, d_one};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        CU(wcuda.Free(bufs[i]));
    CU(wcuda.FreeHost(in));
    CU(wcuda.FreeHost(want));
    CU(wcuda.FreeHost(got));
    CU(wcuda.FreeHost(got2));
    free(small);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
