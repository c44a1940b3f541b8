/* Writing the control variable WEFT_COLL_BCAST bound to a communicator changes the
 * broadcast algorithm on that communicator, as the algorithm counters bound to it show;
 * other communicators keep theirs. Allgather, alltoall and gather are counted too. */
#include "coll_counters.h"

/* The index of `choice` in the enumeration of control variable `cvar`. */
static int choice_of(int cvar, const char *choice)
{
    MPI_T_enum et;
    int num = 0;
    EXPECT_OK(MPI_T_cvar_get_info(cvar, NULL, NULL, NULL, NULL, &et, NULL, NULL, NULL, NULL));
    EXPECT_OK(MPI_T_enum_get_info(et, &num, NULL, NULL));
    for (int k = 0; k < num; k++) {
        char name[64];
        int len = sizeof name, value;
        EXPECT_OK(MPI_T_enum_get_item(et, k, &value, name, &len));
        if (!strcmp(name, choice))
            return value;
    }
    FAIL("no choice %s", choice);
    return -1;
}

int main(int argc, char **argv)
{
    int provided, rank, data = 0;
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    EXPECT_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    EXPECT_OK(MPI_T_pvar_session_create(&s));
    MPI_Comm comm, other;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &other);

    MPI_T_pvar_handle shm = counter("weft_coll_bcast_shm", &comm),
                      linear = counter("weft_coll_bcast_linear", &comm),
                      other_shm = counter("weft_coll_bcast_shm", &other),
                      other_linear = counter("weft_coll_bcast_linear", &other);

    /* auto: two ranks of one node, a small message: shared memory. */
    data = rank == 0 ? 42 : 0;
    MPI_Bcast(&data, 1, MPI_INT, 0, comm);
    CHECK_INT(data, 42);
    CHECK_INT(value(shm), 1);
    CHECK_INT(value(linear), 0);

    int cvar, count, v = -1;
    MPI_T_cvar_handle ch;
    EXPECT_OK(MPI_T_cvar_get_index("WEFT_COLL_BCAST", &cvar));
    EXPECT_OK(MPI_T_cvar_handle_alloc(cvar, &comm, &ch, &count));
    EXPECT_OK(MPI_T_cvar_read(ch, &v));
    CHECK_INT(v, choice_of(cvar, "auto"));
    int lin = choice_of(cvar, "linear");
    EXPECT_OK(MPI_T_cvar_write(ch, &lin));
    EXPECT_OK(MPI_T_cvar_read(ch, &v));
    CHECK_INT(v, lin);

    for (int i = 0; i < 3; i++) {
        data = rank == 0 ? 7 + i : 0;
        MPI_Bcast(&data, 1, MPI_INT, 0, comm);
        CHECK_INT(data, 7 + i);
        MPI_Bcast(&data, 1, MPI_INT, 0, other);
    }
    CHECK_INT(value(linear), 3);
    CHECK_INT(value(shm), 1);
    CHECK_INT(value(other_shm), 3);
    CHECK_INT(value(other_linear), 0);

    /* Back to auto. */
    int aut = choice_of(cvar, "auto");
    EXPECT_OK(MPI_T_cvar_write(ch, &aut));
    MPI_Bcast(&data, 1, MPI_INT, 0, comm);
    CHECK_INT(value(shm), 2);
    CHECK_INT(value(linear), 3);
    EXPECT_OK(MPI_T_cvar_handle_free(&ch));

    /* Allgather, alltoall, gather, scan and reduce-scatter count the algorithm they ran too.
     * At 2 ranks on one node small ones go through the shared-memory area. */
    MPI_T_pvar_handle ag = counter("weft_coll_allgather_shm", &other),
                      a2a = counter("weft_coll_alltoall_shm", &other),
                      ga = counter("weft_coll_gather_shm", &other),
                      sc = counter("weft_coll_scan_shm", &other),
                      rs = counter("weft_coll_reduce_scatter_shm", &other);
    int two[2] = {-1, -1}, mine[2] = {rank, 10 + rank};
    MPI_Allgather(&rank, 1, MPI_INT, two, 1, MPI_INT, other);
    CHECK_INT(two[1], 1);
    MPI_Alltoall(mine, 1, MPI_INT, two, 1, MPI_INT, other);
    CHECK_INT(two[1], rank == 0 ? 1 : 11);
    MPI_Gather(&rank, 1, MPI_INT, two, 1, MPI_INT, 0, other);
    MPI_Gather(&rank, 1, MPI_INT, two, 1, MPI_INT, 0, other);
    int pre = -1, block = -1;
    MPI_Scan(&mine[1], &pre, 1, MPI_INT, MPI_SUM, other);
    CHECK_INT(pre, rank == 0 ? 10 : 21);
    MPI_Reduce_scatter_block(mine, &block, 1, MPI_INT, MPI_SUM, other);
    CHECK_INT(block, rank == 0 ? 1 : 21);
    CHECK_INT(value(ag), 1);
    CHECK_INT(value(a2a), 1);
    CHECK_INT(value(ga), 2);
    CHECK_INT(value(sc), 1);
    CHECK_INT(value(rs), 1);

    /* Progress spin: a local, writable variable. */
    EXPECT_OK(MPI_T_cvar_get_index("WEFT_PROGRESS_SPIN", &cvar));
    EXPECT_OK(MPI_T_cvar_handle_alloc(cvar, NULL, &ch, &count));
    int spin = 123;
    EXPECT_OK(MPI_T_cvar_write(ch, &spin));
    EXPECT_OK(MPI_T_cvar_read(ch, &v));
    CHECK_INT(v, 123);
    EXPECT_OK(MPI_T_cvar_handle_free(&ch));
    MPI_Barrier(MPI_COMM_WORLD);

    EXPECT_OK(MPI_T_pvar_session_free(&s));
    EXPECT_OK(MPI_T_finalize());
    MPI_Comm_free(&comm);
    MPI_Comm_free(&other);
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
