/* Attributes: user keyvals on communicators, copy/delete callbacks in the standard's order on
 * dup/free/set/delete, MPI_COMM_DUP_FN and the null functions, a copy error propagating,
 * MPI-1 keyval calls, datatype keyvals, bad keyvals. */
#include "wtest.h"

#define MAXLOG 64
static char log_[MAXLOG][32];
static int nlog = 0;

static void note(const char *what, int tag)
{
    if (nlog < MAXLOG)
        snprintf(log_[nlog++], 32, "%s%d", what, tag);
}

static int copy_cb(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c;
    (void)kv;
    note("copy", *(int *)extra);
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int nocopy_cb(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c; (void)kv; (void)in; (void)out;
    note("skip", *(int *)extra);
    *flag = 0;
    return MPI_SUCCESS;
}

static int failcopy_cb(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c; (void)kv; (void)extra; (void)in; (void)out; (void)flag;
    return MPI_ERR_OTHER;
}

static int delete_cb(MPI_Comm c, int kv, void *val, void *extra)
{
    (void)c; (void)kv; (void)val;
    note("del", *(int *)extra);
    return MPI_SUCCESS;
}

static int type_delete_cb(MPI_Datatype t, int kv, void *val, void *extra)
{
    (void)t; (void)kv; (void)val;
    note("tdel", *(int *)extra);
    return MPI_SUCCESS;
}

static const char *joined(void)
{
    static char buf[MAXLOG * 32];
    buf[0] = 0;
    for (int i = 0; i < nlog; i++) {
        strcat(buf, log_[i]);
        strcat(buf, i + 1 < nlog ? "," : "");
    }
    nlog = 0;
    return buf;
}

int main(int argc, char **argv)
{
    static int one = 1, two = 2, three = 3, four = 4;
    int k1, k2, k3, k4, kt, flag, rc;
    void *v;
    MPI_Comm d, d2;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    EXPECT_OK(MPI_Comm_create_keyval(copy_cb, delete_cb, &k1, &one));
    EXPECT_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, delete_cb, &k2, &two));
    EXPECT_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k3, &three));
    EXPECT_OK(MPI_Keyval_create(nocopy_cb, delete_cb, &k4, &four)); /* MPI-1 form */
    CHECK(k1 != k2 && k2 != k3 && k3 != k4 && k1 != MPI_KEYVAL_INVALID, "distinct keyvals");

    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    EXPECT_OK(MPI_Comm_get_attr(d, k1, &v, &flag));
    CHECK_INT(flag, 0);
    EXPECT_OK(MPI_Comm_set_attr(d, k2, (void *)200));
    EXPECT_OK(MPI_Comm_set_attr(d, k1, (void *)100));
    EXPECT_OK(MPI_Comm_set_attr(d, k3, (void *)300));
    EXPECT_OK(MPI_Attr_put(d, k4, (void *)400));
    EXPECT_OK(MPI_Comm_get_attr(d, k1, &v, &flag));
    CHECK_INT(flag, 1);
    CHECK(v == (void *)100, "value %p", v);
    EXPECT_OK(MPI_Attr_get(d, k4, &v, &flag));
    CHECK(flag == 1 && v == (void *)400, "MPI_Attr_get %d %p", flag, v);

    /* replacing a value runs the delete callback on the old one */
    EXPECT_OK(MPI_Comm_set_attr(d, k1, (void *)101));
    CHECK_STR(joined(), "del1");

    /* dup: copy callbacks in the order attributes were first set (k2, k1, k3, k4) */
    EXPECT_OK(MPI_Comm_dup(d, &d2));
    CHECK_STR(joined(), "copy1,skip4");
    EXPECT_OK(MPI_Comm_get_attr(d2, k1, &v, &flag));
    CHECK(flag == 1 && v == (void *)102, "copied value %p (the callback adds 1)", v);
    EXPECT_OK(MPI_Comm_get_attr(d2, k2, &v, &flag));
    CHECK(flag == 1 && v == (void *)200, "MPI_COMM_DUP_FN copies the value: %p", v);
    EXPECT_OK(MPI_Comm_get_attr(d2, k3, &v, &flag));
    CHECK_INT(flag, 0);
    EXPECT_OK(MPI_Comm_get_attr(d2, k4, &v, &flag));
    CHECK_INT(flag, 0);

    /* delete_attr runs the callback; getting it afterwards finds nothing */
    EXPECT_OK(MPI_Comm_delete_attr(d2, k2));
    CHECK_STR(joined(), "del2");
    EXPECT_OK(MPI_Comm_get_attr(d2, k2, &v, &flag));
    CHECK_INT(flag, 0);
    EXPECT_ERR(MPI_Comm_delete_attr(d2, k2), MPI_ERR_KEYVAL, "MPI_Comm_delete_attr", "keyval");

    /* free: delete callbacks in the reverse order of setting */
    EXPECT_OK(MPI_Comm_free(&d));
    CHECK_STR(joined(), "del4,del1,del2");
    EXPECT_OK(MPI_Comm_free(&d2));
    CHECK_STR(joined(), "del1");

    /* a freed keyval still serves attributes set before; new uses are errors */
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    EXPECT_OK(MPI_Comm_set_attr(d, k1, (void *)7));
    {
        int kcopy = k1;
        EXPECT_OK(MPI_Comm_free_keyval(&k1));
        CHECK_INT(k1, MPI_KEYVAL_INVALID);
        EXPECT_ERR(MPI_Comm_set_attr(d, kcopy, (void *)8), MPI_ERR_KEYVAL, "MPI_Comm_set_attr", "freed");
        EXPECT_OK(MPI_Comm_free(&d));
        CHECK_STR(joined(), "del1");
    }

    /* an error from a copy callback fails MPI_Comm_dup, returning that class */
    {
        int kf;
        EXPECT_OK(MPI_Comm_create_keyval(failcopy_cb, MPI_COMM_NULL_DELETE_FN, &kf, NULL));
        EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        EXPECT_OK(MPI_Comm_set_attr(d, kf, (void *)1));
        d2 = MPI_COMM_NULL;
        rc = MPI_Comm_dup(d, &d2);
        EXPECT_CLASS(rc, MPI_ERR_OTHER);
        CHECK(d2 == MPI_COMM_NULL, "no communicator on a failed dup");
        EXPECT_OK(MPI_Comm_free(&d));
        EXPECT_OK(MPI_Comm_free_keyval(&kf));
    }

    /* bad keyvals */
    EXPECT_ERR(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, (void *)1), MPI_ERR_KEYVAL,
               "MPI_Comm_set_attr", "predefined");
    EXPECT_ERR(MPI_Comm_get_attr(MPI_COMM_WORLD, 12345, &v, &flag), MPI_ERR_KEYVAL,
               "MPI_Comm_get_attr", "comm_keyval");
    EXPECT_ERR(MPI_Comm_free_keyval(&k1), MPI_ERR_KEYVAL, "MPI_Comm_free_keyval", "keyval");
    EXPECT_ERR(MPI_Comm_set_attr(MPI_COMM_NULL, k2, (void *)1), MPI_ERR_COMM, "MPI_Comm_set_attr", "comm");

    /* datatype keyvals: not usable on communicators, and the reverse */
    EXPECT_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete_cb, &kt, &one));
    EXPECT_ERR(MPI_Comm_set_attr(MPI_COMM_WORLD, kt, (void *)1), MPI_ERR_KEYVAL, "MPI_Comm_set_attr", "datatype keyval");
    EXPECT_ERR(MPI_Type_set_attr(MPI_INT, k2, (void *)1), MPI_ERR_KEYVAL, "MPI_Type_set_attr", "communicator keyval");
    EXPECT_OK(MPI_Type_set_attr(MPI_INT, kt, (void *)55));
    EXPECT_OK(MPI_Type_get_attr(MPI_INT, kt, &v, &flag));
    CHECK(flag == 1 && v == (void *)55, "type attribute %d %p", flag, v);
    EXPECT_OK(MPI_Type_get_attr(MPI_DOUBLE, kt, &v, &flag));
    CHECK_INT(flag, 0);
    EXPECT_OK(MPI_Type_delete_attr(MPI_INT, kt));
    CHECK_STR(joined(), "tdel1");
    EXPECT_ERR(MPI_Type_set_attr(MPI_DATATYPE_NULL, kt, (void *)1), MPI_ERR_TYPE, "MPI_Type_set_attr", "datatype");
    EXPECT_OK(MPI_Type_free_keyval(&kt));

    /* window keyvals exist independently of windows */
    {
        int kw;
        EXPECT_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &kw, NULL));
        EXPECT_ERR(MPI_Comm_get_attr(MPI_COMM_WORLD, kw, &v, &flag), MPI_ERR_KEYVAL, "MPI_Comm_get_attr", "window keyval");
        EXPECT_OK(MPI_Win_free_keyval(&kw));
    }

    EXPECT_OK(MPI_Comm_free_keyval(&k2));
    EXPECT_OK(MPI_Comm_free_keyval(&k3));
    EXPECT_OK(MPI_Keyval_free(&k4));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
