/* MPI_Comm_group and MPI_Comm_create on a thread communicator inside its region
 * (docs/threadcomm.md): the group's members are the thread ranks (no processes: translated to
 * MPI_COMM_WORLD's group they are MPI_UNDEFINED), the group functions work on it, and
 * MPI_Comm_create with a subgroup gives its members a new thread communicator (ranks in the
 * group's order, born active, freed with MPI_Comm_free before finish, naming its ranks as the
 * thread communicator did; a duplicate's and the whole group's are MPI_IDENT) and the others
 * MPI_COMM_NULL. A group that names processes or ranks past the size is refused with
 * MPI_ERR_GROUP on every rank. Run on one or several processes with argv[1] threads each. */
#include "wtest.h"
#include "threads.h"
#include "tcheck.h"
#include <stdlib.h>

static MPI_Comm tc;
static int nprocs, nt;
static MPI_Group world_group;

static void region(void *arg)
{
    int round = *(int *)arg;
    TEXPECT(MPIX_Threadcomm_start(tc) == MPI_SUCCESS);
    int rank = -1, size = -1;
    MPI_Comm_rank(tc, &rank);
    MPI_Comm_size(tc, &size);
    MPI_Comm_set_errhandler(tc, MPI_ERRORS_RETURN);

    MPI_Group g = MPI_GROUP_NULL;
    TEXPECT(MPI_Comm_group(tc, &g) == MPI_SUCCESS && g != MPI_GROUP_NULL);
    int gsize = -1, grank = -1;
    MPI_Group_size(g, &gsize);
    MPI_Group_rank(g, &grank);
    TEXPECT(gsize == size && grank == rank);
    int to_world = 0;
    TEXPECT(MPI_Group_translate_ranks(g, 1, &rank, world_group, &to_world) == MPI_SUCCESS &&
            to_world == MPI_UNDEFINED);

    /* The even ranks, in reverse order on one process (any order works there), in rank
     * order across processes. */
    int evens[64], m = 0;
    for (int k = 0; k < size; k++) {
        int r = nprocs == 1 ? size - 1 - k : k;
        if (r % 2 == 0)
            evens[m++] = r;
    }
    MPI_Group sub = MPI_GROUP_NULL;
    TEXPECT(MPI_Group_incl(g, m, evens, &sub) == MPI_SUCCESS);
    int back[64], in_sub[64];
    for (int i = 0; i < m; i++)
        in_sub[i] = i;
    TEXPECT(MPI_Group_translate_ranks(sub, m, in_sub, g, back) == MPI_SUCCESS);
    for (int i = 0; i < m; i++)
        TEXPECT(back[i] == evens[i]);

    MPI_Comm c = MPI_COMM_WORLD;
    TEXPECT(MPI_Comm_create(tc, sub, &c) == MPI_SUCCESS);
    if (rank % 2 != 0) {
        TEXPECT(c == MPI_COMM_NULL);
    } else {
        TEXPECT(c != MPI_COMM_NULL && c != tc);
        int crank = -1, csize = -1, flag = 0;
        MPI_Comm_rank(c, &crank);
        MPI_Comm_size(c, &csize);
        TEXPECT(csize == m && crank >= 0 && crank < m && evens[crank] == rank);
        TEXPECT(MPIX_Comm_test_threadcomm(c, &flag) == MPI_SUCCESS && flag == 1);
        int sum = -1, want = 0;
        for (int i = 0; i < m; i++)
            want += evens[i];
        TEXPECT(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c) == MPI_SUCCESS && sum == want);
        int right = (crank + 1) % m, left = (crank + m - 1) % m, in = -1, out = 100 * rank + round;
        TEXPECT(MPI_Sendrecv(&out, 1, MPI_INT, right, 3, &in, 1, MPI_INT, left, 3, c,
                             MPI_STATUS_IGNORE) == MPI_SUCCESS);
        TEXPECT(in == 100 * evens[left] + round);
        /* Its own group: its ranks. */
        MPI_Group cg = MPI_GROUP_NULL;
        TEXPECT(MPI_Comm_group(c, &cg) == MPI_SUCCESS);
        int cgs = -1, cgr = -1;
        MPI_Group_size(cg, &cgs);
        MPI_Group_rank(cg, &cgr);
        TEXPECT(cgs == m && cgr == crank);
        /* It names its ranks as the thread communicator did. */
        int in_tc = -1;
        TEXPECT(MPI_Group_translate_ranks(cg, 1, &crank, g, &in_tc) == MPI_SUCCESS &&
                in_tc == rank);
        MPI_Group_free(&cg);
        TEXPECT(MPI_Comm_free(&c) == MPI_SUCCESS && c == MPI_COMM_NULL);
    }

    /* The empty group: nobody gets a communicator. */
    MPI_Comm e = MPI_COMM_WORLD;
    TEXPECT(MPI_Comm_create(tc, MPI_GROUP_EMPTY, &e) == MPI_SUCCESS && e == MPI_COMM_NULL);
    /* The whole group: a communicator like the thread communicator. */
    MPI_Comm all = MPI_COMM_NULL;
    TEXPECT(MPI_Comm_create(tc, g, &all) == MPI_SUCCESS && all != MPI_COMM_NULL);
    int arank = -1;
    MPI_Comm_rank(all, &arank);
    TEXPECT(arank == rank);
    MPI_Group ag = MPI_GROUP_NULL;
    int cmp = -1;
    TEXPECT(MPI_Comm_group(all, &ag) == MPI_SUCCESS);
    TEXPECT(MPI_Group_compare(ag, g, &cmp) == MPI_SUCCESS && cmp == MPI_IDENT);
    MPI_Group_free(&ag);
    /* A duplicate's group is the same group. */
    MPI_Comm d = MPI_COMM_NULL;
    MPI_Group dg = MPI_GROUP_NULL;
    TEXPECT(MPI_Comm_dup(tc, &d) == MPI_SUCCESS && MPI_Comm_group(d, &dg) == MPI_SUCCESS);
    TEXPECT(MPI_Group_compare(dg, g, &cmp) == MPI_SUCCESS && cmp == MPI_IDENT);
    MPI_Group_free(&dg);
    TEXPECT(MPI_Comm_free(&d) == MPI_SUCCESS);
    TEXPECT(MPI_Barrier(all) == MPI_SUCCESS);
    TEXPECT(MPI_Comm_free(&all) == MPI_SUCCESS);

    /* Groups that do not name this thread communicator's ranks. */
    MPI_Comm bad = MPI_COMM_NULL;
    TEXPECT(err_class(MPI_Comm_create(tc, world_group, &bad)) == MPI_ERR_GROUP);
    TEXPECT(err_class(MPI_Comm_create(tc, MPI_GROUP_NULL, &bad)) == MPI_ERR_GROUP);
    TEXPECT(err_class(MPI_Comm_create(tc, sub, NULL)) == MPI_ERR_ARG);
    TEXPECT(err_class(MPI_Comm_group(tc, NULL)) == MPI_ERR_ARG);

    MPI_Group_free(&sub);
    MPI_Group_free(&g);
    TEXPECT(MPIX_Threadcomm_finish(tc) == MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    nt = argc > 1 ? atoi(argv[1]) : 4;
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    CHECK_INT(MPIX_Threadcomm_init(MPI_COMM_WORLD, nt, &tc), MPI_SUCCESS);
    for (int round = 0; round < 10; round++)
        run_threads(nt, region, &round);
    CHECK_INT(atomic_load(&errors_in_threads), 0);
    /* Outside the region the thread communicator is refused. */
    MPI_Group g;
    CHECK_INT(err_class(MPI_Comm_group(tc, &g)), MPI_ERR_COMM);
    CHECK_INT(MPIX_Threadcomm_free(&tc), MPI_SUCCESS);
    MPI_Group_free(&world_group);
    MPI_Finalize();
    if (wtest_errs == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
