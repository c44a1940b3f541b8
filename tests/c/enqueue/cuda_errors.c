/* Errors of operations queued on a real cudaStream_t (2 ranks): a truncated receive into a
 * device buffer reaches the communicator's errhandler when it runs and is reported once by
 * the next MPIX_Stream_synchronize (MPI_ERR_TRUNCATE), the stream goes on working after
 * it, and the device buffer keeps what it had beyond the receive; the same for a
 * nonblocking receive of a device buffer (reported after its queued wait); CUDA's legacy
 * default stream (value 0) is a stream too. Skips without CUDA. */
#include "wtest.h"
#include "wcuda.h"
#include <stdatomic.h>

static atomic_int handler_calls, handler_class;

static void handler(MPI_Comm *comm, int *code, ...)
{
    int cls = -1;
    (void)comm;
    MPI_Error_class(*code, &cls);
    atomic_store(&handler_class, cls);
    atomic_fetch_add(&handler_calls, 1);
}

int main(int argc, char **argv)
{
    int rank, size;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    EXPECT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    EXPECT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const char *why = wcuda_load();
    CHECK_INT(MPIX_Query_cuda_support(), why == NULL);
    if (why) {
        if (wtest_errs)
            return wtest_finish();
        wcuda_skip(rank, why);
    }

    wcuda_stream cs;
    CU(wcuda.StreamCreate(&cs));
    MPIX_Stream s;
    MPI_Comm c;
    EXPECT_OK(wcuda_mpix_stream(cs, &s));
    EXPECT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, s, &c));
    MPI_Errhandler eh;
    EXPECT_OK(MPI_Comm_create_errhandler(handler, &eh));
    EXPECT_OK(MPI_Comm_set_errhandler(c, eh));

    int *d, h[16];
    CU(wcuda.Malloc((void **)&d, 16 * sizeof(int)));
    for (int i = 0; i < 16; i++)
        h[i] = 100 + i;
    CU(wcuda.Memcpy(d, h, sizeof h, WCUDA_H2D));
    if (rank == 0) {
        EXPECT_OK(MPIX_Send_enqueue(d, 10, MPI_INT, 1, 0, c));
        EXPECT_OK(MPIX_Stream_synchronize(s));
    } else if (rank == 1) {
        CU(wcuda.MemsetAsync(d, 0x5a, 16 * sizeof(int), cs));
        EXPECT_OK(MPIX_Recv_enqueue(d, 5, MPI_INT, 0, 0, c, MPI_STATUS_IGNORE));
        EXPECT_ERR(MPIX_Stream_synchronize(s), MPI_ERR_TRUNCATE, "MPIX_Stream_synchronize",
                   NULL);
        CHECK_INT(atomic_load(&handler_calls), 1);
        CHECK_INT(atomic_load(&handler_class), MPI_ERR_TRUNCATE);
        EXPECT_OK(MPIX_Stream_synchronize(s)); /* reported once */
        CU(wcuda.Memcpy(h, d, sizeof h, WCUDA_D2H));
        for (int i = 5; i < 16; i++)
            CHECK_INT(h[i], 0x5a5a5a5a);
    }

    /* The stream works after the error. */
    int v = rank == 0 ? 4242 : 0;
    CU(wcuda.Memcpy(d, &v, sizeof v, WCUDA_H2D));
    if (rank == 0)
        EXPECT_OK(MPIX_Send_enqueue(d, 1, MPI_INT, 1, 1, c));
    else if (rank == 1)
        EXPECT_OK(MPIX_Recv_enqueue(d, 1, MPI_INT, 0, 1, c, MPI_STATUS_IGNORE));
    EXPECT_OK(MPIX_Stream_synchronize(s));
    CU(wcuda.Memcpy(&v, d, sizeof v, WCUDA_D2H));
    if (rank < 2)
        CHECK_INT(v, 4242);

    /* A truncated nonblocking receive into a device buffer: reported by the wait. */
    MPI_Request r = MPI_REQUEST_NULL;
    if (rank == 0) {
        EXPECT_OK(MPIX_Isend_enqueue(d, 4, MPI_INT, 1, 2, c, &r));
        EXPECT_OK(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE));
        EXPECT_OK(MPIX_Stream_synchronize(s));
    } else if (rank == 1) {
        EXPECT_OK(MPIX_Irecv_enqueue(d, 2, MPI_INT, 0, 2, c, &r));
        EXPECT_OK(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE));
        EXPECT_ERR(MPIX_Stream_synchronize(s), MPI_ERR_TRUNCATE, "MPIX_Stream_synchronize",
                   NULL);
    }
    CHECK_INT(atomic_load(&handler_calls), rank == 1 ? 2 : 0);
    EXPECT_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    EXPECT_OK(MPI_Errhandler_free(&eh));
    EXPECT_OK(MPI_Comm_free(&c));
    EXPECT_OK(MPIX_Stream_free(&s));

    /* The legacy default stream. */
    EXPECT_OK(wcuda_mpix_stream(NULL, &s));
    EXPECT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, s, &c));
    v = rank == 0 ? 77 : 0;
    CU(wcuda.Memcpy(d, &v, sizeof v, WCUDA_H2D));
    if (rank == 0)
        EXPECT_OK(MPIX_Send_enqueue(d, 1, MPI_INT, 1, 3, c));
    else if (rank == 1)
        EXPECT_OK(MPIX_Recv_enqueue(d, 1, MPI_INT, 0, 3, c, MPI_STATUS_IGNORE));
    EXPECT_OK(MPIX_Stream_synchronize(s));
    CU(wcuda.Memcpy(&v, d, sizeof v, WCUDA_D2H));
    if (rank < 2)
        CHECK_INT(v, 77);
    EXPECT_OK(MPI_Comm_free(&c));
    EXPECT_OK(MPIX_Stream_free(&s));

    CU(wcuda.StreamDestroy(cs));
    CU(wcuda.Free(d));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
