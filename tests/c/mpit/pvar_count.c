/* A performance-variable session counts exactly what the program does while its handles
 * are started: 37 eager messages of 100 bytes and one rendezvous message of 200000 bytes
 * from rank 0 to rank 1 (sent, received, bytes, protocols), nothing while stopped; reset,
 * readreset and write act on the handle only. The counters count a message when it arrives
 * (is taken from the transport), so a peer's later traffic would show in an open window. */
#include "wtest.h"

enum { N = 37, SMALL = 100, LARGE = 200000 };

static MPI_T_pvar_session s;

static MPI_T_pvar_handle handle(const char *name)
{
    int i = -1, count = 0;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    EXPECT_OK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &i));
    EXPECT_OK(MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count));
    CHECK_INT(count, 1);
    return h;
}

static unsigned long long value(MPI_T_pvar_handle h)
{
    unsigned long long v = 12345678;
    EXPECT_OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

int main(int argc, char **argv)
{
    int provided, rank;
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    EXPECT_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    EXPECT_OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle sent = handle("weft_msgs_sent_shm"), bytes = handle("weft_bytes_sent_shm"),
                      recvd = handle("weft_msgs_recv_shm"),
                      rbytes = handle("weft_bytes_recv_shm"), eager = handle("weft_eager_sends"),
                      rndv = handle("weft_rendezvous_sends");
    char *buf = calloc(LARGE, 1);
    /* The first collective sets up the communicator's shared memory with messages: before
     * the counting starts, so that a peer still receiving sees none of them meanwhile. */
    MPI_Barrier(MPI_COMM_WORLD);

    /* Not started: a send is not counted. */
    if (rank == 0)
        MPI_Send(buf, 1, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
    else
        MPI_Recv(buf, 1, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_INT(value(sent), 0);
    CHECK_INT(value(recvd), 0);

    EXPECT_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    if (rank == 0) {
        for (int i = 0; i < N; i++)
            MPI_Send(buf, SMALL, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        MPI_Send(buf, LARGE, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
    } else {
        for (int i = 0; i < N; i++)
            MPI_Recv(buf, SMALL, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(buf, LARGE, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    EXPECT_OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));

    if (rank == 0) {
        CHECK_INT(value(sent), N + 1);
        CHECK_INT(value(bytes), N * SMALL + LARGE);
        CHECK_INT(value(eager), N);
        CHECK_INT(value(rndv), 1);
        CHECK_INT(value(recvd), 0);
    } else {
        CHECK_INT(value(recvd), N + 1);
        CHECK_INT(value(rbytes), N * SMALL + LARGE);
        CHECK_INT(value(sent), 0);
    }

    /* Stopped: more traffic leaves the values as they are. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Send(buf, SMALL, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
    else
        MPI_Recv(buf, SMALL, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_INT(value(rank == 0 ? sent : recvd), N + 1);

    /* Reset, readreset and write change the handle's value only. */
    MPI_T_pvar_handle other = handle("weft_msgs_sent_shm");
    unsigned long long v = 1000;
    EXPECT_OK(MPI_T_pvar_write(s, other, &v));
    EXPECT_OK(MPI_T_pvar_start(s, other));
    EXPECT_OK(MPI_T_pvar_start(s, sent));
    if (rank == 0)
        MPI_Send(buf, SMALL, MPI_BYTE, 1, 4, MPI_COMM_WORLD);
    else
        MPI_Recv(buf, SMALL, MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_INT(value(other), rank == 0 ? 1001 : 1000);
    CHECK_INT(value(sent), rank == 0 ? N + 2 : 0);
    EXPECT_OK(MPI_T_pvar_readreset(s, sent, &v));
    CHECK_INT(v, rank == 0 ? N + 2 : 0);
    CHECK_INT(value(sent), 0);
    EXPECT_OK(MPI_T_pvar_reset(s, other));
    CHECK_INT(value(other), 0);

    /* A VCI's element of the per-VCI variable saw at least those messages. */
    int i, count;
    MPI_T_pvar_handle per;
    EXPECT_OK(MPI_T_pvar_get_index("weft_msgs_sent_shm_per_vci", MPI_T_PVAR_CLASS_COUNTER, &i));
    EXPECT_OK(MPI_T_pvar_handle_alloc(s, i, NULL, &per, &count));
    unsigned long long *vals = calloc(count, sizeof *vals);
    EXPECT_OK(MPI_T_pvar_write(s, per, vals));
    EXPECT_OK(MPI_T_pvar_start(s, per));
    if (rank == 0)
        MPI_Send(buf, SMALL, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
    else
        MPI_Recv(buf, SMALL, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT_OK(MPI_T_pvar_read(s, per, vals));
    unsigned long long sum = 0;
    for (int k = 0; k < count; k++)
        sum += vals[k];
    CHECK_INT(sum, rank == 0 ? 1 : 0);
    CHECK_INT(vals[0], rank == 0 ? 1 : 0);
    free(vals);

    EXPECT_OK(MPI_T_pvar_session_free(&s));
    EXPECT_OK(MPI_T_finalize());
    free(buf);
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
