/* The caching pattern libraries use: a library keeps a private duplicate of the user's
 * communicator in an attribute; the delete callback frees it (on MPI_Comm_free of the user's
 * communicator, and on MPI_COMM_SELF/WORLD at MPI_Finalize, SELF first). */
#include "wtest.h"

static int lib_key = MPI_KEYVAL_INVALID;
static int freed_inner = 0;
static int finalize_order[4], nfin = 0;

static int lib_delete(MPI_Comm comm, int kv, void *val, void *extra)
{
    (void)comm; (void)kv; (void)extra;
    MPI_Comm inner = (MPI_Comm)val;
    int rc = MPI_Comm_free(&inner); /* calls back into MPI from the callback */
    if (rc == MPI_SUCCESS)
        freed_inner++;
    return rc;
}

static int fin_delete(MPI_Comm comm, int kv, void *val, void *extra)
{
    (void)kv; (void)extra; (void)val;
    int flag = 0;
    MPI_Finalized(&flag);
    if (!flag && nfin < 4)
        finalize_order[nfin++] = comm == MPI_COMM_SELF ? 1 : comm == MPI_COMM_WORLD ? 2 : 3;
    return MPI_SUCCESS;
}

/* The library's entry point: find or make its private communicator. */
static MPI_Comm lib_comm(MPI_Comm user)
{
    void *v;
    int flag;
    if (lib_key == MPI_KEYVAL_INVALID)
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, lib_delete, &lib_key, NULL);
    MPI_Comm_get_attr(user, lib_key, &v, &flag);
    if (flag)
        return (MPI_Comm)v;
    MPI_Comm inner;
    MPI_Comm_dup(user, &inner);
    MPI_Comm_set_attr(user, lib_key, inner);
    return inner;
}

int main(int argc, char **argv)
{
    int rank, size, kf, res;
    MPI_Comm user, a, b;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &user));
    a = lib_comm(user);
    b = lib_comm(user);
    CHECK(a == b, "the cached communicator is found again");
    EXPECT_OK(MPI_Comm_compare(a, user, &res));
    CHECK_INT(res, MPI_CONGRUENT);
    {
        int sum = 0;
        EXPECT_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, a));
        CHECK_INT(sum, size * (size - 1) / 2);
    }
    /* duplicating the user's communicator does not share the library's (NULL_COPY) */
    {
        MPI_Comm u2;
        void *v;
        int flag = -1;
        EXPECT_OK(MPI_Comm_dup(user, &u2));
        EXPECT_OK(MPI_Comm_get_attr(u2, lib_key, &v, &flag));
        CHECK_INT(flag, 0);
        EXPECT_OK(MPI_Comm_free(&u2));
    }
    EXPECT_OK(MPI_Comm_free(&user));
    CHECK_INT(freed_inner, 1);

    /* the same on MPI_COMM_SELF and MPI_COMM_WORLD, cleaned up by MPI_Finalize */
    lib_comm(MPI_COMM_SELF);
    EXPECT_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, fin_delete, &kf, NULL));
    EXPECT_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kf, NULL));
    EXPECT_OK(MPI_Comm_set_attr(MPI_COMM_SELF, kf, NULL));
    EXPECT_OK(MPI_Finalize());
    CHECK_INT(freed_inner, 2);
    CHECK_INT(nfin, 2);
    CHECK_INT(finalize_order[0], 1);
    CHECK_INT(finalize_order[1], 2);
    return wtest_finish();
}
