/* Errors returned by datatype attribute callbacks (the MPICH test attr/attrerrtype): a failing
 * delete callback fails MPI_Type_set_attr (replacing) and MPI_Type_delete_attr and keeps the
 * attribute; a failing copy callback fails MPI_Type_dup, which leaves MPI_DATATYPE_NULL and
 * no new type; MPI_Type_free runs the delete callback. The callback's code is returned. */
#include "wtest.h"

static int delete_ok = 0, deletes = 0, copies = 0;

static int copy_fail(MPI_Datatype t, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)t; (void)kv; (void)extra; (void)in; (void)out;
    copies++;
    *flag = 1;
    return MPI_ERR_OTHER;
}

static int delete_maybe(MPI_Datatype t, int kv, void *val, void *extra)
{
    (void)t; (void)kv; (void)val; (void)extra;
    deletes++;
    return delete_ok ? MPI_SUCCESS : MPI_ERR_TYPE;
}

int main(int argc, char **argv)
{
    MPI_Datatype dup, d2 = (MPI_Datatype)WTEST_GARBAGE;
    int key, flag = -1;
    void *v = NULL;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    EXPECT_OK(MPI_Type_dup(MPI_DOUBLE, &dup));
    EXPECT_OK(MPI_Type_create_keyval(copy_fail, delete_maybe, &key, NULL));
    EXPECT_OK(MPI_Type_set_attr(dup, key, (void *)1));
    CHECK_INT(deletes, 0);

    EXPECT_ERR(MPI_Type_set_attr(dup, key, (void *)2), MPI_ERR_TYPE, "MPI_Type_set_attr", "delete callback");
    CHECK_INT(deletes, 1);
    EXPECT_ERR(MPI_Type_delete_attr(dup, key), MPI_ERR_TYPE, "MPI_Type_delete_attr", "delete callback");
    CHECK_INT(deletes, 2);
    EXPECT_OK(MPI_Type_get_attr(dup, key, &v, &flag));
    CHECK(flag == 1 && v == (void *)1, "attribute now %d %p", flag, v);

    EXPECT_ERR(MPI_Type_dup(dup, &d2), MPI_ERR_OTHER, "MPI_Type_dup", "copy callback");
    CHECK_INT(copies, 1);
    CHECK(d2 == MPI_DATATYPE_NULL, "MPI_Type_dup left %p", (void *)d2);

    delete_ok = 1;
    EXPECT_OK(MPI_Type_free(&dup));
    CHECK_INT(deletes, 3);
    EXPECT_OK(MPI_Type_free_keyval(&key));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
