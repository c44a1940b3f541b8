/* A job on one node never loads UCX: the transport between nodes loads libucp when it is
 * first used (linked, UCX's libraries and memory hooks cost every MPI_Init ~200 us). The
 * test reads this process's mappings after MPI_Init and after a message and a collective. */
#include "wtest.h"
#include <string.h>

static int maps_mention(const char *what)
{
    char line[4096];
    int found = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL, "cannot read /proc/self/maps");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, what))
            found = 1;
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    int rank, size, v, sum = 0;

    EXPECT_OK(MPI_Init(&argc, &argv));
    rank = wtest_world_rank();
    EXPECT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(!maps_mention("libucp"), "libucp is mapped after MPI_Init");
    CHECK(!maps_mention("libucs"), "libucs is mapped after MPI_Init");
    v = rank + 1;
    EXPECT_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_INT(sum, size * (size + 1) / 2);
    if (size > 1) {
        int got = -1;
        if (rank == 0)
            EXPECT_OK(MPI_Send(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD));
        else if (rank == 1) {
            EXPECT_OK(MPI_Recv(&got, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_INT(got, 1);
        }
    }
    CHECK(!maps_mention("libucp"), "libucp is mapped after on-node communication");
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
