/* Three jobs joined in several orders. Job A (this program, 2 ranks) spawns job B (2 ranks)
 * and job C (1 rank), separately: each job has its own context ids, and each process numbers
 * the processes of other jobs in the order it met them. Then:
 *   1. A and B merge, and the merged group makes an intercommunicator with C through
 *      MPI_Intercomm_create (B and C never talked: they connect there), merged again;
 *   2. B and C connect through a port (its name passed on by A), merge with C first, make an
 *      intercommunicator with A through MPI_Intercomm_create (B's leader bridges), merged;
 *   3. A and C merge (C first), accept B's connection, merged with equal `high`.
 * Every merged communicator of the three jobs runs collectives whose values name the ranks
 * (id = job * 100 + world rank), so a process that placed another at a wrong rank fails. */
#include "wtest.h"

#define NB 2
#define NC 1

static int job, rank, id;

static int max_int(int a, int b) { return a > b ? a : b; }

/* Collectives over `comm` (all three jobs), whose ranks must hold `ids` (or, when `alt` is
 * not NULL, `alt`: a merge of equal `high`s may put either group first). */
static void check_all(MPI_Comm comm, const int *ids, const int *alt, int n, const char *what)
{
    int size, me, got[8] = {0};
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &me);
    CHECK(size == n, "%s: size %d, expected %d", what, size, n);
    if (size != n)
        return;
    MPI_Allgather(&id, 1, MPI_INT, got, 1, MPI_INT, comm);
    CHECK(got[me] == id, "%s: rank %d holds %d, expected this process (%d)", what, me,
          got[me], id);
    const int *want = ids;
    if (alt && got[0] == alt[0])
        want = alt;
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s: rank %d is %d, expected %d", what, i, got[i], want[i]);
    int sum = 0, expect_sum = 0, expect_max = 0;
    for (int i = 0; i < n; i++) {
        expect_sum += want[i];
        expect_max = max_int(expect_max, want[i]);
    }
    MPI_Allreduce(&id, &sum, 1, MPI_INT, MPI_SUM, comm);
    CHECK(sum == expect_sum, "%s: sum %d, expected %d", what, sum, expect_sum);
    int b = me == n - 1 ? id + 7 : -1;
    MPI_Bcast(&b, 1, MPI_INT, n - 1, comm);
    CHECK(b == want[n - 1] + 7, "%s: bcast %d, expected %d", what, b, want[n - 1] + 7);
    /* Point to point between every pair: each sends its id to every other rank. */
    for (int peer = 0; peer < n; peer++) {
        if (peer == me)
            continue;
        int v = -1;
        MPI_Sendrecv(&id, 1, MPI_INT, peer, 3, &v, 1, MPI_INT, peer, 3, comm,
                     MPI_STATUS_IGNORE);
        CHECK(v == want[peer], "%s: rank %d sent %d, expected %d", what, peer, v, want[peer]);
    }
    /* New communicators from it: a split by job (its context id agreed by the three jobs)
     * and a duplicate. */
    MPI_Comm part, dup;
    MPI_Comm_split(comm, job, -me, &part);
    int psize, pmax = 0, members = 0;
    MPI_Comm_size(part, &psize);
    for (int i = 0; i < n; i++)
        members += want[i] / 100 == job;
    CHECK(psize == members, "%s: job %d's part has %d ranks, expected %d", what, job, psize,
          members);
    MPI_Allreduce(&id, &pmax, 1, MPI_INT, MPI_MAX, part);
    CHECK(pmax / 100 == job, "%s: job %d's part reduced to %d", what, job, pmax);
    MPI_Comm_free(&part);
    MPI_Comm_dup(comm, &dup);
    int dmax = 0;
    MPI_Allreduce(&id, &dmax, 1, MPI_INT, MPI_MAX, dup);
    CHECK(dmax == expect_max, "%s: max %d on the duplicate, expected %d", what, dmax,
          expect_max);
    MPI_Barrier(dup);
    MPI_Comm_free(&dup);
}

/* Step 1 on A and B: the merged A+B group's intercommunicator with C. */
static void ab_with_c(MPI_Comm ab_inter, int high, MPI_Comm peer)
{
    MPI_Comm ab, abc_inter, abc;
    MPI_Intercomm_merge(ab_inter, high, &ab);
    MPI_Intercomm_create(ab, 0, peer, 0, 11, &abc_inter);
    int rsize;
    MPI_Comm_remote_size(abc_inter, &rsize);
    CHECK_INT(rsize, NC);
    MPI_Intercomm_merge(abc_inter, 0, &abc);
    const int ids[] = {100, 101, 200, 201, 300};
    check_all(abc, ids, NULL, 5, "A+B with C");
    MPI_Comm_free(&abc);
    MPI_Comm_free(&abc_inter);
    MPI_Comm_free(&ab);
}

/* Step 2 on B and C: the merged B+C group (C first) with A; B's rank 0 leads. */
static void bc_with_a(MPI_Comm bc_inter, int high, MPI_Comm peer)
{
    MPI_Comm bc, abc_inter, abc;
    MPI_Intercomm_merge(bc_inter, high, &bc);
    MPI_Intercomm_create(bc, NC, peer, 0, 12, &abc_inter);
    MPI_Intercomm_merge(abc_inter, 0, &abc);
    const int ids[] = {300, 200, 201, 100, 101};
    check_all(abc, ids, NULL, 5, "B+C with A");
    MPI_Comm_free(&abc);
    MPI_Comm_free(&abc_inter);
    MPI_Comm_free(&bc);
}

