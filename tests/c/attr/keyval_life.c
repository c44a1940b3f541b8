/* A freed keyval stays usable for the attributes stored under it (delete, get, their
 * callbacks on dup and free), freeing it again then is harmless, and it is gone once no
 * attribute holds it. A failing copy callback makes MPI_Comm_dup return MPI_COMM_NULL. */
#include "wtest.h"

static int deletes = 0, copies = 0;

static int copy_fn(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    (void)c; (void)k; (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm c, int k, void *v, void *extra)
{
    (void)c; (void)k; (void)extra;
    CHECK(v == (void *)&deletes, "delete callback sees the attribute value");
    deletes++;
    return MPI_SUCCESS;
}

static int bad_copy(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    (void)c; (void)k; (void)extra; (void)in; (void)out;
    *flag = 1;
    return MPI_ERR_OTHER;
}

int main(int argc, char **argv)
{
    int key, saved, flag = 0;
    void *v = NULL;
    MPI_Comm c, d;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_dup(MPI_COMM_WORLD, &c);

    EXPECT_OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &key, NULL));
    saved = key;
    EXPECT_OK(MPI_Comm_set_attr(c, key, &deletes));
    EXPECT_OK(MPI_Comm_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "free_keyval resets the handle");
    /* still attached: get and dup work, callbacks run */
    EXPECT_OK(MPI_Comm_get_attr(c, saved, &v, &flag));
    CHECK(flag && v == (void *)&deletes, "value of a freed keyval's attribute (%d)", flag);
    EXPECT_OK(MPI_Comm_dup(c, &d));
    CHECK_INT(copies, 1);
    EXPECT_OK(MPI_Comm_get_attr(d, saved, &v, &flag));
    CHECK(flag && v == (void *)&deletes, "copied attribute (%d)", flag);
    /* new attributes cannot be set under a freed keyval */
    EXPECT_CLASS(MPI_Comm_set_attr(MPI_COMM_SELF, saved, NULL), MPI_ERR_KEYVAL);
    /* freeing it again while attributes hold it is harmless */
    key = saved;
    EXPECT_OK(MPI_Comm_free_keyval(&key));
    EXPECT_OK(MPI_Comm_delete_attr(c, saved));
    CHECK_INT(deletes, 1);
    EXPECT_OK(MPI_Comm_free(&d));
    CHECK_INT(deletes, 2);
    /* no attribute holds it now: it is gone */
    key = saved;
    EXPECT_CLASS(MPI_Comm_free_keyval(&key), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Comm_get_attr(c, saved, &v, &flag), MPI_ERR_KEYVAL);

    /* a failing copy callback: the dup fails and newcomm is MPI_COMM_NULL */
    EXPECT_OK(MPI_Comm_create_keyval(bad_copy, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    EXPECT_OK(MPI_Comm_set_attr(c, key, NULL));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    d = MPI_COMM_WORLD;
    int rc = MPI_Comm_dup(c, &d);
    CHECK(rc != MPI_SUCCESS, "dup with a failing copy callback fails");
    CHECK(d == MPI_COMM_NULL, "and returns MPI_COMM_NULL");
    EXPECT_OK(MPI_Comm_delete_attr(c, key));
    EXPECT_OK(MPI_Comm_free_keyval(&key));

    MPI_Comm_free(&c);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
