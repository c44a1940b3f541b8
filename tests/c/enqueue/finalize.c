/* MPI_Finalize waits for the offload queues: work still queued (a send, a receive, a host
 * function after it) runs before the world ends, even though the program neither
 * synchronises nor frees its stream and communicator. */
#include "wtest.h"
#include <unistd.h>

static volatile int ran, value = -1;
static int got;
static void after(void *p)
{
    (void)p;
    value = got;
    ran = 1;
}

static void slow(void *p)
{
    (void)p;
    usleep(100000);
}

int main(int argc, char **argv)
{
    int rank, v = 42;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    EXPECT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_Info info;
    MPIX_Stream s;
    MPI_Comm c;
    EXPECT_OK(MPI_Info_create(&info));
    EXPECT_OK(MPI_Info_set(info, "type", "weft_host_queue"));
    EXPECT_OK(MPIX_Stream_create(info, &s));
    EXPECT_OK(MPI_Info_free(&info));
    EXPECT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, s, &c));
    if (rank == 0) {
        /* Late, so that the receiver reaches MPI_Finalize with its receive still queued. */
        EXPECT_OK(MPIX_Stream_enqueue_host_fn(s, slow, NULL));
        EXPECT_OK(MPIX_Send_enqueue(&v, 1, MPI_INT, 1, 0, c));
        EXPECT_OK(MPIX_Stream_enqueue_host_fn(s, after, NULL));
    } else if (rank == 1) {
        EXPECT_OK(MPIX_Recv_enqueue(&got, 1, MPI_INT, 0, 0, c, MPI_STATUS_IGNORE));
        EXPECT_OK(MPIX_Stream_enqueue_host_fn(s, after, NULL));
    }
    EXPECT_OK(MPI_Finalize());
    CHECK_INT(ran, 1);
    if (rank == 1)
        CHECK_INT(value, 42);
    return wtest_finish();
}
