/* Groups: every group function with real rank maps, and bad input. Works for any size >= 1. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int rank, size, n, r, res, i;
    MPI_Group world, self, g, h, u, x, d, e;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    EXPECT_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    EXPECT_OK(MPI_Comm_group(MPI_COMM_SELF, &self));
    EXPECT_OK(MPI_Group_size(world, &n));
    CHECK_INT(n, size);
    EXPECT_OK(MPI_Group_rank(world, &r));
    CHECK_INT(r, rank);
    EXPECT_OK(MPI_Group_size(self, &n));
    CHECK_INT(n, 1);
    EXPECT_OK(MPI_Group_rank(self, &r));
    CHECK_INT(r, 0);
    EXPECT_OK(MPI_Group_size(MPI_GROUP_EMPTY, &n));
    CHECK_INT(n, 0);
    EXPECT_OK(MPI_Group_rank(MPI_GROUP_EMPTY, &r));
    CHECK_INT(r, MPI_UNDEFINED);

    /* Reverse the world: rank k -> size-1-k. */
    {
        int *ranks = malloc(sizeof(int) * size), *out = malloc(sizeof(int) * size);
        for (i = 0; i < size; i++)
            ranks[i] = size - 1 - i;
        EXPECT_OK(MPI_Group_incl(world, size, ranks, &g));
        EXPECT_OK(MPI_Group_rank(g, &r));
        CHECK_INT(r, size - 1 - rank);
        for (i = 0; i < size; i++)
            ranks[i] = i;
        EXPECT_OK(MPI_Group_translate_ranks(world, size, ranks, g, out));
        for (i = 0; i < size; i++)
            CHECK_INT(out[i], size - 1 - i);
        EXPECT_OK(MPI_Group_compare(world, g, &res));
        CHECK_INT(res, size == 1 ? MPI_IDENT : MPI_SIMILAR);
        EXPECT_OK(MPI_Group_compare(world, world, &res));
        CHECK_INT(res, MPI_IDENT);
        /* MPI_PROC_NULL translates to itself; a rank not in group2 to MPI_UNDEFINED. */
        {
            int two[2] = {MPI_PROC_NULL, 0};
            EXPECT_OK(MPI_Group_translate_ranks(world, size > 1 ? 2 : 1, two, self, out));
        }
        CHECK_INT(out[0], MPI_PROC_NULL);
        if (size > 1)
            CHECK_INT(out[1], rank == 0 ? 0 : MPI_UNDEFINED);
        free(ranks);
        free(out);
    }

    /* Evens by range_incl, odds by range_excl; union, intersection, difference. */
    {
        int evens[1][3] = {{0, size - 1, 2}};
        EXPECT_OK(MPI_Group_range_incl(world, 1, evens, &h));
        EXPECT_OK(MPI_Group_size(h, &n));
        CHECK_INT(n, (size + 1) / 2);
        EXPECT_OK(MPI_Group_rank(h, &r));
        CHECK_INT(r, rank % 2 == 0 ? rank / 2 : MPI_UNDEFINED);
        EXPECT_OK(MPI_Group_range_excl(world, 1, evens, &x));
        EXPECT_OK(MPI_Group_size(x, &n));
        CHECK_INT(n, size / 2);
        EXPECT_OK(MPI_Group_rank(x, &r));
        CHECK_INT(r, rank % 2 == 1 ? rank / 2 : MPI_UNDEFINED);
        /* odds then evens */
        EXPECT_OK(MPI_Group_union(x, h, &u));
        EXPECT_OK(MPI_Group_size(u, &n));
        CHECK_INT(n, size);
        EXPECT_OK(MPI_Group_rank(u, &r));
        CHECK_INT(r, rank % 2 == 1 ? rank / 2 : size / 2 + rank / 2);
        EXPECT_OK(MPI_Group_compare(u, world, &res));
        CHECK_INT(res, size <= 1 ? MPI_IDENT : MPI_SIMILAR);
        EXPECT_OK(MPI_Group_intersection(h, x, &e));
        CHECK(e == MPI_GROUP_EMPTY, "empty intersection is MPI_GROUP_EMPTY");
        EXPECT_OK(MPI_Group_difference(world, x, &d));
        EXPECT_OK(MPI_Group_compare(d, h, &res));
        CHECK_INT(res, MPI_IDENT);
        EXPECT_OK(MPI_Group_free(&d));
        EXPECT_OK(MPI_Group_intersection(world, h, &d));
        EXPECT_OK(MPI_Group_compare(d, h, &res));
        CHECK_INT(res, MPI_IDENT);
        EXPECT_OK(MPI_Group_free(&d));
        /* descending range */
        if (size >= 3) {
            int down[1][3] = {{size - 1, 0, -2}}, want[3], got[3], idx[3] = {0, 1, 2};
            EXPECT_OK(MPI_Group_range_incl(world, 1, down, &d));
            want[0] = size - 1;
            want[1] = size - 3;
            EXPECT_OK(MPI_Group_translate_ranks(d, 2, idx, world, got));
            CHECK_INT(got[0], want[0]);
            CHECK_INT(got[1], want[1]);
            EXPECT_OK(MPI_Group_free(&d));
        }
        EXPECT_OK(MPI_Group_free(&u));
        EXPECT_OK(MPI_Group_free(&e));
        CHECK(e == MPI_GROUP_NULL, "freed handle set to MPI_GROUP_NULL");
    }

    /* excl of self leaves size-1 members, and not this process. */
    EXPECT_OK(MPI_Group_excl(world, 1, &rank, &d));
    EXPECT_OK(MPI_Group_size(d, &n));
    CHECK_INT(n, size - 1);
    EXPECT_OK(MPI_Group_rank(d, &r));
    CHECK_INT(r, MPI_UNDEFINED);
    if (size > 1)
        EXPECT_OK(MPI_Group_free(&d));

    /* Bad input. */
    {
        int bad = size, twice[2] = {0, 0}, rng[1][3] = {{0, size, 1}}, zero[1][3] = {{0, 0, 0}};
        MPI_Group out = MPI_GROUP_NULL;
        EXPECT_ERR(MPI_Group_incl(world, 1, &bad, &out), MPI_ERR_RANK, "MPI_Group_incl", "ranks[0]");
        EXPECT_ERR(MPI_Group_incl(world, 2, twice, &out), MPI_ERR_RANK, "MPI_Group_incl", "ranks[1]");
        EXPECT_ERR(MPI_Group_excl(world, 1, &bad, &out), MPI_ERR_RANK, "MPI_Group_excl", "ranks");
        EXPECT_ERR(MPI_Group_incl(world, -1, twice, &out), MPI_ERR_ARG, "MPI_Group_incl", "n");
        EXPECT_ERR(MPI_Group_range_incl(world, 1, rng, &out), MPI_ERR_RANK, "MPI_Group_range_incl", "last");
        EXPECT_ERR(MPI_Group_range_incl(world, 1, zero, &out), MPI_ERR_ARG, "MPI_Group_range_incl", "stride");
        CHECK(out == MPI_GROUP_NULL, "output written on failure");
        EXPECT_ERR(MPI_Group_size(MPI_GROUP_NULL, &n), MPI_ERR_GROUP, "MPI_Group_size", "group");
        EXPECT_ERR(MPI_Group_size((MPI_Group)WTEST_GARBAGE, &n), MPI_ERR_GROUP, "MPI_Group_size", "group");
        /* A communicator handle is not a group. */
        EXPECT_ERR(MPI_Group_size((MPI_Group)MPI_COMM_WORLD, &n), MPI_ERR_GROUP, "MPI_Group_size", NULL);
        EXPECT_ERR(MPI_Group_translate_ranks(world, 1, &bad, self, &r), MPI_ERR_RANK,
                   "MPI_Group_translate_ranks", "ranks1[0]");
        EXPECT_OK(MPI_Group_incl(world, 1, &rank, &out));
        x = out;
        EXPECT_OK(MPI_Group_free(&out));
        EXPECT_ERR(MPI_Group_size(x, &n), MPI_ERR_GROUP, "MPI_Group_size", "freed");
        EXPECT_ERR(MPI_Group_free(&x), MPI_ERR_GROUP, "MPI_Group_free", "group");
        EXPECT_ERR(MPI_Group_compare(world, MPI_GROUP_NULL, &res), MPI_ERR_GROUP, "MPI_Group_compare", "group2");
        EXPECT_ERR(MPI_Comm_group(MPI_COMM_NULL, &out), MPI_ERR_COMM, "MPI_Comm_group", "comm");
    }

    EXPECT_OK(MPI_Group_free(&g));
    EXPECT_OK(MPI_Group_free(&h));
    EXPECT_OK(MPI_Group_free(&world));
    EXPECT_OK(MPI_Group_free(&self));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
