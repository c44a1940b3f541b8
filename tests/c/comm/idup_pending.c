/* The communicator of an MPI_Comm_idup before its request completes. What the object keeps
 * can be read and set at once (errhandler, name, attributes, info, size, rank, groups,
 * compare, topology), as MPICH allows and mpi4py relies on (it sets the errhandler right
 * after the call); what needs the context id (communication, creating from it, freeing it)
 * is refused with MPI_ERR_COMM and a message saying it is not yet available. After the
 * request completes, what was set is there and the communicator works.
 *
 * The idup is held pending on rank 0: the other ranks call MPI_Comm_idup only after rank 0
 * has made its checks and told them so. */
#include "wtest.h"

static int deleted = 0;

static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    deleted += *(int *)val;
    return MPI_SUCCESS;
}

static void refused(int rc, const char *func)
{
    wtest_expect(rc, MPI_ERR_COMM, func, "MPI_ERR_COMM", func, "not yet available",
                 __FILE__, __LINE__);
}

int main(int argc, char **argv)
{
    int rank, size, n, flag, res, keyval, val = 7, *got, go = 1;
    MPI_Comm nc, d;
    MPI_Request req, r2;
    MPI_Errhandler eh;
    MPI_Group g, wg;
    MPI_Info info;
    char name[MPI_MAX_OBJECT_NAME];

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    EXPECT_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &keyval, NULL));

    if (rank != 0)
        EXPECT_OK(MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    EXPECT_OK(MPI_Comm_idup(MPI_COMM_WORLD, &nc, &req));
    if (rank == 0) {
        /* Pending: nobody else has called MPI_Comm_idup yet. */
        EXPECT_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "the idup cannot complete before the other ranks call it");
        EXPECT_OK(MPI_Comm_set_errhandler(nc, MPI_ERRORS_RETURN));
        EXPECT_OK(MPI_Comm_get_errhandler(nc, &eh));
        CHECK(eh == MPI_ERRORS_RETURN, "errhandler set on the pending communicator");
        EXPECT_OK(MPI_Comm_set_name(nc, "pending"));
        EXPECT_OK(MPI_Comm_get_name(nc, name, &n));
        CHECK_STR(name, "pending");
        EXPECT_OK(MPI_Comm_set_attr(nc, keyval, &val));
        EXPECT_OK(MPI_Comm_get_attr(nc, keyval, &got, &flag));
        CHECK(flag && got == &val, "attribute set on the pending communicator");
        EXPECT_OK(MPI_Comm_get_attr(nc, MPI_TAG_UB, &got, &flag));
        CHECK(flag && *got >= 32767, "MPI_TAG_UB");
        EXPECT_OK(MPI_Comm_size(nc, &n));
        CHECK_INT(n, size);
        EXPECT_OK(MPI_Comm_rank(nc, &n));
        CHECK_INT(n, 0);
        EXPECT_OK(MPI_Comm_test_inter(nc, &flag));
        CHECK_INT(flag, 0);
        EXPECT_OK(MPI_Comm_group(nc, &g));
        EXPECT_OK(MPI_Group_compare(g, wg, &res));
        CHECK_INT(res, MPI_IDENT);
        MPI_Group_free(&g);
        EXPECT_OK(MPI_Comm_compare(nc, MPI_COMM_WORLD, &res));
        CHECK_INT(res, MPI_CONGRUENT);
        EXPECT_OK(MPI_Topo_test(nc, &n));
        CHECK_INT(n, MPI_UNDEFINED);
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
        EXPECT_OK(MPI_Comm_set_info(nc, info));
        MPI_Info_free(&info);
        EXPECT_OK(MPI_Comm_get_info(nc, &info));
        EXPECT_OK(MPI_Info_get_nkeys(info, &n));
        CHECK_INT(n, 1);
        MPI_Info_free(&info);
        /* What needs the context id is refused, on the communicator's errhandler. */
        refused(MPI_Send(&go, 1, MPI_INT, 0, 5, nc), "MPI_Send");
        refused(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, nc, &flag, MPI_STATUS_IGNORE),
                "MPI_Iprobe");
        refused(MPI_Barrier(nc), "MPI_Barrier");
        refused(MPI_Ibarrier(nc, &r2), "MPI_Ibarrier");
        refused(MPI_Comm_dup(nc, &d), "MPI_Comm_dup");
        d = nc;
        refused(MPI_Comm_free(&d), "MPI_Comm_free");
        CHECK(d == nc, "a refused free leaves the handle");
        /* Still pending: nothing above waited for the agreement. */
        EXPECT_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "still pending");
        for (n = 1; n < size; n++)
            EXPECT_OK(MPI_Send(&go, 1, MPI_INT, n, 1, MPI_COMM_WORLD));
    }
    EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(req == MPI_REQUEST_NULL, "request freed");

    /* Set before completion, still there after; the communicator works. */
    if (rank == 0) {
        EXPECT_OK(MPI_Comm_get_name(nc, name, &n));
        CHECK_STR(name, "pending");
        EXPECT_OK(MPI_Comm_get_errhandler(nc, &eh));
        CHECK(eh == MPI_ERRORS_RETURN, "errhandler kept");
        EXPECT_OK(MPI_Comm_get_attr(nc, keyval, &got, &flag));
        CHECK(flag && got == &val, "attribute kept");
    }
    n = rank + 1;
    EXPECT_OK(MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT, MPI_SUM, nc));
    CHECK_INT(n, size * (size + 1) / 2);
    EXPECT_OK(MPI_Comm_free(&nc));
    CHECK(nc == MPI_COMM_NULL, "freed");
    CHECK_INT(deleted, rank == 0 ? 7 : 0);
    MPI_Comm_free_keyval(&keyval);
    MPI_Group_free(&wg);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
