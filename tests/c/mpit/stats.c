/* WEFT_STATS=<file>: at MPI_Finalize rank 0 writes one table with a line per rank (messages
 * and bytes sent and received, rendezvous sends, unexpected arrivals and high-water mark,
 * time in MPI, wait time) and a total line; the values match what the program did. */
#include "wtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    char path[] = "/tmp/weft-stats-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    /* Each rank names its own file; rank 0's is the one written. */
    setenv("WEFT_STATS", path, 1);
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char buf[100000] = {0};
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < 10; i++)
            MPI_Send(buf, 1000, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        usleep(200000);
        MPI_Send(buf, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
        /* Rendezvous: waits until rank 1 matches it. */
        MPI_Send(buf, sizeof buf, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
    } else {
        /* Tag 3 comes 0.2 s after the others: they all arrive unexpected meanwhile. */
        MPI_Recv(buf, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 10; i++)
            MPI_Recv(buf, 1000, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(buf, sizeof buf, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    if (rank == 0) {
        FILE *f = fopen(path, "r");
        CHECK(f != NULL, "%s was written", path);
        char line[512];
        int rows = 0;
        while (f && fgets(line, sizeof line, f)) {
            char label[16];
            unsigned long long ms, bs, mr, br, rndv, unexp, umax;
            double mpi_s, wait_s;
            if (sscanf(line, "%15s %llu %llu %llu %llu %llu %llu %llu %lf %lf", label, &ms, &bs,
                       &mr, &br, &rndv, &unexp, &umax, &mpi_s, &wait_s) != 10)
                continue;
            rows++;
            if (!strcmp(label, "0")) {
                CHECK(ms >= 12 && ms <= 20, "rank 0 sent %llu messages", ms);
                CHECK(bs >= 10000 + sizeof buf + 1 && bs < 10000 + sizeof buf + 1000,
                      "rank 0 sent %llu bytes", bs);
                CHECK_INT(rndv, 1);
                CHECK(mpi_s > 0 && wait_s <= mpi_s, "rank 0 in MPI %f s, waiting %f s", mpi_s, wait_s);
            } else if (!strcmp(label, "1")) {
                CHECK(mr >= 12 && mr <= 20, "rank 1 received %llu messages", mr);
                CHECK(br >= 10000 + sizeof buf + 1, "rank 1 received %llu bytes", br);
                CHECK(unexp >= 10 && umax >= 10, "rank 1: %llu unexpected, at most %llu", unexp,
                      umax);
                CHECK(wait_s >= 0.15 && wait_s <= mpi_s, "rank 1 waited %f s of %f s", wait_s,
                      mpi_s);
            } else {
                CHECK_STR(label, "all");
            }
        }
        CHECK_INT(rows, 3);
        if (f)
            fclose(f);
    }
    unlink(path);
    return wtest_finish();
}
