/* Jobs that must agree on settings and do not: the children of this spawn run with another
 * WEFT_SHM_CELLS (the rings' geometry) and WEFT_COLL_ALLREDUCE (a collective algorithm).
 * The spawn fails on every parent with MPI_ERR_OTHER and a message naming each differing
 * setting with both values; nothing hangs (the children's MPI_Init fails the same way and
 * they end). */
#include "wtest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        FAIL("a child's MPI_Init connected to parents with other settings");
        MPI_Finalize();
        return 1;
    }
    const char *cells = getenv("WEFT_SHM_CELLS");
    const char *mine = cells && *cells ? cells : "64";
    const char *theirs = strcmp(mine, "128") == 0 ? "256" : "128";
    const char *allreduce = getenv("WEFT_COLL_ALLREDUCE");
    const char *ring = "ring";
    int differ_allreduce = !(allreduce && strcmp(allreduce, ring) == 0);
    /* The spawned launcher inherits this environment. */
    setenv("WEFT_SHM_CELLS", theirs, 1);
    setenv("WEFT_COLL_ALLREDUCE", ring, 1);
    MPI_Comm inter = MPI_COMM_NULL;
    int codes[2] = {-1, -1};
    int rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                            codes);
    char cells_says[128];
    snprintf(cells_says, sizeof cells_says, "WEFT_SHM_CELLS=%s here, %s in the other job", mine,
             theirs);
    EXPECT_ERR(rc, MPI_ERR_OTHER, "MPI_Comm_spawn", cells_says);
    if (differ_allreduce && rc != MPI_SUCCESS)
        CHECK_CONTAINS(wtest_string(rc), "WEFT_COLL_ALLREDUCE=");
    CHECK(inter == MPI_COMM_NULL, "no intercommunicator when the settings differ");
    /* The process goes on working. */
    int rank, sum = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_INT(sum, size * (size - 1) / 2);
    MPI_Finalize();
    return wtest_finish();
}