/* Step 3's end everywhere: the intercommunicator between A+C and B, merged with equal
 * `high`; returns the sum of the errors of B and C (significant at A's rank 0). */
static int ac_with_b(MPI_Comm inter)
{
    MPI_Comm abc;
    MPI_Intercomm_merge(inter, 0, &abc);
    const int ac_first[] = {300, 100, 101, 200, 201}, b_first[] = {200, 201, 300, 100, 101};
    check_all(abc, ac_first, b_first, 5, "A+C with B");
    int errs = job == 1 ? 0 : wtest_errs, total = -1, root = -1, me;
    MPI_Comm_rank(abc, &me);
    int mine = id == 100 ? me : -1;
    MPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MAX, abc);
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, root, abc);
    MPI_Comm_free(&abc);
    return total;
}

static void child(MPI_Comm parent, const char *role)
{
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm bc_inter, ac, abc_inter;
    if (role[0] == 'B') {
        job = 2;
        id = 200 + rank;
        ab_with_c(parent, 1, MPI_COMM_WORLD);
        /* Step 2: B accepts C on a port whose name goes through A. */
        if (rank == 0) {
            MPI_Open_port(MPI_INFO_NULL, port);
            MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, parent);
        }
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &bc_inter);
        if (rank == 0)
            MPI_Close_port(port);
        int sum = 0;
        MPI_Allreduce(&id, &sum, 1, MPI_INT, MPI_SUM, bc_inter);
        CHECK_INT(sum, 300);
        bc_with_a(bc_inter, 1, parent);
        /* Step 3: B connects to A+C. */
        if (rank == 0)
            MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 2, parent, MPI_STATUS_IGNORE);
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &abc_inter);
    } else {
        job = 3;
        id = 300 + rank;
        MPI_Comm ab_inter;
        MPI_Intercomm_create(MPI_COMM_WORLD, 0, parent, 0, 11, &ab_inter);
        MPI_Comm abc;
        MPI_Intercomm_merge(ab_inter, 1, &abc);
        const int ids[] = {100, 101, 200, 201, 300};
        check_all(abc, ids, NULL, 5, "A+B with C");
        MPI_Comm_free(&abc);
        MPI_Comm_free(&ab_inter);
        if (rank == 0)
            MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, parent, MPI_STATUS_IGNORE);
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &bc_inter);
        int sum = 0;
        MPI_Allreduce(&id, &sum, 1, MPI_INT, MPI_SUM, bc_inter);
        CHECK_INT(sum, 200 + 201);
        bc_with_a(bc_inter, 0, MPI_COMM_WORLD);
        MPI_Intercomm_merge(parent, 0, &ac);
        MPI_Comm_accept(port, MPI_INFO_NULL, 1, ac, &abc_inter);
        MPI_Comm_free(&ac);
    }
    ac_with_b(abc_inter);
    MPI_Comm_disconnect(&abc_inter);
    MPI_Comm_disconnect(&bc_inter);
    MPI_Comm_disconnect(&parent);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wtest_world_rank();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        child(parent, argc > 1 ? argv[1] : "?");
        MPI_Finalize();
        return wtest_errs != 0;
    }
    job = 1;
    id = 100 + rank;
    MPI_Comm to_b, to_c, ab_c, ac, abc_inter;
    char *b_args[] = {"B", NULL}, *c_args[] = {"C", NULL};
    EXPECT_OK(MPI_Comm_spawn(argv[0], b_args, NB, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &to_b,
                             MPI_ERRCODES_IGNORE));
    EXPECT_OK(MPI_Comm_spawn(argv[0], c_args, NC, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &to_c,
                             MPI_ERRCODES_IGNORE));
    /* Step 1. */
    ab_with_c(to_b, 0, to_c);
    /* Step 2: pass B's port name on to C, then join B+C. */
    char port[MPI_MAX_PORT_NAME] = "";
    if (rank == 0) {
        MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, to_b, MPI_STATUS_IGNORE);
        MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, to_c);
    }
    MPI_Intercomm_create(MPI_COMM_WORLD, 0, to_b, 0, 12, &ab_c);
    MPI_Comm abc;
    MPI_Intercomm_merge(ab_c, 1, &abc);
    const int ids[] = {300, 200, 201, 100, 101};
    check_all(abc, ids, NULL, 5, "B+C with A");
    MPI_Comm_free(&abc);
    MPI_Comm_free(&ab_c);
    /* Step 3: A+C (C first) accept B at A's rank 0, which passes the port to B. */
    MPI_Intercomm_merge(to_c, 1, &ac);
    if (rank == 0) {
        MPI_Open_port(MPI_INFO_NULL, port);
        MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 2, to_b);
    }
    MPI_Comm_accept(port, MPI_INFO_NULL, 1, ac, &abc_inter);
    MPI_Comm_free(&ac);
    int others = ac_with_b(abc_inter);
    if (rank == 0) {
        CHECK_INT(others, 0);
        MPI_Close_port(port);
    }
    MPI_Comm_disconnect(&abc_inter);
    MPI_Comm_disconnect(&to_b);
    MPI_Comm_disconnect(&to_c);
    MPI_Finalize();
    return wtest_finish();
}
