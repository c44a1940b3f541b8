/* Seed 000's enqueue example ("Offloading asynchronous operations") with Weft's host queue
 * standing in for the CUDA stream: rank 0 sends x, rank 1 receives it into "device" memory
 * and computes y = a*x + y, every step queued on the stream (host functions stand in for
 * cudaMemcpyAsync and the kernel), with no wait until the end. Also: host tasks interleaved
 * with the operations run in stream order (a task filling the send buffer before the send,
 * one checking the receive buffer after the receive), and MPIX_Info_set_hex round-trips. */
#include "wtest.h"
#include <stdlib.h>
#include <string.h>

#define N 1000
static const float a_val = 2.0f, x_val = 1.0f, y_val = 2.0f;

struct copy { float *dst, *src; int n; };
static void copy_fn(void *p)
{
    struct copy *c = p;
    memcpy(c->dst, c->src, c->n * sizeof(float));
}
struct saxpy { int n; float a; float *x, *y; };
static void saxpy_fn(void *p)
{
    struct saxpy *s = p;
    for (int i = 0; i < s->n; i++)
        s->y[i] = s->a * s->x[i] + s->y[i];
}
static void fill_fn(void *p)
{
    int *b = p;
    for (int i = 0; i < 64; i++)
        b[i] = 1000 + i;
}
static int checked = -1;
static void check_fn(void *p)
{
    int *b = p, ok = 1;
    for (int i = 0; i < 64; i++)
        ok &= b[i] == 1000 + i;
    checked = ok;
}

int main(int argc, char **argv)
{
    int rank, size;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    EXPECT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    EXPECT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* MPIX_Info_set_hex: two upper-case hex digits per byte, in memory order. */
    MPI_Info info;
    unsigned char bytes[4] = {0x01, 0xab, 0x00, 0xff};
    char value[64];
    int buflen = sizeof value, flag = 0;
    EXPECT_OK(MPI_Info_create(&info));
    EXPECT_OK(MPIX_Info_set_hex(info, "value", bytes, 4));
    EXPECT_OK(MPI_Info_get_string(info, "value", &buflen, value, &flag));
    CHECK(flag, "set_hex stored the key");
    CHECK_STR(value, "01AB00FF");
    EXPECT_OK(MPI_Info_free(&info));

    /* The example, with the stream type the host queue. */
    EXPECT_OK(MPI_Info_create(&info));
    EXPECT_OK(MPI_Info_set(info, "type", "weft_host_queue"));
    MPIX_Stream mpi_stream;
    EXPECT_OK(MPIX_Stream_create(info, &mpi_stream));
    EXPECT_OK(MPI_Info_free(&info));
    MPI_Comm stream_comm;
    EXPECT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, mpi_stream, &stream_comm));

    float *x = NULL, *y = NULL, *d_x = NULL, *d_y = NULL;
    struct copy h2d, d2h;
    struct saxpy k;
    if (rank == 0) {
        x = malloc(N * sizeof(float));
        for (int i = 0; i < N; i++)
            x[i] = x_val;
        EXPECT_OK(MPIX_Send_enqueue(x, N, MPI_FLOAT, 1, 0, stream_comm));
        /* The seed frees x at once; a queue still uses it, so wait for the stream first. */
        EXPECT_OK(MPIX_Stream_synchronize(mpi_stream));
        free(x);
    } else if (rank == 1) {
        y = malloc(N * sizeof(float));
        d_x = malloc(N * sizeof(float));
        d_y = malloc(N * sizeof(float));
        for (int i = 0; i < N; i++) {
            y[i] = y_val;
            d_x[i] = -1.0f;
            d_y[i] = -1.0f;
        }
        h2d = (struct copy){d_y, y, N};
        EXPECT_OK(MPIX_Stream_enqueue_host_fn(mpi_stream, copy_fn, &h2d));
        EXPECT_OK(MPIX_Recv_enqueue(d_x, N, MPI_FLOAT, 0, 0, stream_comm, MPI_STATUS_IGNORE));
        k = (struct saxpy){N, a_val, d_x, d_y};
        EXPECT_OK(MPIX_Stream_enqueue_host_fn(mpi_stream, saxpy_fn, &k));
        d2h = (struct copy){y, d_y, N};
        EXPECT_OK(MPIX_Stream_enqueue_host_fn(mpi_stream, copy_fn, &d2h));
        EXPECT_OK(MPIX_Stream_synchronize(mpi_stream));
        for (int i = 0; i < N; i++)
            if (y[i] != a_val * x_val + y_val) {
                FAIL("y[%d] = %f, expected %f", i, y[i], a_val * x_val + y_val);
                break;
            }
        free(d_x);
        free(d_y);
        free(y);
    }

    /* Interleaved host tasks: the sender's buffer is filled by a task queued before the
     * send (it holds garbage when the send is queued); the receiver's is checked by a task
     * queued after the receive. Rank 0 sends to every other rank. */
    int buf[64];
    for (int i = 0; i < 64; i++)
        buf[i] = -7;
    MPI_Status st;
    st.MPI_SOURCE = -5;
    if (rank == 0) {
        EXPECT_OK(MPIX_Stream_enqueue_host_fn(mpi_stream, fill_fn, buf));
        for (int r = 1; r < size; r++)
            EXPECT_OK(MPIX_Send_enqueue(buf, 64, MPI_INT, r, 7, stream_comm));
    } else {
        EXPECT_OK(MPIX_Recv_enqueue(buf, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, stream_comm, &st));
        EXPECT_OK(MPIX_Stream_enqueue_host_fn(mpi_stream, check_fn, buf));
        /* Nothing ran yet for sure only if rank 0 is slow; what is certain is the order. */
    }
    EXPECT_OK(MPIX_Stream_synchronize(mpi_stream));
    if (rank != 0) {
        CHECK_INT(checked, 1);
        CHECK_INT(st.MPI_SOURCE, 0);
        CHECK_INT(st.MPI_TAG, 7);
        int count = -1;
        EXPECT_OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK_INT(count, 64);
    }

    /* As in the seed: free the communicator and the stream with no explicit wait (freeing
     * waits for the queue). */
    EXPECT_OK(MPI_Comm_free(&stream_comm));
    EXPECT_OK(MPIX_Stream_free(&mpi_stream));
    CHECK(mpi_stream == MPIX_STREAM_NULL, "free resets the handle");
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
