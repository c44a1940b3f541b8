/* 10^4 operations in flight on a host queue: rank 0 queues 10^4 sends of one int each,
 * rank 1 10^4 receives into distinct slots, both without waiting; the enqueuing thread
 * returns from every call (it never blocks on the queue), and after
 * MPIX_Stream_synchronize every value arrived in order. */
#include "wtest.h"
#include <stdlib.h>

#define OPS 10000

int main(int argc, char **argv)
{
    int rank;
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

    int *v = malloc(OPS * sizeof(int));
    if (rank == 0) {
        for (int i = 0; i < OPS; i++)
            v[i] = i * 7 + 1;
        for (int i = 0; i < OPS; i++)
            EXPECT_OK(MPIX_Send_enqueue(&v[i], 1, MPI_INT, 1, 5, c));
    } else if (rank == 1) {
        for (int i = 0; i < OPS; i++)
            v[i] = -1;
        for (int i = 0; i < OPS; i++)
            EXPECT_OK(MPIX_Recv_enqueue(&v[i], 1, MPI_INT, 0, 5, c, MPI_STATUS_IGNORE));
    }
    EXPECT_OK(MPIX_Stream_synchronize(s));
    if (rank == 1)
        for (int i = 0; i < OPS; i++)
            if (v[i] != i * 7 + 1) {
                FAIL("v[%d] = %d, expected %d", i, v[i], i * 7 + 1);
                break;
            }
    free(v);
    EXPECT_OK(MPI_Comm_free(&c));
    EXPECT_OK(MPIX_Stream_free(&s));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
