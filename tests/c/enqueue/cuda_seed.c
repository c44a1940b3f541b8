/* Seed 000's enqueue example on a real cudaStream_t with device buffers (2 ranks), and the
 * stream order of MPI operations interleaved with device work on the same stream:
 *  - the example: rank 0 sends x from device memory; rank 1 receives it into device memory,
 *    and y = a*x + y is computed in stream order (copies to pinned host memory, a host
 *    function, a copy back), all queued with no wait until MPIX_Stream_synchronize;
 *  - order: cudaMemsetAsync before a send is what is sent, one after it is not (a second
 *    send sends it); a receive lands after the cudaMemsetAsync queued before it and before
 *    the cudaMemcpyAsync queued after it; 4 MiB messages;
 *  - a receive shorter than the device buffer leaves the rest of the buffer as it was, and
 *    a strided datatype on device memory sends and receives only its elements (the gaps
 *    keep their bytes);
 *  - nonblocking enqueue (Isend/Irecv + Wait_enqueue/Waitall_enqueue) on the CUDA stream,
 *    host and device buffers;
 *  - 3000 operations in flight on device buffers (staging blocks reused meanwhile);
 *  - MPIX_Stream_synchronize waits for the CUDA stream (a slow host function before it has
 *    run, cudaStreamQuery says idle);
 *  - MPIX_Query_cuda_support() and MPIX_GPU_query_support agree with what the test found.
 * Without CUDA (no libcudart or no device) it checks that Weft says so too and skips. */
#include "wtest.h"
#include "wcuda.h"
#include <stdatomic.h>
#include <unistd.h>

#define N 1000
#define BIG (4 << 20)
static const float a_val = 2.0f, x_val = 1.0f, y_val = 2.0f;

struct saxpy { int n; float a; float *x, *y; };
static void saxpy_fn(void *p)
{
    struct saxpy *s = p;
    for (int i = 0; i < s->n; i++)
        s->y[i] = s->a * s->x[i] + s->y[i];
}
static atomic_int slow_done;
static void slow_fn(void *p)
{
    (void)p;
    usleep(200000);
    atomic_store(&slow_done, 1);
}

