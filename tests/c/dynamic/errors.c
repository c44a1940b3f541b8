/* Error cases of dynamic processes: every one returns its class (MPI_ERRORS_RETURN) and
 * nothing hangs. A spawn of a command that does not exist fails with MPI_ERR_SPAWN on every
 * process, with MPI_ERR_SPAWN per process at the root; the other processes' root-only
 * arguments (here NULL and -1) are not looked at. */
#include "wtest.h"
#include <unistd.h>

static int class_of(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wtest_world_rank();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm inter = MPI_COMM_NULL;
    int codes[3] = {-1, -1, -1};
    int rc = MPI_Comm_spawn(rank == 0 ? "./no-such-program-weft" : NULL, MPI_ARGV_NULL,
                            rank == 0 ? 3 : -1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
    CHECK_INT(class_of(rc), MPI_ERR_SPAWN);
    if (rank == 0)
        for (int i = 0; i < 3; i++)
            CHECK_INT(codes[i], MPI_ERR_SPAWN);
    CHECK(inter == MPI_COMM_NULL, "no intercommunicator on failure");
    /* Root checks: out of range, and maxprocs <= 0 at the root (every process fails). */
    rc = MPI_Comm_spawn("x", MPI_ARGV_NULL, 1, MPI_INFO_NULL, size, MPI_COMM_WORLD, &inter,
                        MPI_ERRCODES_IGNORE);
    CHECK_INT(class_of(rc), MPI_ERR_ROOT);
    rc = MPI_Comm_spawn("x", MPI_ARGV_NULL, 0, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                        MPI_ERRCODES_IGNORE);
    CHECK_INT(class_of(rc), MPI_ERR_ARG);
    /* A host that is not this machine. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "host", "no-such-host.invalid");
    rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, info, 0, MPI_COMM_WORLD, &inter,
                        MPI_ERRCODES_IGNORE);
    CHECK_INT(class_of(rc), MPI_ERR_SPAWN);
    MPI_Info_free(&info);
    /* Ports and names. */
    rc = MPI_Comm_connect("weft-port:nobody.0.0", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    CHECK_INT(class_of(rc), MPI_ERR_PORT);
    rc = MPI_Comm_connect("not a port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    CHECK_INT(class_of(rc), MPI_ERR_PORT);
    rc = MPI_Comm_accept("weft-port:not-mine.0.0", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    CHECK_INT(class_of(rc), MPI_ERR_PORT);
    CHECK_INT(class_of(MPI_Close_port("weft-port:not-mine.0.0")), MPI_ERR_PORT);
    char port[MPI_MAX_PORT_NAME], found[MPI_MAX_PORT_NAME];
    CHECK_INT(MPI_Open_port(MPI_INFO_NULL, port), MPI_SUCCESS);
    char service[64];
    snprintf(service, sizeof service, "wtest-errors-%d-%d", (int)getpid(), rank);
    CHECK_INT(class_of(MPI_Lookup_name(service, MPI_INFO_NULL, found)), MPI_ERR_NAME);
    CHECK_INT(class_of(MPI_Unpublish_name(service, MPI_INFO_NULL, port)), MPI_ERR_SERVICE);
    CHECK_INT(MPI_Publish_name(service, MPI_INFO_NULL, port), MPI_SUCCESS);
    CHECK_INT(class_of(MPI_Publish_name(service, MPI_INFO_NULL, port)), MPI_ERR_SERVICE);
    CHECK_INT(MPI_Lookup_name(service, MPI_INFO_NULL, found), MPI_SUCCESS);
    CHECK_STR(found, port);
    CHECK_INT(MPI_Unpublish_name(service, MPI_INFO_NULL, port), MPI_SUCCESS);
    CHECK_INT(class_of(MPI_Lookup_name(service, MPI_INFO_NULL, found)), MPI_ERR_NAME);
    CHECK_INT(MPI_Close_port(port), MPI_SUCCESS);
    CHECK_INT(class_of(MPI_Close_port(port)), MPI_ERR_PORT);
    /* An intercommunicator is not a valid comm for spawn/accept. */
    MPI_Comm half, ic;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    if (size > 1) {
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &ic);
        rc = MPI_Comm_spawn("x", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, ic, &inter,
                            MPI_ERRCODES_IGNORE);
        CHECK_INT(class_of(rc), MPI_ERR_COMM);
        MPI_Comm_free(&ic);
    }
    MPI_Comm_free(&half);
    CHECK_INT(class_of(MPI_Comm_join(-1, &inter)), MPI_ERR_ARG);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    CHECK(parent == MPI_COMM_NULL, "not spawned: no parent");
    MPI_Finalize();
    return wtest_finish();
}
