/* Bad input to communicator functions (right class, message naming function and argument),
 * info hints (set/get/dup/dup_with_info, unknown keys ignored), split_type, idup. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int rank, size, n, flag, res;
    MPI_Comm c = MPI_COMM_NULL, d;
    MPI_Group wg;
    MPI_Info info, used;
    char v[MPI_MAX_INFO_VAL];

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);

    EXPECT_ERR(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &c), MPI_ERR_ARG, "MPI_Comm_split", "color=-5");
    CHECK(c == MPI_COMM_NULL, "no output on failure");
    EXPECT_ERR(MPI_Comm_dup(MPI_COMM_NULL, &c), MPI_ERR_COMM, "MPI_Comm_dup", "comm");
    EXPECT_ERR(MPI_Comm_dup((MPI_Comm)WTEST_GARBAGE, &c), MPI_ERR_COMM, "MPI_Comm_dup", "comm");
    EXPECT_ERR(MPI_Comm_dup((MPI_Comm)wg, &c), MPI_ERR_COMM, "MPI_Comm_dup", "comm");
    EXPECT_ERR(MPI_Comm_dup(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "MPI_Comm_dup", "newcomm");
    c = MPI_COMM_WORLD;
    EXPECT_ERR(MPI_Comm_free(&c), MPI_ERR_COMM, "MPI_Comm_free", "MPI_COMM_WORLD");
    c = MPI_COMM_NULL;
    EXPECT_ERR(MPI_Comm_free(&c), MPI_ERR_COMM, "MPI_Comm_free", "comm");
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    d = c;
    EXPECT_OK(MPI_Comm_free(&c));
    EXPECT_ERR(MPI_Comm_size(d, &n), MPI_ERR_COMM, "MPI_Comm_size", "freed");
    EXPECT_ERR(MPI_Comm_free(&d), MPI_ERR_COMM, "MPI_Comm_free", "comm");
    EXPECT_ERR(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c), MPI_ERR_GROUP, "MPI_Comm_create", "group");
    EXPECT_ERR(MPI_Comm_create_group(MPI_COMM_WORLD, wg, -1, &c), MPI_ERR_TAG, "MPI_Comm_create_group", "tag");
    EXPECT_ERR(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &c), MPI_ERR_ARG,
               "MPI_Comm_split_type", "split_type");
    EXPECT_ERR(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_NULL, &res), MPI_ERR_COMM, "MPI_Comm_compare", "comm2");
    /* a freed group in MPI_Comm_create */
    {
        MPI_Group g2;
        MPI_Group_incl(wg, 1, &rank, &g2);
        MPI_Group tmp = g2;
        MPI_Group_free(&tmp);
        EXPECT_ERR(MPI_Comm_create(MPI_COMM_WORLD, g2, &c), MPI_ERR_GROUP, "MPI_Comm_create", "freed");
    }

    /* hints: set, dup does not copy the mpi_assert_* ones (MPI 4), dup_with_info replaces
     * them, unknown keys ignored */
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Info_set(info, "weft_unknown_key", "kept");
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    EXPECT_OK(MPI_Comm_set_info(c, info));
    EXPECT_OK(MPI_Comm_dup(c, &d));
    EXPECT_OK(MPI_Comm_get_info(d, &used));
    n = sizeof v;
    EXPECT_OK(MPI_Info_get_string(used, "mpi_assert_no_any_tag", &n, v, &flag));
    CHECK(!flag, "an assertion is not copied by MPI_Comm_dup: %d %s", flag, v);
    n = sizeof v;
    EXPECT_OK(MPI_Info_get_string(used, "weft_unknown_key", &n, v, &flag));
    CHECK(!flag, "unknown key ignored: %d", flag);
    MPI_Info_free(&used);
    MPI_Comm_free(&d);
    MPI_Info_free(&info);
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_exact_length", "true");
    EXPECT_OK(MPI_Comm_dup_with_info(c, info, &d));
    EXPECT_OK(MPI_Comm_get_info(d, &used));
    EXPECT_OK(MPI_Info_get_nkeys(used, &n));
    CHECK_INT(n, 1);
    MPI_Info_free(&used);
    MPI_Comm_free(&d);
    /* idup */
    {
        MPI_Request req;
        EXPECT_OK(MPI_Comm_idup_with_info(c, info, &d, &req));
        EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        EXPECT_OK(MPI_Comm_compare(c, d, &res));
        CHECK_INT(res, MPI_CONGRUENT);
        MPI_Comm_free(&d);
        EXPECT_OK(MPI_Comm_idup(c, &d, &req));
        EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        EXPECT_OK(MPI_Comm_rank(d, &n));
        CHECK_INT(n, rank);
        MPI_Comm_free(&d);
    }
    MPI_Info_free(&info);
    MPI_Comm_free(&c);

    /* split_type: one node, so SHARED spans the world in the same order */
    EXPECT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
    EXPECT_OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &res));
    CHECK_INT(res, MPI_CONGRUENT);
    MPI_Comm_free(&c);
    EXPECT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED");
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
    EXPECT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    EXPECT_OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &res));
    CHECK_INT(res, MPI_CONGRUENT);
    MPI_Comm_free(&c);
    MPI_Info_set(info, "mpi_hw_resource_type", "no_such_level");
    EXPECT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL, "unknown resource type gives MPI_COMM_NULL");
    MPI_Info_free(&info);
    EXPECT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &c));
    if (c != MPI_COMM_NULL) {
        EXPECT_OK(MPI_Comm_size(c, &n));
        CHECK(n < size, "unguided gives a strict subset (%d of %d)", n, size);
        MPI_Comm_free(&c);
    }
    MPI_Group_free(&wg);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
