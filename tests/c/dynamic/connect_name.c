/* Two separately launched jobs connect through a published name. This job (the server,
 * 2 ranks) opens a port and publishes it; its rank 0 then starts a second job with Weft's
 * mpiexec (found next to the MPI library) running this program as the client (2 ranks),
 * which looks the name up and connects. Both sides exchange values, merge and reduce; the
 * client's exit status carries its errors. */
#define _GNU_SOURCE
#include "wtest.h"
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void exchange(MPI_Comm inter, int server)
{
    int rank, rsize, v, got = -1;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_remote_size(inter, &rsize);
    CHECK_INT(rsize, 2);
    v = rank * 10 + (server ? 1 : 2);
    MPI_Sendrecv(&v, 1, MPI_INT, rank, 5, &got, 1, MPI_INT, rank, 5, inter, MPI_STATUS_IGNORE);
    CHECK_INT(got, rank * 10 + (server ? 2 : 1));
    MPI_Comm merged;
    MPI_Intercomm_merge(inter, server ? 0 : 1, &merged);
    int mrank, sum = 0;
    MPI_Comm_rank(merged, &mrank);
    CHECK_INT(mrank, rank + (server ? 0 : 2));
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, merged);
    CHECK_INT(sum, 1 + 11 + 2 + 12);
    MPI_Comm_free(&merged);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wtest_world_rank();
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter;
    if (argc > 2 && strcmp(argv[1], "client") == 0) {
        int rc = MPI_Lookup_name(argv[2], MPI_INFO_NULL, port);
        CHECK_INT(rc, MPI_SUCCESS);
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
        exchange(inter, 0);
        MPI_Comm_disconnect(&inter);
        MPI_Finalize();
        return wtest_errs != 0;
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char service[64];
    snprintf(service, sizeof service, "wtest-connect-%d", (int)getppid());
    pid_t client = -1;
    if (rank == 0) {
        MPI_Open_port(MPI_INFO_NULL, port);
        CHECK_INT(MPI_Publish_name(service, MPI_INFO_NULL, port), MPI_SUCCESS);
        Dl_info dl;
        char lib[PATH_MAX], mpiexec[PATH_MAX + 32], self[PATH_MAX];
        CHECK(dladdr((void *)MPI_Init, &dl) && dl.dli_fname, "dladdr");
        snprintf(lib, sizeof lib, "%s", dl.dli_fname);
        snprintf(mpiexec, sizeof mpiexec, "%s/../bin/mpiexec", dirname(lib));
        CHECK(realpath(argv[0], self) != NULL, "realpath");
        char *cargv[] = {mpiexec, "-n", "2", self, "client", service, NULL};
        /* The client job must not take this rank's launcher connection for its own. */
        char **env = calloc(1024, sizeof *env);
        int n = 0;
        for (char **e = environ; *e && n < 1023; e++)
            if (strncmp(*e, "PMI_", 4) && strncmp(*e, "MPI_LOCAL", 9))
                env[n++] = *e;
        CHECK_INT(posix_spawn(&client, mpiexec, NULL, NULL, cargv, env), 0);
        free(env);
    }
    MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    exchange(inter, 1);
    MPI_Comm_disconnect(&inter);
    if (rank == 0) {
        CHECK_INT(MPI_Unpublish_name(service, MPI_INFO_NULL, port), MPI_SUCCESS);
        CHECK_INT(MPI_Close_port(port), MPI_SUCCESS);
        int status = -1;
        CHECK(waitpid(client, &status, 0) == client, "waitpid");
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "client job status %#x", status);
    }
    MPI_Finalize();
    return wtest_finish();
}
