/* A dynamic-process call that fails reports through the errhandler of its communicator and
 * writes no intercommunicator. (Weft implements every MPI function now: weft-info --missing
 * lists none, and check/missing-functions calls whatever it lists.) Spawning "true", which
 * starts and ends without connecting, is MPI_ERR_SPAWN with MPI_ERR_SPAWN per process: a
 * regression test for a root that got MPI_ERR_PORT (broken pipe) when the failed job's
 * watcher closed the port connection before the root had written its hello. */
#include "wtest.h"

static int calls = 0, last_code = 0;
static void handler(MPI_Comm *c, int *e, ...)
{
    (void)c;
    calls++;
    last_code = *e;
}

int main(int argc, char **argv)
{
    MPI_Comm inter = MPI_COMM_NULL;
    MPI_Errhandler eh;
    int errcodes[2] = {-7, -7}, rc;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    for (int round = 0; round < 3; round++) {
        errcodes[0] = errcodes[1] = -7;
        EXPECT_ERR(MPI_Comm_spawn("true", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_SELF,
                                  &inter, errcodes),
                   MPI_ERR_SPAWN, "MPI_Comm_spawn", NULL);
        CHECK(inter == MPI_COMM_NULL, "no intercommunicator written");
        CHECK_INT(errcodes[0], MPI_ERR_SPAWN);
        CHECK_INT(errcodes[1], MPI_ERR_SPAWN);
    }

    /* The error goes to the communicator's errhandler. */
    EXPECT_OK(MPI_Comm_create_errhandler(handler, &eh));
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
    rc = MPI_Comm_spawn("no-such-weft-program", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0,
                        MPI_COMM_SELF, &inter, errcodes);
    CHECK_INT(calls, 1);
    CHECK_INT(last_code, rc);
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    EXPECT_OK(MPI_Errhandler_free(&eh));

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
