/* A spawning process that disconnected from its children finalizes independently of them
 * (MPI 4.1 §11.10.4): the parent spawns one child, both disconnect the intercommunicator;
 * the child then waits (up to 20 s) for a file the parent creates only after its
 * MPI_Finalize returned. If the parent's MPI_Finalize waited for the spawned job, the child
 * gives up first and leaves a "gave up" file, which the parent finds and fails on. */
#include "wtest.h"
#include <string.h>
#include <time.h>
#include <unistd.h>

static int exists(const char *path)
{
    return access(path, F_OK) == 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    char done[256], gave_up[256];
    if (parent != MPI_COMM_NULL) {
        CHECK(argc >= 2, "the child gets the parent's pid");
        snprintf(done, sizeof done, "/tmp/weft-spawn-disconnect.%s.done", argv[1]);
        snprintf(gave_up, sizeof gave_up, "/tmp/weft-spawn-disconnect.%s.gaveup", argv[1]);
        int v = -1;
        MPI_Recv(&v, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE);
        CHECK_INT(v, 42);
        CHECK_INT(MPI_Comm_disconnect(&parent), MPI_SUCCESS);
        CHECK(parent == MPI_COMM_NULL, "disconnect sets MPI_COMM_NULL");
        time_t start = time(NULL);
        while (!exists(done) && time(NULL) - start < 20)
            usleep(10000);
        if (!exists(done)) {
            FILE *f = fopen(gave_up, "w");
            if (f)
                fclose(f);
        }
        unlink(done);
        MPI_Finalize();
        return 0;
    }
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    snprintf(done, sizeof done, "/tmp/weft-spawn-disconnect.%s.done", pid);
    snprintf(gave_up, sizeof gave_up, "/tmp/weft-spawn-disconnect.%s.gaveup", pid);
    char *args[] = {pid, NULL};
    MPI_Comm inter;
    CHECK_INT(MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
                             MPI_ERRCODES_IGNORE),
              MPI_SUCCESS);
    int v = 42;
    MPI_Send(&v, 1, MPI_INT, 0, 1, inter);
    CHECK_INT(MPI_Comm_disconnect(&inter), MPI_SUCCESS);
    MPI_Finalize();
    /* The child is still waiting for this file: the parent's finalize did not wait for it. */
    CHECK(!exists(gave_up), "MPI_Finalize waited for the disconnected child");
    unlink(gave_up);
    FILE *f = fopen(done, "w");
    if (f)
        fclose(f);
    if (wtest_errs == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
