/* Wrong uses of the enqueue functions fail at once with the right class and a message
 * naming the function and the argument; errors of queued operations (a truncated
 * receive) reach the communicator's errhandler when they run and are reported by the next
 * MPIX_Stream_synchronize or MPIX_Wait_enqueue, once; freeing a communicator waits for its
 * queue. The manifest sets WEFT_CUDA=0: CUDA is "not found" whatever the machine has. */
#include "wtest.h"
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

static atomic_int handler_calls, handler_class, slow_done, marker;

static void handler(MPI_Comm *comm, int *code, ...)
{
    int cls = -1;
    (void)comm;
    MPI_Error_class(*code, &cls);
    atomic_store(&handler_class, cls);
    atomic_fetch_add(&handler_calls, 1);
}
static void mark(void *p)
{
    (void)p;
    atomic_store(&marker, 1);
}
static void slow(void *p)
{
    (void)p;
    usleep(200000);
    atomic_store(&slow_done, 1);
}

int main(int argc, char **argv)
{
    int rank, size, v[4] = {1, 2, 3, 4}, one = 0;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    EXPECT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    EXPECT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* Stream types. */
    MPI_Info info;
    MPIX_Stream s, plain;
    EXPECT_OK(MPI_Info_create(&info));
    EXPECT_OK(MPI_Info_set(info, "type", "opencl_queue"));
    EXPECT_ERR(MPIX_Stream_create(info, &s), MPI_ERR_INFO_VALUE, "MPIX_Stream_create", "opencl_queue");
    EXPECT_OK(MPI_Info_set(info, "type", "cudaStream_t"));
    EXPECT_ERR(MPIX_Stream_create(info, &s), MPI_ERR_INFO_NOKEY, "MPIX_Stream_create", "value");
    EXPECT_OK(MPI_Info_set(info, "value", "xyz"));
    EXPECT_ERR(MPIX_Stream_create(info, &s), MPI_ERR_INFO_VALUE, "MPIX_Stream_create", "value");
    void *fake = (void *)0x1234;
    EXPECT_OK(MPIX_Info_set_hex(info, "value", &fake, sizeof fake));
    EXPECT_ERR(MPIX_Stream_create(info, &s), MPI_ERR_UNSUPPORTED_OPERATION, "MPIX_Stream_create", "CUDA");
    EXPECT_ERR(MPIX_Info_set_hex(info, "value", &fake, -1), MPI_ERR_ARG, "MPIX_Info_set_hex", "value_size");
    EXPECT_ERR(MPIX_Info_set_hex(MPI_INFO_NULL, "value", &fake, 8), MPI_ERR_INFO, "MPIX_Info_set_hex", NULL);
    EXPECT_OK(MPI_Info_set(info, "type", "weft_host_queue"));
    EXPECT_OK(MPIX_Stream_create(info, &s));
    EXPECT_OK(MPI_Info_free(&info));
    EXPECT_OK(MPIX_Stream_create(MPI_INFO_NULL, &plain));

    /* GPU queries: CUDA is off in this test. */
    int yes = -1;
    EXPECT_OK(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &yes));
    CHECK_INT(yes, 0);
    CHECK_INT(MPIX_Query_cuda_support(), 0);
    EXPECT_OK(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_HIP, &yes));
    CHECK_INT(yes, 0);
    EXPECT_ERR(MPIX_GPU_query_support(17, &yes), MPI_ERR_ARG, "MPIX_GPU_query_support", "gpu_type");
    EXPECT_ERR(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_ZE, NULL), MPI_ERR_ARG, "MPIX_GPU_query_support", "is_supported");

    /* Host functions and synchronisation. */
    EXPECT_ERR(MPIX_Stream_enqueue_host_fn(s, NULL, NULL), MPI_ERR_ARG, "MPIX_Stream_enqueue_host_fn", "fn");
    EXPECT_ERR(MPIX_Stream_enqueue_host_fn(plain, mark, NULL), MPI_ERR_ARG, "MPIX_Stream_enqueue_host_fn", "offload");
    EXPECT_OK(MPIX_Stream_synchronize(plain));
    EXPECT_ERR(MPIX_Stream_synchronize(MPIX_STREAM_NULL), MPI_ERR_ARG, "MPIX_Stream_synchronize", "stream");

    MPI_Comm c, pc;
    EXPECT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, s, &c));
    EXPECT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, plain, &pc));
    EXPECT_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));

    /* Argument errors, reported at once. */
    MPI_Request r = MPI_REQUEST_NULL, plainreq;
    EXPECT_ERR(MPIX_Send_enqueue(v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COMM, "MPIX_Send_enqueue", "offload stream");
    EXPECT_ERR(MPIX_Send_enqueue(v, 1, MPI_INT, 0, 0, pc), MPI_ERR_COMM, "MPIX_Send_enqueue", "comm");
    EXPECT_ERR(MPIX_Send_enqueue(v, -1, MPI_INT, 0, 0, c), MPI_ERR_COUNT, "MPIX_Send_enqueue", "count");
    EXPECT_ERR(MPIX_Send_enqueue(v, 1, MPI_INT, size, 0, c), MPI_ERR_RANK, "MPIX_Send_enqueue", "dest");
    EXPECT_ERR(MPIX_Send_enqueue(v, 1, MPI_INT, 0, -3, c), MPI_ERR_TAG, "MPIX_Send_enqueue", "tag");
    EXPECT_ERR(MPIX_Recv_enqueue(v, 1, MPI_DATATYPE_NULL, 0, 0, c, MPI_STATUS_IGNORE), MPI_ERR_TYPE, "MPIX_Recv_enqueue", "datatype");
    EXPECT_ERR(MPIX_Recv_enqueue_c(v, 1, MPI_INT, -9, 0, c, MPI_STATUS_IGNORE), MPI_ERR_RANK, "MPIX_Recv_enqueue_c", "source");
    EXPECT_ERR(MPIX_Isend_enqueue(v, 1, MPI_INT, 0, 0, c, NULL), MPI_ERR_ARG, "MPIX_Isend_enqueue", "request");
    EXPECT_ERR(MPIX_Allreduce_enqueue(v, v, 1, MPI_INT, MPI_OP_NULL, c), MPI_ERR_OP, "MPIX_Allreduce_enqueue", "op");
    EXPECT_ERR(MPIX_Bcast_enqueue(v, 1, MPI_INT, size, c), MPI_ERR_ROOT, "MPIX_Bcast_enqueue", "root");
    EXPECT_ERR(MPIX_Barrier_enqueue(MPI_COMM_SELF), MPI_ERR_COMM, "MPIX_Barrier_enqueue", "comm");
    MPI_Request garbage = (MPI_Request)WTEST_GARBAGE;
    EXPECT_ERR(MPIX_Wait_enqueue(&garbage, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "MPIX_Wait_enqueue", "request");
    EXPECT_OK(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE));
    EXPECT_ERR(MPIX_Waitall_enqueue(-1, &r, MPI_STATUSES_IGNORE), MPI_ERR_COUNT, "MPIX_Waitall_enqueue", "count");
    /* A plain request in MPIX_Wait_enqueue, an enqueued one in MPI_Wait. */
    EXPECT_OK(MPI_Irecv(&one, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &plainreq));
    EXPECT_ERR(MPIX_Wait_enqueue(&plainreq, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "MPIX_Wait_enqueue", "MPI_Wait");
    EXPECT_OK(MPI_Wait(&plainreq, MPI_STATUS_IGNORE));
    EXPECT_OK(MPIX_Isend_enqueue(v, 1, MPI_INT, rank, 1, c, &r));
    MPI_Request copy = r;
    EXPECT_ERR(MPI_Wait(&copy, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "MPI_Wait", "MPIX_Wait_enqueue");
    EXPECT_OK(MPIX_Recv_enqueue(&one, 1, MPI_INT, rank, 1, c, MPI_STATUS_IGNORE));
    EXPECT_OK(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE));
    EXPECT_OK(MPIX_Stream_synchronize(s));
    CHECK_INT(one, 1);

    /* A failing queued receive: the errhandler runs when it does, synchronisation reports
     * it once. */
    MPI_Errhandler eh;
    EXPECT_OK(MPI_Comm_create_errhandler(handler, &eh));
    EXPECT_OK(MPI_Comm_set_errhandler(c, eh));
    if (rank == 0) {
        EXPECT_OK(MPI_Send(v, 4, MPI_INT, 1, 9, c));
        EXPECT_OK(MPI_Send(v, 4, MPI_INT, 1, 10, c));
        EXPECT_OK(MPI_Send(v, 1, MPI_INT, 1, 11, c));
    } else if (rank == 1) {
        EXPECT_OK(MPIX_Recv_enqueue(&one, 1, MPI_INT, 0, 9, c, MPI_STATUS_IGNORE));
        EXPECT_ERR(MPIX_Stream_synchronize(s), MPI_ERR_TRUNCATE, "MPIX_Stream_synchronize", "queued");
        CHECK_INT(atomic_load(&handler_calls), 1);
        CHECK_INT(atomic_load(&handler_class), MPI_ERR_TRUNCATE);
        EXPECT_OK(MPIX_Stream_synchronize(s));
        /* Reported by the next MPIX_Wait_enqueue after it happened. */
        EXPECT_OK(MPIX_Recv_enqueue(&one, 1, MPI_INT, 0, 10, c, MPI_STATUS_IGNORE));
        EXPECT_OK(MPIX_Stream_enqueue_host_fn(s, mark, NULL));
        while (!atomic_load(&marker))
            sched_yield();
        EXPECT_OK(MPIX_Irecv_enqueue(&one, 1, MPI_INT, 0, 11, c, &r));
        EXPECT_ERR(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE, "MPIX_Wait_enqueue", "queued");
        CHECK(r == MPI_REQUEST_NULL, "the wait was queued all the same");
        EXPECT_OK(MPIX_Stream_synchronize(s));
        CHECK_INT(one, 1);
        CHECK_INT(atomic_load(&handler_calls), 2);
    }
    EXPECT_OK(MPI_Errhandler_free(&eh));

    /* Freeing: an attached stream cannot go; freeing the communicator waits for the work
     * queued before. */
    EXPECT_ERR(MPIX_Stream_free(&s), MPI_ERR_OTHER, "MPIX_Stream_free", "attached");
    EXPECT_OK(MPIX_Stream_enqueue_host_fn(s, slow, NULL));
    EXPECT_OK(MPI_Comm_free(&c));
    CHECK_INT(atomic_load(&slow_done), 1);
    EXPECT_OK(MPI_Comm_free(&pc));
    EXPECT_OK(MPIX_Stream_free(&s));
    EXPECT_OK(MPIX_Stream_free(&plain));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
