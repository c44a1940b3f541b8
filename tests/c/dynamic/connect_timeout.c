/* MPI_Comm_connect to an open port on which nobody calls MPI_Comm_accept must end with
 * MPI_ERR_PORT (MPI 4.1 §11.8.2: "will eventually time out"), on every process of the
 * connecting communicator, after WEFT_CONNECT_TIMEOUT seconds (MPICH's
 * MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT, which MPICH's errors/spawn/connect_timeout_no_accept
 * sets, is read too; the manifest runs both) or the timeout info key's. It used to wait
 * forever: the kernel queues a connection to an open port until it is accepted. The even
 * ranks serve, the odd ones connect; afterwards a connection with an accept succeeds, and a
 * timeout that is not a number is MPI_ERR_INFO_VALUE. */
#include "wtest.h"
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The server root's new port, on every rank of MPI_COMM_WORLD (rank 0 is the server root). */
static void open_port(int rank, char *port)
{
    if (rank == 0)
        EXPECT_OK(MPI_Open_port(MPI_INFO_NULL, port));
    EXPECT_OK(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));
}

static void expect_timeout(MPI_Comm half, const char *port, MPI_Info info, double at_least)
{
    MPI_Comm inter = MPI_COMM_NULL;
    double t0 = now();
    int rc = MPI_Comm_connect(port, info, 0, half, &inter);
    double waited = now() - t0;
    EXPECT_ERR(rc, MPI_ERR_PORT, "MPI_Comm_connect", "no MPI_Comm_accept on the port");
    CHECK(inter == MPI_COMM_NULL, "a failed connect left a communicator");
    CHECK(waited >= at_least - 0.2 && waited < at_least + 30,
          "connect gave up after %.1f s, expected about %.0f s", waited, at_least);
}

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        MPI_Finalize();
        return wtest_finish();
    }
    int client = rank % 2;
    MPI_Comm half;
    EXPECT_OK(MPI_Comm_split(MPI_COMM_WORLD, client, rank, &half));
    MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME] = "";

    /* No accept: the environment's timeout (2 s in the manifest), then the info key's. */
    open_port(rank, port);
    if (client) {
        expect_timeout(half, port, MPI_INFO_NULL, 2);
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "timeout", "1");
        expect_timeout(half, port, info, 1);
        MPI_Info_set(info, "timeout", "soon");
        MPI_Comm inter = MPI_COMM_NULL;
        EXPECT_ERR(MPI_Comm_connect(port, info, 0, half, &inter), MPI_ERR_INFO_VALUE,
                   "MPI_Comm_connect", "timeout");
        MPI_Info_free(&info);
    }
    EXPECT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        EXPECT_OK(MPI_Close_port(port));

    /* With an accept (a fresh port: the abandoned connections wait in the old one's queue). */
    open_port(rank, port);
    MPI_Comm inter = MPI_COMM_NULL;
    if (client)
        EXPECT_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter));
    else
        EXPECT_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter));
    if (inter != MPI_COMM_NULL) {
        int remote = -1, mine = client ? 2 : 1, got = 0;
        MPI_Comm_remote_size(inter, &remote);
        CHECK_INT(remote, client ? (size + 1) / 2 : size / 2);
        EXPECT_OK(MPI_Allreduce(&mine, &got, 1, MPI_INT, MPI_SUM, inter));
        CHECK_INT(got, (client ? 1 : 2) * (client ? (size + 1) / 2 : size / 2));
        EXPECT_OK(MPI_Comm_disconnect(&inter));
    }
    if (rank == 0)
        EXPECT_OK(MPI_Close_port(port));
    MPI_Comm_free(&half);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