static int all_bytes(const unsigned char *b, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != v)
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    int rank, size, yes = -1;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    EXPECT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    EXPECT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    const char *why = wcuda_load();
    EXPECT_OK(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &yes));
    CHECK_INT(yes, why == NULL);
    CHECK_INT(MPIX_Query_cuda_support(), why == NULL);
    EXPECT_OK(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_ZE, &yes));
    CHECK_INT(yes, 0);
    EXPECT_OK(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_HIP, &yes));
    CHECK_INT(yes, 0);
    if (why) {
        if (wtest_errs)
            return wtest_finish();
        wcuda_skip(rank, why);
    }

    wcuda_stream cs;
    CU(wcuda.StreamCreate(&cs));
    MPIX_Stream ms;
    EXPECT_OK(wcuda_mpix_stream(cs, &ms));
    MPI_Comm sc;
    EXPECT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, ms, &sc));
    MPI_Comm_set_errhandler(sc, MPI_ERRORS_RETURN);

    /* The example. */
    float *h_x, *h_y, *d_x, *d_y;
    CU(wcuda.MallocHost((void **)&h_x, N * sizeof(float)));
    CU(wcuda.MallocHost((void **)&h_y, N * sizeof(float)));
    CU(wcuda.Malloc((void **)&d_x, N * sizeof(float)));
    CU(wcuda.Malloc((void **)&d_y, N * sizeof(float)));
    struct saxpy k = {N, a_val, h_x, h_y};
    if (rank == 0) {
        for (int i = 0; i < N; i++)
            h_x[i] = x_val;
        CU(wcuda.MemcpyAsync(d_x, h_x, N * sizeof(float), WCUDA_H2D, cs));
        EXPECT_OK(MPIX_Send_enqueue(d_x, N, MPI_FLOAT, 1, 0, sc));
    } else if (rank == 1) {
        for (int i = 0; i < N; i++)
            h_y[i] = y_val;
        CU(wcuda.MemcpyAsync(d_y, h_y, N * sizeof(float), WCUDA_H2D, cs));
        CU(wcuda.MemsetAsync(d_x, 0xff, N * sizeof(float), cs));
        EXPECT_OK(MPIX_Recv_enqueue(d_x, N, MPI_FLOAT, 0, 0, sc, MPI_STATUS_IGNORE));
        /* The "kernel": device -> host, y = a*x + y on the stream, host -> device. */
        CU(wcuda.MemcpyAsync(h_x, d_x, N * sizeof(float), WCUDA_D2H, cs));
        CU(wcuda.MemcpyAsync(h_y, d_y, N * sizeof(float), WCUDA_D2H, cs));
        EXPECT_OK(MPIX_Stream_enqueue_host_fn(ms, saxpy_fn, &k));
        CU(wcuda.MemcpyAsync(d_y, h_y, N * sizeof(float), WCUDA_H2D, cs));
    }
    EXPECT_OK(MPIX_Stream_synchronize(ms));
    if (rank == 1) {
        float *res = calloc(N, sizeof(float));
        CU(wcuda.Memcpy(res, d_y, N * sizeof(float), WCUDA_D2H));
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += res[i] != a_val * x_val + y_val;
        CHECK(bad == 0, "%d of %d elements of y are not a*x+y = %g (y[0] = %g)", bad, N,
              a_val * x_val + y_val, res[0]);
        free(res);
    }

    /* Order with device work, 4 MiB messages. */
    unsigned char *d_big, *h1, *h2;
    CU(wcuda.Malloc((void **)&d_big, BIG));
    CU(wcuda.MallocHost((void **)&h1, BIG));
    CU(wcuda.MallocHost((void **)&h2, BIG));
    if (rank == 0) {
        CU(wcuda.MemsetAsync(d_big, 0x11, BIG, cs));
        EXPECT_OK(MPIX_Send_enqueue(d_big, BIG, MPI_BYTE, 1, 1, sc));
        CU(wcuda.MemsetAsync(d_big, 0x22, BIG, cs));
        EXPECT_OK(MPIX_Send_enqueue_c(d_big, (MPI_Count)BIG, MPI_BYTE, 1, 1, sc));
    } else if (rank == 1) {
        CU(wcuda.MemsetAsync(d_big, 0xee, BIG, cs));
        EXPECT_OK(MPIX_Recv_enqueue(d_big, BIG, MPI_BYTE, 0, 1, sc, MPI_STATUS_IGNORE));
        CU(wcuda.MemcpyAsync(h1, d_big, BIG, WCUDA_D2H, cs));
        CU(wcuda.MemsetAsync(d_big, 0xee, BIG, cs));
        EXPECT_OK(MPIX_Recv_enqueue_c(d_big, (MPI_Count)BIG, MPI_BYTE, 0, 1, sc,
                                      MPI_STATUS_IGNORE));
        CU(wcuda.MemcpyAsync(h2, d_big, BIG, WCUDA_D2H, cs));
    }
    EXPECT_OK(MPIX_Stream_synchronize(ms));
    if (rank == 1) {
        CHECK(all_bytes(h1, BIG, 0x11), "first message: h1[0]=%#x h1[last]=%#x, want 0x11",
              h1[0], h1[BIG - 1]);
        CHECK(all_bytes(h2, BIG, 0x22), "second message: h2[0]=%#x h2[last]=%#x, want 0x22",
              h2[0], h2[BIG - 1]);
    }

    /* A short receive and strided datatypes on device memory. */
    MPI_Datatype vec;
    EXPECT_OK(MPI_Type_vector(8, 1, 2, MPI_INT, &vec));
    EXPECT_OK(MPI_Type_commit(&vec));
    int *d_i, *h_i;
    static MPI_Status st;
    CU(wcuda.Malloc((void **)&d_i, 100 * sizeof(int)));
    CU(wcuda.MallocHost((void **)&h_i, 100 * sizeof(int)));
    if (rank == 0) {
        for (int i = 0; i < 100; i++)
            h_i[i] = i;
        CU(wcuda.MemcpyAsync(d_i, h_i, 100 * sizeof(int), WCUDA_H2D, cs));
        EXPECT_OK(MPIX_Send_enqueue(d_i, 10, MPI_INT, 1, 2, sc));
        EXPECT_OK(MPIX_Send_enqueue(d_i, 1, vec, 1, 3, sc)); /* 0 2 4 ... 14 */
        EXPECT_OK(MPIX_Send_enqueue(d_i + 50, 8, MPI_INT, 1, 4, sc)); /* 50 ... 57 */
    } else if (rank == 1) {
        CU(wcuda.MemsetAsync(d_i, 0x5a, 100 * sizeof(int), cs));
        EXPECT_OK(MPIX_Recv_enqueue(d_i, 100, MPI_INT, 0, 2, sc, &st));
        CU(wcuda.MemcpyAsync(h_i, d_i, 100 * sizeof(int), WCUDA_D2H, cs));
        EXPECT_OK(MPIX_Stream_synchronize(ms));
        int n = -1;
        EXPECT_OK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK_INT(n, 10);
        CHECK_INT(st.MPI_SOURCE, 0);
        CHECK_INT(st.MPI_TAG, 2);
        for (int i = 0; i < 10; i++)
            CHECK_INT(h_i[i], i);
        CHECK(all_bytes((unsigned char *)(h_i + 10), 90 * sizeof(int), 0x5a),
              "the 90 ints after a 10-int message were changed (h_i[10] = %#x)", h_i[10]);
        /* Strided send received contiguously, contiguous send received strided. */
        CU(wcuda.MemsetAsync(d_i, 0x5a, 100 * sizeof(int), cs));
        EXPECT_OK(MPIX_Recv_enqueue(d_i, 8, MPI_INT, 0, 3, sc, MPI_STATUS_IGNORE));
        EXPECT_OK(MPIX_Recv_enqueue(d_i + 20, 1, vec, 0, 4, sc, MPI_STATUS_IGNORE));
        CU(wcuda.MemcpyAsync(h_i, d_i, 100 * sizeof(int), WCUDA_D2H, cs));
        EXPECT_OK(MPIX_Stream_synchronize(ms));
        for (int i = 0; i < 8; i++) {
            CHECK_INT(h_i[i], 2 * i);
            CHECK_INT(h_i[20 + 2 * i], 50 + i);
            CHECK_INT(h_i[21 + 2 * i], 0x5a5a5a5a);
        }
        CHECK_INT(h_i[8], 0x5a5a5a5a);
    }
    EXPECT_OK(MPIX_Stream_synchronize(ms));

    /* Nonblocking enqueue on the CUDA stream: host buffers, then device buffers (the
     * receive's copy back comes after the wait: a memset queued between the start and the
     * wait of the send does not change what is sent, since the send buffer was staged at
     * the start). */
    int sendv[4] = {rank, rank + 10, rank + 20, rank + 30}, recvv[4] = {-1, -1, -1, -1};
    MPI_Request rq[2];
    int peer = 1 - rank;
    EXPECT_OK(MPIX_Irecv_enqueue(recvv, 4, MPI_INT, peer, 5, sc, &rq[0]));
    EXPECT_OK(MPIX_Isend_enqueue(sendv, 4, MPI_INT, peer, 5, sc, &rq[1]));
    EXPECT_OK(MPIX_Waitall_enqueue(2, rq, MPI_STATUSES_IGNORE));
    EXPECT_OK(MPIX_Stream_synchronize(ms));
    for (int i = 0; i < 4; i++)
        CHECK_INT(recvv[i], peer + 10 * i);
    int *d_s, *d_r;
    static MPI_Status sts[2];
    CU(wcuda.Malloc((void **)&d_s, 4 * sizeof(int)));
    CU(wcuda.Malloc((void **)&d_r, 4 * sizeof(int)));
    CU(wcuda.MemcpyAsync(d_s, sendv, sizeof sendv, WCUDA_H2D, cs));
    CU(wcuda.MemsetAsync(d_r, 0x5a, 4 * sizeof(int), cs));
    EXPECT_OK(MPIX_Irecv_enqueue(d_r, 4, MPI_INT, peer, 6, sc, &rq[0]));
    EXPECT_OK(MPIX_Isend_enqueue(d_s, 4, MPI_INT, peer, 6, sc, &rq[1]));
    CU(wcuda.MemsetAsync(d_s, 0, 4 * sizeof(int), cs));
    EXPECT_OK(MPIX_Wait_enqueue(&rq[1], MPI_STATUS_IGNORE));
    EXPECT_OK(MPIX_Wait_enqueue(&rq[0], &sts[0]));
    CU(wcuda.MemcpyAsync(h_i, d_r, 4 * sizeof(int), WCUDA_D2H, cs));
    EXPECT_OK(MPIX_Stream_synchronize(ms));
    for (int i = 0; i < 4; i++)
        CHECK_INT(h_i[i], peer + 10 * i);
    CHECK_INT(sts[0].MPI_SOURCE, peer);
    CU(wcuda.MemsetAsync(d_r, 0x5a, 4 * sizeof(int), cs));
    EXPECT_OK(MPIX_Irecv_enqueue_c(d_r, 4, MPI_INT, peer, 7, sc, &rq[0]));
    EXPECT_OK(MPIX_Isend_enqueue_c(d_s, 4, MPI_INT, peer, 7, sc, &rq[1]));
    EXPECT_OK(MPIX_Waitall_enqueue(2, rq, sts));
    CU(wcuda.MemcpyAsync(h_i, d_r, 4 * sizeof(int), WCUDA_D2H, cs));
    EXPECT_OK(MPIX_Stream_synchronize(ms));
    for (int i = 0; i < 4; i++)
        CHECK_INT(h_i[i], 0);
    CHECK_INT(sts[0].MPI_TAG, 7);
    CU(wcuda.Free(d_s));
    CU(wcuda.Free(d_r));

    /* Many operations in flight: 3000 sends of 4 bytes from distinct device addresses (and
     * receives into distinct ones), no wait between them, so that staging blocks are reused
     * while earlier operations are still queued; every value checked. */
    enum { MANY = 3000 };
    int *d_many, *h_many;
    CU(wcuda.Malloc((void **)&d_many, MANY * sizeof(int)));
    CU(wcuda.MallocHost((void **)&h_many, MANY * sizeof(int)));
    for (int i = 0; i < MANY; i++)
        h_many[i] = rank == 0 ? i * 7 + 1 : -1;
    CU(wcuda.MemcpyAsync(d_many, h_many, MANY * sizeof(int), WCUDA_H2D, cs));
    for (int i = 0; i < MANY; i++) {
        if (rank == 0)
            EXPECT_OK(MPIX_Send_enqueue(d_many + i, 1, MPI_INT, 1, 8, sc));
        else if (rank == 1)
            EXPECT_OK(MPIX_Recv_enqueue(d_many + i, 1, MPI_INT, 0, 8, sc, MPI_STATUS_IGNORE));
    }
    CU(wcuda.MemcpyAsync(h_many, d_many, MANY * sizeof(int), WCUDA_D2H, cs));
    EXPECT_OK(MPIX_Stream_synchronize(ms));
    int wrong = 0;
    for (int i = 0; i < MANY; i++)
        wrong += h_many[i] != i * 7 + 1;
    CHECK(wrong == 0, "%d of %d values received wrong", wrong, MANY);
    CU(wcuda.Free(d_many));
    CU(wcuda.FreeHost(h_many));

    /* MPIX_Stream_synchronize is cudaStreamSynchronize. */
    atomic_store(&slow_done, 0);
    EXPECT_OK(MPIX_Stream_enqueue_host_fn(ms, slow_fn, NULL));
    CU(wcuda.MemsetAsync(d_big, 0, BIG, cs));
    EXPECT_OK(MPIX_Stream_synchronize(ms));
    CHECK_INT(atomic_load(&slow_done), 1);
    CHECK_INT(wcuda.StreamQuery(cs), 0);

    EXPECT_OK(MPI_Type_free(&vec));
    EXPECT_OK(MPI_Comm_free(&sc));
    EXPECT_OK(MPIX_Stream_free(&ms));
    CU(wcuda.StreamDestroy(cs));
    CU(wcuda.Free(d_x));
    CU(wcuda.Free(d_y));
    CU(wcuda.Free(d_big));
    CU(wcuda.Free(d_i));
    CU(wcuda.FreeHost(h_x));
    CU(wcuda.FreeHost(h_y));
    CU(wcuda.FreeHost(h1));
    CU(wcuda.FreeHost(h2));
    CU(wcuda.FreeHost(h_i));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
