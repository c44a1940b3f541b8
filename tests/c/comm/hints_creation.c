/* mpi_assert_* hints given when a communicator is created (MPI_Comm_split_type,
 * MPI_Comm_dup_with_info, MPI_Comm_idup_with_info) are what MPI_Comm_get_info returns for it;
 * MPI_Comm_dup and MPI_Comm_idup do not pass them on (MPI 4). */
#include "wtest.h"

static int has_hint(MPI_Comm c, const char *key)
{
    MPI_Info used;
    char v[MPI_MAX_INFO_VAL];
    int n = sizeof v, flag = -1;
    EXPECT_OK(MPI_Comm_get_info(c, &used));
    EXPECT_OK(MPI_Info_get_string(used, key, &n, v, &flag));
    if (flag)
        CHECK_STR(v, "true");
    EXPECT_OK(MPI_Info_free(&used));
    return flag;
}

int main(int argc, char **argv)
{
    MPI_Comm split, dup, with, idup;
    MPI_Info info;
    MPI_Request req;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    EXPECT_OK(MPI_Info_create(&info));
    EXPECT_OK(MPI_Info_set(info, "mpi_assert_no_any_source", "true"));

    EXPECT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, info, &split));
    CHECK(has_hint(split, "mpi_assert_no_any_source"), "MPI_Comm_split_type dropped the hint");
    EXPECT_OK(MPI_Comm_dup(split, &dup));
    CHECK(!has_hint(dup, "mpi_assert_no_any_source"), "MPI_Comm_dup copied the assertion");
    EXPECT_OK(MPI_Comm_idup(split, &idup, &req));
    EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(!has_hint(idup, "mpi_assert_no_any_source"), "MPI_Comm_idup copied the assertion");
    EXPECT_OK(MPI_Comm_free(&idup));
    EXPECT_OK(MPI_Comm_dup_with_info(dup, info, &with));
    CHECK(has_hint(with, "mpi_assert_no_any_source"), "MPI_Comm_dup_with_info dropped the hint");
    EXPECT_OK(MPI_Comm_idup_with_info(dup, info, &idup, &req));
    EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(has_hint(idup, "mpi_assert_no_any_source"), "MPI_Comm_idup_with_info dropped the hint");

    EXPECT_OK(MPI_Comm_free(&idup));
    EXPECT_OK(MPI_Comm_free(&with));
    EXPECT_OK(MPI_Comm_free(&dup));
    EXPECT_OK(MPI_Comm_free(&split));
    EXPECT_OK(MPI_Info_free(&info));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
