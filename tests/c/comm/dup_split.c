/* MPI_Comm_dup, split, create, create_group, compare, free: real rank maps and isolation. */
#include "wtest.h"

static int world_rank_of(MPI_Comm comm, int r)
{
    MPI_Group g, w;
    int out = -1;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_translate_ranks(g, 1, &r, w, &out);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    return out;
}

int main(int argc, char **argv)
{
    int rank, size, res, n, r, flag, v, i;
    MPI_Comm dup, dup2, sp, cr, cg;
    MPI_Status st;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* dup: congruent, same ranks, separate traffic */
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    EXPECT_OK(MPI_Comm_compare(dup, MPI_COMM_WORLD, &res));
    CHECK_INT(res, MPI_CONGRUENT);
    EXPECT_OK(MPI_Comm_compare(dup, dup, &res));
    CHECK_INT(res, MPI_IDENT);
    EXPECT_OK(MPI_Comm_rank(dup, &r));
    CHECK_INT(r, rank);
    EXPECT_OK(MPI_Comm_dup(dup, &dup2));
    EXPECT_OK(MPI_Comm_compare(dup, dup2, &res));
    CHECK_INT(res, MPI_CONGRUENT);
    {
        char name[MPI_MAX_OBJECT_NAME];
        int len = -1;
        EXPECT_OK(MPI_Comm_get_name(dup, name, &len));
        CHECK_INT(len, 0);
    }
    EXPECT_OK(MPI_Comm_test_inter(dup, &flag));
    CHECK_INT(flag, 0);
    if (size > 1) {
        int to = (rank + 1) % size, from = (rank + size - 1) % size;
        v = 100 + rank;
        EXPECT_OK(MPI_Send(&v, 1, MPI_INT, to, 7, dup));
        /* nothing arrives on the world or on the other duplicate */
        MPI_Barrier(dup2);
        EXPECT_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK_INT(flag, 0);
        EXPECT_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup2, &flag, &st));
        CHECK_INT(flag, 0);
        EXPECT_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 7, dup, &st));
        CHECK_INT(v, 100 + from);
        CHECK_INT(st.MPI_SOURCE, from);
    }

    /* split: colour rank%3 (the last rank undefined when size>2), key -rank (reversed) */
    {
        int color = rank % 3, expect_size = 0, expect_rank = 0;
        int undefined = size > 2 && rank == size - 1;
        for (i = 0; i < size; i++) {
            if (i % 3 != color || (size > 2 && i == size - 1))
                continue;
            expect_size++;
            if (i > rank)
                expect_rank++;
        }
        EXPECT_OK(MPI_Comm_split(MPI_COMM_WORLD, undefined ? MPI_UNDEFINED : color, -rank, &sp));
        if (undefined) {
            CHECK(sp == MPI_COMM_NULL, "MPI_UNDEFINED gives MPI_COMM_NULL");
        } else {
            EXPECT_OK(MPI_Comm_size(sp, &n));
            CHECK_INT(n, expect_size);
            EXPECT_OK(MPI_Comm_rank(sp, &r));
            CHECK_INT(r, expect_rank);
            /* new rank 0 is the highest world rank of the colour */
            for (i = size - 1; i >= 0; i--)
                if (i % 3 == color && !(size > 2 && i == size - 1))
                    break;
            CHECK_INT(world_rank_of(sp, 0), i);
            EXPECT_OK(MPI_Comm_compare(sp, MPI_COMM_WORLD, &res));
            CHECK_INT(res, n == size ? (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR) : MPI_UNEQUAL);
            /* a ring inside the colour */
            if (n > 1) {
                int got;
                EXPECT_OK(MPI_Sendrecv(&rank, 1, MPI_INT, (r + 1) % n, 1, &got, 1, MPI_INT,
                                       (r + n - 1) % n, 1, sp, &st));
                CHECK_INT(got, world_rank_of(sp, (r + n - 1) % n));
            }
            EXPECT_OK(MPI_Comm_free(&sp));
            CHECK(sp == MPI_COMM_NULL, "freed handle is MPI_COMM_NULL");
        }
    }
    /* equal keys keep the parent's order */
    EXPECT_OK(MPI_Comm_split(dup, 0, 0, &sp));
    EXPECT_OK(MPI_Comm_compare(sp, MPI_COMM_WORLD, &res));
    CHECK_INT(res, MPI_CONGRUENT);
    EXPECT_OK(MPI_Comm_free(&sp));

    /* create: the odd ranks, in reverse order */
    {
        MPI_Group w, g;
        int *ranks = malloc(sizeof(int) * size), k = 0;
        for (i = size - 1; i >= 0; i--)
            if (i % 2 == 1)
                ranks[k++] = i;
        MPI_Comm_group(MPI_COMM_WORLD, &w);
        MPI_Group_incl(w, k, ranks, &g);
        EXPECT_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &cr));
        if (rank % 2 == 1) {
            EXPECT_OK(MPI_Comm_size(cr, &n));
            CHECK_INT(n, k);
            EXPECT_OK(MPI_Comm_rank(cr, &r));
            CHECK_INT(r, (((size - 1) % 2 == 1 ? size - 1 : size - 2) - rank) / 2);
            CHECK_INT(world_rank_of(cr, r), rank);
            /* create_group among the same members only (the evens do not take part) */
            EXPECT_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 42, &cg));
            EXPECT_OK(MPI_Comm_compare(cg, cr, &res));
            CHECK_INT(res, MPI_CONGRUENT);
            EXPECT_OK(MPI_Comm_free(&cg));
            EXPECT_OK(MPI_Comm_free(&cr));
        } else {
            CHECK(cr == MPI_COMM_NULL, "non-members get MPI_COMM_NULL");
            if (k > 0)
                EXPECT_ERR(MPI_Comm_create_group(MPI_COMM_WORLD, g, 42, &cg), MPI_ERR_GROUP,
                       "MPI_Comm_create_group", "group");
        }
        /* the empty group */
        EXPECT_OK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &cr));
        CHECK(cr == MPI_COMM_NULL, "empty group gives MPI_COMM_NULL");
        MPI_Group_free(&g);
        MPI_Group_free(&w);
        free(ranks);
    }

    EXPECT_OK(MPI_Comm_free(&dup2));
    EXPECT_OK(MPI_Comm_free(&dup));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
