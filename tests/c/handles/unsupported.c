/* Functions Weft does not implement return MPI_ERR_UNSUPPORTED_OPERATION with a string naming
 * them, through the errhandler of their communicator, and write no output. (These are far from
 * implemented; check/missing-functions calls every function weft-info lists as missing.) */
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
    char port[MPI_MAX_PORT_NAME] = "unchanged";
    MPI_Comm inter = MPI_COMM_NULL;
    MPI_Errhandler eh;
    int errcodes[2] = {-7, -7}, rc;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    EXPECT_ERR(MPI_Open_port(MPI_INFO_NULL, port), MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Open_port", NULL);
    CHECK_STR(port, "unchanged");
    EXPECT_ERR(MPI_Publish_name("svc", MPI_INFO_NULL, "port"), MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Publish_name", NULL);
    EXPECT_ERR(MPI_Comm_spawn("true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, errcodes),
               MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Comm_spawn", NULL);
    CHECK(inter == MPI_COMM_NULL && errcodes[0] == -7, "outputs written");
    EXPECT_ERR(MPI_Comm_join(0, &inter), MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Comm_join", NULL);
    EXPECT_ERR(PMPI_Open_port(MPI_INFO_NULL, port), MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Open_port", NULL);

    /* The error goes to the communicator's errhandler. */
    EXPECT_OK(MPI_Comm_create_errhandler(handler, &eh));
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
    rc = MPI_Comm_spawn("true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, errcodes);
    CHECK_INT(calls, 1);
    CHECK_INT(last_code, rc);
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    EXPECT_OK(MPI_Errhandler_free(&eh));

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
