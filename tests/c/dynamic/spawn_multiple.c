/* MPI_Comm_spawn_multiple of two programs (this one with argument "a" on 1 process and "b"
 * on 2, the second in another working directory): each child reports its MPI_APPNUM, its
 * argument and whether it runs in the wdir asked for; parent 0 checks them. */
#define _GNU_SOURCE
#include "wtest.h"
#include <limits.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Comm parent, inter;
    MPI_Init(&argc, &argv);
    wtest_world_rank();
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        int rank, size, *appnum, flag;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
        char cwd[PATH_MAX] = "";
        if (!getcwd(cwd, sizeof cwd))
            cwd[0] = 0;
        int report[4] = {rank, flag ? *appnum : -1, argc > 1 ? argv[1][0] : 0,
                         strcmp(cwd, "/tmp") == 0};
        MPI_Send(report, 4, MPI_INT, 0, 1, parent);
        int size_ok = size == 3;
        MPI_Send(&size_ok, 1, MPI_INT, 0, 2, parent);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char self[PATH_MAX];
    CHECK(realpath(argv[0], self) != NULL, "realpath(%s)", argv[0]);
    char *cmds[2] = {self, self};
    char *argv_a[] = {"a", NULL}, *argv_b[] = {"b", NULL};
    char **argvs[2] = {argv_a, argv_b};
    int maxprocs[2] = {1, 2}, errcodes[3] = {-1, -1, -1};
    MPI_Info infos[2];
    infos[0] = MPI_INFO_NULL;
    MPI_Info_create(&infos[1]);
    MPI_Info_set(infos[1], "wdir", "/tmp");
    int rc = MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, &inter,
                                     errcodes);
    MPI_Info_free(&infos[1]);
    CHECK_INT(rc, MPI_SUCCESS);
    for (int i = 0; i < 3; i++)
        CHECK_INT(errcodes[i], MPI_SUCCESS);
    int rsize;
    MPI_Comm_remote_size(inter, &rsize);
    CHECK_INT(rsize, 3);
    if (rank == 0) {
        for (int i = 0; i < 3; i++) {
            int r[4], ok;
            MPI_Recv(r, 4, MPI_INT, i, 1, inter, MPI_STATUS_IGNORE);
            MPI_Recv(&ok, 1, MPI_INT, i, 2, inter, MPI_STATUS_IGNORE);
            CHECK_INT(r[0], i);
            CHECK_INT(r[1], i == 0 ? 0 : 1);
            CHECK_INT(r[2], i == 0 ? 'a' : 'b');
            CHECK_INT(r[3], i == 0 ? 0 : 1);
            CHECK_INT(ok, 1);
        }
    }
    MPI_Comm_disconnect(&inter);
    MPI_Finalize();
    return wtest_finish();
}
