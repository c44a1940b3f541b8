/* Wrong uses of streams give MPI error classes with messages naming the function and the
 * argument: exhaustion of WEFT_MAX_STREAMS (the manifest sets 3), double free, garbage and
 * another process's handle, freeing an attached stream, bad stream indexes, stream
 * operations on a communicator without streams, progress-thread misuse. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int rank, i, v = 1;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    EXPECT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));

    /* Exhaustion: three streams, then a clear error naming the variable; freeing one makes
     * room again. */
    MPIX_Stream s[4];
    for (i = 0; i < 3; i++)
        EXPECT_OK(MPIX_Stream_create(MPI_INFO_NULL, &s[i]));
    EXPECT_ERR(MPIX_Stream_create(MPI_INFO_NULL, &s[3]), MPI_ERR_OTHER, "MPIX_Stream_create", "WEFT_MAX_STREAMS");
    EXPECT_OK(MPIX_Stream_free(&s[2]));
    EXPECT_OK(MPIX_Stream_create(MPI_INFO_NULL, &s[2]));
    EXPECT_ERR(MPIX_Stream_create(MPI_INFO_NULL, NULL), MPI_ERR_ARG, "MPIX_Stream_create", "stream");

    /* Double free, garbage, null. */
    MPIX_Stream copy = s[2];
    EXPECT_OK(MPIX_Stream_free(&s[2]));
    EXPECT_ERR(MPIX_Stream_free(&copy), MPI_ERR_ARG, "MPIX_Stream_free", "already freed");
    MPIX_Stream garbage = (MPIX_Stream)WTEST_GARBAGE, null = MPIX_STREAM_NULL;
    EXPECT_ERR(MPIX_Stream_free(&garbage), MPI_ERR_ARG, "MPIX_Stream_free", "stream");
    EXPECT_ERR(MPIX_Stream_free(&null), MPI_ERR_ARG, "MPIX_Stream_free", "MPIX_STREAM_NULL");
    EXPECT_ERR(MPIX_Stream_progress(garbage), MPI_ERR_ARG, "MPIX_Stream_progress", "stream");

    /* A CUDA stream without CUDA (the manifest sets WEFT_CUDA=0) says so. */
    MPI_Info info;
    void *fake = (void *)0x1234;
    EXPECT_OK(MPI_Info_create(&info));
    EXPECT_OK(MPI_Info_set(info, "type", "cudaStream_t"));
    EXPECT_OK(MPIX_Info_set_hex(info, "value", &fake, sizeof fake));
    EXPECT_ERR(MPIX_Stream_create(info, &s[2]), MPI_ERR_UNSUPPORTED_OPERATION, "MPIX_Stream_create", "cudaStream_t");
    EXPECT_OK(MPI_Info_free(&info));

    /* Another process's handle: rank 1 sends the value of a handle it made after two
     * others; rank 0 has no stream in that slot. */
    MPIX_Stream theirs = MPIX_STREAM_NULL;
    if (rank == 1) {
        MPIX_Stream extra;
        EXPECT_OK(MPIX_Stream_create(MPI_INFO_NULL, &extra));
        EXPECT_OK(MPI_Send(&extra, sizeof extra, MPI_BYTE, 0, 0, MPI_COMM_WORLD));
        EXPECT_OK(MPIX_Stream_free(&extra));
    } else if (rank == 0) {
        MPIX_Stream other;
        EXPECT_OK(MPI_Recv(&theirs, sizeof theirs, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        EXPECT_OK(MPIX_Stream_free(&s[1]));
        MPI_Comm bad = MPI_COMM_NULL;
        /* Collective: a local argument error fails before any communication. */
        other = theirs;
        EXPECT_ERR(MPIX_Stream_comm_create(MPI_COMM_SELF, other, &bad), MPI_ERR_ARG, "MPIX_Stream_comm_create", "stream");
        CHECK(bad == MPI_COMM_NULL, "no communicator on error");
        EXPECT_OK(MPIX_Stream_create(MPI_INFO_NULL, &s[1]));
    }

    /* A stream attached to a communicator cannot be freed until the communicator is. */
    MPI_Comm c;
    EXPECT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, s[0], &c));
    EXPECT_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    EXPECT_ERR(MPIX_Stream_free(&s[0]), MPI_ERR_OTHER, "MPIX_Stream_free", "attached to 1 communicator");

    /* Indexes: this communicator has one stream per process. */
    int peer = 1 - rank;
    EXPECT_ERR(MPIX_Stream_send(&v, 1, MPI_INT, peer, 0, c, 1, 0), MPI_ERR_ARG, "MPIX_Stream_send", "source_stream_index=1");
    EXPECT_ERR(MPIX_Stream_send(&v, 1, MPI_INT, peer, 0, c, 0, 3), MPI_ERR_ARG, "MPIX_Stream_send", "dest_stream_index=3");
    EXPECT_ERR(MPIX_Stream_recv(&v, 1, MPI_INT, peer, 0, c, 0, -2, MPI_STATUS_IGNORE), MPI_ERR_ARG, "MPIX_Stream_recv", "dest_stream_index=-2");
    EXPECT_ERR(MPIX_Stream_recv(&v, 1, MPI_INT, peer, 0, c, 5, 0, MPI_STATUS_IGNORE), MPI_ERR_ARG, "MPIX_Stream_recv", "source_stream_index=5");
    MPI_Request r;
    EXPECT_ERR(MPIX_Stream_isend(&v, 1, MPI_INT, peer, 0, c, 0, 0, NULL), MPI_ERR_ARG, "MPIX_Stream_isend", "request");
    EXPECT_ERR(MPIX_Stream_isend(&v, 1, MPI_INT, 7, 0, c, 0, 0, &r), MPI_ERR_RANK, "MPIX_Stream_isend", "dest=7");
    MPIX_Stream got;
    EXPECT_ERR(MPIX_Comm_get_stream(c, 1, &got), MPI_ERR_ARG, "MPIX_Comm_get_stream", "idx=1");
    EXPECT_OK(MPIX_Comm_get_stream(MPI_COMM_WORLD, 0, &got));
    CHECK(got == MPIX_STREAM_NULL, "a communicator without streams has MPIX_STREAM_NULL");

    /* Stream point-to-point needs a stream communicator. */
    EXPECT_ERR(MPIX_Stream_send(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, 0, 0), MPI_ERR_COMM, "MPIX_Stream_send", "not a stream communicator");

    /* Progress threads: stopping one that never started, starting twice. */
    EXPECT_ERR(MPIX_Stop_progress_thread(s[0]), MPI_ERR_OTHER, "MPIX_Stop_progress_thread", "no progress thread");
    EXPECT_OK(MPIX_Start_progress_thread(s[0]));
    EXPECT_ERR(MPIX_Start_progress_thread(s[0]), MPI_ERR_OTHER, "MPIX_Start_progress_thread", "already");
    EXPECT_OK(MPIX_Stop_progress_thread(s[0]));
    EXPECT_ERR(MPIX_Stop_progress_thread(MPIX_STREAM_NULL), MPI_ERR_OTHER, "MPIX_Stop_progress_thread", "MPIX_STREAM_NULL");

    /* The communicator still works after all those errors. */
    int x = rank, y = -1;
    EXPECT_OK(MPIX_Stream_send(&x, 1, MPI_INT, peer, 4, c, 0, 0));
    EXPECT_OK(MPIX_Stream_recv(&y, 1, MPI_INT, peer, 4, c, 0, 0, MPI_STATUS_IGNORE));
    CHECK_INT(y, peer);

    /* MPI_PROC_NULL: the blocking forms return at once, the receive with the null status
     * (source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0); the nonblocking ones return a
     * request that is already complete, the receive's with that status. */
    MPI_Status st;
    MPI_Request rq[2];
    int flag = 0, n = -1;
    y = -7;
    EXPECT_OK(MPIX_Stream_send(&x, 1, MPI_INT, MPI_PROC_NULL, 4, c, 0, 0));
    EXPECT_OK(MPIX_Stream_recv(&y, 1, MPI_INT, MPI_PROC_NULL, 4, c, 0, 0, &st));
    CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
    CHECK_INT(st.MPI_TAG, MPI_ANY_TAG);
    EXPECT_OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK_INT(n, 0);
    CHECK_INT(y, -7);
    EXPECT_OK(MPIX_Stream_isend(&x, 1, MPI_INT, MPI_PROC_NULL, 4, c, 0, 0, &rq[0]));
    EXPECT_OK(MPIX_Stream_irecv(&y, 1, MPI_INT, MPI_PROC_NULL, 4, c, 0, 0, &rq[1]));
    CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL, "requests for MPI_PROC_NULL");
    EXPECT_OK(MPI_Test(&rq[1], &flag, &st));
    CHECK_INT(flag, 1);
    CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
    EXPECT_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK_INT(y, -7);
    EXPECT_OK(MPI_Comm_free(&c));
    for (i = 0; i < 2; i++)
        EXPECT_OK(MPIX_Stream_free(&s[i]));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
