/* MPI_Comm_join over a TCP socket: rank 0 listens on a loopback port, tells rank 1 the port
 * number, rank 1 connects; both join and talk over the intercommunicator. The socket stays
 * the program's (still open and usable after the join). */
#include "wtest.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, fd = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    wtest_world_rank();
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (rank == 0) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        socklen_t len = sizeof a;
        CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0, "bind");
        CHECK(listen(l, 1) == 0, "listen");
        getsockname(l, (struct sockaddr *)&a, &len);
        int p = ntohs(a.sin_port);
        MPI_Send(&p, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        fd = accept(l, NULL, NULL);
        close(l);
    } else if (rank == 1) {
        int p;
        MPI_Recv(&p, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        a.sin_port = htons(p);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect");
    }
    if (rank < 2) {
        MPI_Comm inter;
        CHECK_INT(MPI_Comm_join(fd, &inter), MPI_SUCCESS);
        int flag, rsize, lsize;
        MPI_Comm_test_inter(inter, &flag);
        MPI_Comm_remote_size(inter, &rsize);
        MPI_Comm_size(inter, &lsize);
        CHECK_INT(flag, 1);
        CHECK_INT(rsize, 1);
        CHECK_INT(lsize, 1);
        double v[3] = {rank + 0.5, rank * 2.0, -1}, got[3] = {0};
        MPI_Sendrecv(v, 3, MPI_DOUBLE, 0, 3, got, 3, MPI_DOUBLE, 0, 3, inter, MPI_STATUS_IGNORE);
        CHECK(got[0] == (1 - rank) + 0.5 && got[1] == (1 - rank) * 2.0 && got[2] == -1,
              "got %g %g %g", got[0], got[1], got[2]);
        /* The socket is still the program's. */
        char c = 'x', d = 0;
        CHECK(write(fd, &c, 1) == 1, "write after join");
        CHECK(read(fd, &d, 1) == 1 && d == 'x', "read after join");
        close(fd);
        MPI_Comm_disconnect(&inter);
    }
    MPI_Finalize();
    return wtest_finish();
}
