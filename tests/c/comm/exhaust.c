/* Running out of context ids is an error (MPI_ERR_OTHER, naming the function), on every
 * process of the parent at the same call, never a hang: a process that went on creating
 * while another stopped would wait for it forever. Communicators are created with
 * MPI_Comm_create until it fails, keeping them all, then freed; creation works again after.
 * A: groups {0}, {0,1}, ..., everyone, {} (rank 0 runs out first);
 * B: groups {0}, {1}, ..., {n-1} (the free ids of different processes differ: no id is
 *    common to all while each still has some);
 * C: MPI_Comm_split of MPI_COMM_WORLD, where only rank 0 keeps its communicator (the other
 *    colours' ids are given back), then MPI_Comm_idup of MPI_COMM_SELF on rank 0 (its
 *    request fails). */
#include "wtest.h"

#define MAX 40000

static MPI_Comm kept[MAX];
static int rank, size;

/* Every rank failed at the same call `i`, with MPI_ERR_OTHER naming `func`. */
static void check_failure(int rc, int i, const char *func)
{
    int lo = i, hi = i;
    wtest_expect(rc, MPI_ERR_OTHER, func, "MPI_ERR_OTHER", func, "context id", __FILE__,
                 __LINE__);
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo == hi, "ranks failed at different calls: %d to %d", lo, hi);
    CHECK(i > 4000, "failed early, at call %d", i);
}

static void free_all(int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (kept[i] != MPI_COMM_NULL)
            EXPECT_OK(MPI_Comm_free(&kept[i]));
}

/* Creation works again once the communicators are freed. */
static void works_again(void)
{
    MPI_Comm d;
    int sum = 1;
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    EXPECT_OK(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, d));
    CHECK_INT(sum, size);
    MPI_Comm_free(&d);
}

int main(int argc, char **argv)
{
    int i, rc = MPI_SUCCESS, *ranks;
    MPI_Group world, g;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    ranks = malloc(sizeof(int) * size);
    for (i = 0; i < size; i++)
        ranks[i] = i;

    for (i = 0; i < MAX; i++) {
        MPI_Group_incl(world, (i + 1) % (size + 1), ranks, &g);
        rc = MPI_Comm_create(MPI_COMM_WORLD, g, &kept[i]);
        MPI_Group_free(&g);
        if (rc != MPI_SUCCESS)
            break;
    }
    check_failure(rc, i, "MPI_Comm_create");
    free_all(i);
    works_again();

    for (i = 0; i < MAX; i++) {
        int one = i % size;
        MPI_Group_incl(world, 1, &one, &g);
        rc = MPI_Comm_create(MPI_COMM_WORLD, g, &kept[i]);
        MPI_Group_free(&g);
        if (rc != MPI_SUCCESS)
            break;
    }
    check_failure(rc, i, "MPI_Comm_create");
    free_all(i);
    works_again();

    for (i = 0; i < MAX; i++) {
        rc = MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &kept[i]);
        if (rc != MPI_SUCCESS)
            break;
        if (rank != 0)
            MPI_Comm_free(&kept[i]);
    }
    check_failure(rc, i, "MPI_Comm_split");
    if (rank == 0) {
        MPI_Comm d;
        MPI_Request req;
        EXPECT_OK(MPI_Comm_idup(MPI_COMM_SELF, &d, &req));
        EXPECT_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_OTHER);
        /* The failed communicator reports its agreement's error, and can be freed. */
        EXPECT_ERR(MPI_Barrier(d), MPI_ERR_OTHER, "MPI_Comm_idup", "context id");
        EXPECT_OK(MPI_Comm_free(&d));
        free_all(i);
    }
    works_again();

    free(ranks);
    MPI_Group_free(&world);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
