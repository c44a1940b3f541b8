/* PRRTE's process sets as session process sets: launched by Open MPI's mpirun as two apps,
 * `-n 1 --pset alpha` and `-n 2 --pset beta` (manifest mpirun-psets), a session lists both
 * beside the built-in sets, their groups hold the apps' world ranks in order, and a
 * communicator made from `beta` reduces over exactly its members. */
#include "wtest.h"

static int has_pset(MPI_Session s, const char *want)
{
    int n, found = 0;
    EXPECT_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    for (int i = 0; i < n; i++) {
        char name[256];
        int len = sizeof name;
        EXPECT_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        found += strcmp(name, want) == 0;
    }
    return found;
}

int main(void)
{
    MPI_Session s;
    MPI_Group world, g;
    int wrank, wsize, size, translated[2], ranks[2] = {0, 1};
    EXPECT_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    EXPECT_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &world));
    MPI_Group_rank(world, &wrank);
    MPI_Group_size(world, &wsize);
    wtest_rank = wrank;
    CHECK_INT(wsize, 3);
    CHECK_INT(has_pset(s, "alpha"), 1);
    CHECK_INT(has_pset(s, "beta"), 1);

    /* alpha is the first app (world rank 0), beta the second (world ranks 1 and 2). */
    EXPECT_OK(MPI_Group_from_session_pset(s, "alpha", &g));
    MPI_Group_size(g, &size);
    CHECK_INT(size, 1);
    MPI_Group_translate_ranks(g, 1, ranks, world, translated);
    CHECK_INT(translated[0], 0);
    MPI_Group_free(&g);

    EXPECT_OK(MPI_Group_from_session_pset(s, "beta", &g));
    MPI_Group_size(g, &size);
    CHECK_INT(size, 2);
    MPI_Group_translate_ranks(g, 2, ranks, world, translated);
    CHECK_INT(translated[0], 1);
    CHECK_INT(translated[1], 2);

    MPI_Info info;
    char value[16];
    int flag = 0, vlen = sizeof value;
    EXPECT_OK(MPI_Session_get_pset_info(s, "beta", &info));
    MPI_Info_get_string(info, "mpi_size", &vlen, value, &flag);
    CHECK(flag && strcmp(value, "2") == 0, "beta's mpi_size is %s", flag ? value : "absent");
    MPI_Info_free(&info);

    if (wrank > 0) {
        MPI_Comm c;
        int sum = 0;
        EXPECT_OK(MPI_Comm_create_from_group(g, "weft.test.beta", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
        EXPECT_OK(MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK_INT(sum, 1 + 2);
        MPI_Comm_free(&c);
    }
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    MPI_Session_finalize(&s);
    return wtest_finish();
}
