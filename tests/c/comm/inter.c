/* Intercommunicators: create from evens/odds of the world, point-to-point between the groups
 * (sources are remote-group ranks), remote size/group, dup, compare, merge. Needs >= 2 ranks. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int rank, size, lrank, lsize, rsize, flag, res, i, r, n;
    int even;
    MPI_Comm local, inter, inter2, merged;
    MPI_Group rg, wg;
    MPI_Status st;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    even = rank % 2 == 0;

    EXPECT_OK(MPI_Comm_split(MPI_COMM_WORLD, !even, rank, &local));
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_size(local, &lsize);
    /* leaders: world rank 0 (evens) and world rank 1 (odds) */
    EXPECT_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, even ? 1 : 0, 99, &inter));
    EXPECT_OK(MPI_Comm_test_inter(inter, &flag));
    CHECK_INT(flag, 1);
    EXPECT_OK(MPI_Comm_size(inter, &n));
    CHECK_INT(n, lsize);
    EXPECT_OK(MPI_Comm_rank(inter, &r));
    CHECK_INT(r, lrank);
    EXPECT_OK(MPI_Comm_remote_size(inter, &rsize));
    CHECK_INT(rsize, even ? size / 2 : (size + 1) / 2);
    /* remote rank k is world rank 2k (+1 for the odds) */
    EXPECT_OK(MPI_Comm_remote_group(inter, &rg));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (i = 0; i < rsize; i++) {
        int w = -1;
        MPI_Group_translate_ranks(rg, 1, &i, wg, &w);
        CHECK_INT(w, 2 * i + (even ? 1 : 0));
    }
    MPI_Group_free(&rg);

    /* point-to-point: every local rank sends to remote rank lrank % rsize; everyone receives
     * from each remote rank that targets it */
    {
        int v = 1000 + rank, expect = 0, got;
        MPI_Request req;
        EXPECT_OK(MPI_Isend(&v, 1, MPI_INT, lrank % rsize, 5, inter, &req));
        for (i = 0; i < rsize; i++)
            if (i % lsize == lrank)
                expect++;
        for (i = 0; i < expect; i++) {
            EXPECT_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 5, inter, &st));
            CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize, "source %d is a remote rank", st.MPI_SOURCE);
            CHECK_INT(st.MPI_SOURCE % lsize, lrank);
            CHECK_INT(got, 1000 + 2 * st.MPI_SOURCE + (even ? 1 : 0));
        }
        EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        /* a rank beyond the remote group is an error */
        EXPECT_ERR(MPI_Send(&v, 1, MPI_INT, rsize, 5, inter), MPI_ERR_RANK, "MPI_Send", "dest");
    }

    /* dup keeps both groups; traffic is separate */
    EXPECT_OK(MPI_Comm_dup(inter, &inter2));
    EXPECT_OK(MPI_Comm_compare(inter, inter2, &res));
    CHECK_INT(res, MPI_CONGRUENT);
    EXPECT_OK(MPI_Comm_compare(inter, local, &res));
    CHECK_INT(res, MPI_UNEQUAL);
    if (lrank == 0) {
        int v = rank, got = -1;
        EXPECT_OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 1, &got, 1, MPI_INT, 0, 1, inter2, &st));
        CHECK_INT(got, even ? 1 : 0);
        CHECK_INT(st.MPI_SOURCE, 0);
    }

    /* merge: odds pass high=1, so evens come first */
    EXPECT_OK(MPI_Intercomm_merge(inter, !even, &merged));
    EXPECT_OK(MPI_Comm_test_inter(merged, &flag));
    CHECK_INT(flag, 0);
    EXPECT_OK(MPI_Comm_size(merged, &n));
    CHECK_INT(n, size);
    EXPECT_OK(MPI_Comm_rank(merged, &r));
    CHECK_INT(r, even ? rank / 2 : (size + 1) / 2 + rank / 2);
    {
        int sum = 0, one = rank;
        EXPECT_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged));
        CHECK_INT(sum, size * (size - 1) / 2);
    }
    MPI_Comm_free(&merged);
    /* both high: the group holding world rank 0 first */
    EXPECT_OK(MPI_Intercomm_merge(inter, 1, &merged));
    EXPECT_OK(MPI_Comm_rank(merged, &r));
    CHECK_INT(r, even ? rank / 2 : (size + 1) / 2 + rank / 2);
    MPI_Comm_free(&merged);

    /* bad input */
    EXPECT_ERR(MPI_Comm_remote_size(local, &n), MPI_ERR_COMM, "MPI_Comm_remote_size", "comm");
    EXPECT_ERR(MPI_Intercomm_merge(local, 0, &merged), MPI_ERR_COMM, "MPI_Intercomm_merge", "intercomm");
    EXPECT_ERR(MPI_Intercomm_create(local, lsize, MPI_COMM_WORLD, 0, 1, &merged), MPI_ERR_RANK,
               "MPI_Intercomm_create", "local_leader");

    MPI_Group_free(&wg);
    EXPECT_OK(MPI_Comm_free(&inter2));
    EXPECT_OK(MPI_Comm_free(&inter));
    EXPECT_OK(MPI_Comm_free(&local));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
