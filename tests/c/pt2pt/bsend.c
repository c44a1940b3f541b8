/* Buffered sends: Buffer_attach/detach (+_c), Comm_attach_buffer/detach_buffer, flush and
 * iflush, Bsend/Ibsend (+_c); too small a buffer and no buffer give MPI_ERR_BUFFER;
 * MPI_BSEND_OVERHEAD is 512; a buffer sized by the standard's rule holds its messages. */
#include "pt2pt_util.h"

#define K 4
#define LEN 10000 /* larger than a cell: rendezvous, so sends stay pending until matched */

int main(int argc, char **argv)
{
    int rank, i, j;
    static int data[LEN], got[LEN];
    void *addr;
    int size;
    MPI_Count csize;
    MPI_Request req;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int peer = rank ^ 1;
    CHECK_INT(MPI_BSEND_OVERHEAD, 512);

    /* No buffer attached: MPI_ERR_BUFFER naming the function. */
    EXPECT_ERR(MPI_Bsend(data, 1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "MPI_Bsend", "buffer");
    EXPECT_ERR(MPI_Buffer_detach(&addr, &size), MPI_ERR_BUFFER, "MPI_Buffer_detach", "buffer");

    /* K messages in flight in a buffer of exactly K * (size + overhead). */
    int bufsize = K * (LEN * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *buf = malloc(bufsize);
    EXPECT_OK(MPI_Buffer_attach(buf, bufsize));
    EXPECT_ERR(MPI_Buffer_attach(buf, bufsize), MPI_ERR_BUFFER, "MPI_Buffer_attach", "attached");
    if (rank == 0) {
        for (i = 0; i < K; i++) {
            for (j = 0; j < LEN; j++)
                data[j] = i * LEN + j;
            if (i % 2)
                EXPECT_OK(MPI_Bsend(data, LEN, MPI_INT, 1, i, MPI_COMM_WORLD));
            else {
                EXPECT_OK(MPI_Ibsend_c(data, LEN, MPI_INT, 1, i, MPI_COMM_WORLD, &req));
                EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE)); /* complete once copied */
            }
            data[0] = -1; /* the copy was taken: changing the user buffer is harmless */
        }
        /* The buffer is full until the receiver matches: one more does not fit. */
        EXPECT_ERR(MPI_Bsend(data, LEN, MPI_INT, 1, 99, MPI_COMM_WORLD), MPI_ERR_BUFFER, "MPI_Bsend", "room");
        pair_sync(peer);
    } else {
        pair_sync(peer);
        for (i = K - 1; i >= 0; i--) {
            EXPECT_OK(MPI_Recv(got, LEN, MPI_INT, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (j = 0; j < LEN; j++)
                if (got[j] != i * LEN + j) {
                    FAIL("message %d: got[%d] = %d", i, j, got[j]);
                    break;
                }
        }
    }
    EXPECT_OK(MPI_Buffer_flush());
    EXPECT_OK(MPI_Buffer_detach(&addr, &size));
    CHECK(addr == buf, "detach returns the buffer");
    CHECK_INT(size, bufsize);

    /* Too small a buffer for one message. */
    char small[100];
    EXPECT_OK(MPI_Buffer_attach_c(small, sizeof small));
    EXPECT_ERR(MPI_Bsend(data, LEN, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "MPI_Bsend", "buffer");
    EXPECT_ERR(MPI_Ibsend(data, LEN, MPI_INT, peer, 0, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER, "MPI_Ibsend", "buffer");
    EXPECT_OK(MPI_Buffer_detach_c(&addr, &csize));
    CHECK_INT(csize, sizeof small);

    /* A communicator's buffer takes precedence; iflush completes when its sends have. */
    int csz = 4 * (LEN * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *cbuf = malloc(csz);
    EXPECT_OK(MPI_Comm_attach_buffer(MPI_COMM_WORLD, cbuf, csz));
    for (j = 0; j < LEN; j++)
        data[j] = rank + j;
    EXPECT_OK(MPI_Bsend(data, LEN, MPI_INT, peer, 60, MPI_COMM_WORLD));
    EXPECT_OK(MPI_Comm_iflush_buffer(MPI_COMM_WORLD, &req));
    EXPECT_OK(MPI_Recv(got, LEN, MPI_INT, peer, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_INT(got[5], peer + 5);
    EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    EXPECT_OK(MPI_Comm_flush_buffer(MPI_COMM_WORLD));
    EXPECT_OK(MPI_Comm_detach_buffer(MPI_COMM_WORLD, &addr, &size));
    CHECK(addr == cbuf, "comm detach returns its buffer");
    CHECK_INT(size, csz);
    EXPECT_ERR(MPI_Comm_detach_buffer(MPI_COMM_WORLD, &addr, &size), MPI_ERR_BUFFER, "MPI_Comm_detach_buffer", "buffer");
    EXPECT_ERR(MPI_Comm_attach_buffer(MPI_COMM_NULL, cbuf, csz), MPI_ERR_COMM, "MPI_Comm_attach_buffer", "comm");

    /* MPI_BUFFER_AUTOMATIC: the library finds room; detach reports it back. */
    EXPECT_OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
    for (i = 0; i < 3; i++)
        EXPECT_OK(MPI_Bsend(data, LEN, MPI_INT, peer, 70 + i, MPI_COMM_WORLD));
    EXPECT_OK(MPI_Buffer_iflush(&req));
    for (i = 0; i < 3; i++)
        EXPECT_OK(MPI_Recv(got, LEN, MPI_INT, peer, 70 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    EXPECT_OK(MPI_Buffer_detach(&addr, &size));
    CHECK(addr == MPI_BUFFER_AUTOMATIC, "automatic buffer comes back as MPI_BUFFER_AUTOMATIC");

    /* Bad arguments. */
    EXPECT_ERR(MPI_Buffer_attach(buf, -1), MPI_ERR_ARG, "MPI_Buffer_attach", "size");
    EXPECT_ERR(MPI_Bsend(data, -1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Bsend", "count");
    EXPECT_ERR(MPI_Ibsend(data, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "MPI_Ibsend", "request");
    pair_sync(peer);
    free(buf);
    free(cbuf);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
