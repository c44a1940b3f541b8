/* Window attributes: keyvals with delete callbacks (called with the window, the keyval, the
 * value and the extra state; on replacement, on delete, and by MPI_Win_free in the reverse
 * order of setting), the null and dup functions, a failing delete callback stopping
 * MPI_Win_free, keyvals of the wrong kind, the predefined keyvals, and keyvals freed while
 * attributes hold them (freeing one inside its own delete callback included). */
#include "wtest.h"

#define MAXLOG 64
static char log_[MAXLOG][40];
static int nlog = 0;
static MPI_Win expect_win = MPI_WIN_NULL;
static int fail_delete = 0;

static void note(const char *what, long v)
{
    if (nlog < MAXLOG)
        snprintf(log_[nlog++], sizeof log_[0], "%s%ld", what, v);
}

static const char *joined(void)
{
    static char buf[MAXLOG * 40];
    buf[0] = 0;
    for (int i = 0; i < nlog; i++) {
        strcat(buf, log_[i]);
        strcat(buf, i + 1 < nlog ? "," : "");
    }
    nlog = 0;
    return buf;
}

static int copy_fn(MPI_Win w, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)w; (void)kv; (void)extra; (void)in; (void)out;
    note("copy", 0);
    *flag = 0;
    return MPI_SUCCESS;
}

/* extra points at the keyval's tag; the value is a small integer. */
static int delete_fn(MPI_Win w, int kv, void *val, void *extra)
{
    (void)kv;
    if (w != expect_win)
        FAIL("delete callback got window %p, expected %p", (void *)w, (void *)expect_win);
    note(*(int *)extra == 1 ? "a" : "b", (long)(intptr_t)val);
    return fail_delete ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static int keyval_arg_seen = -1;
static int keyval_check_fn(MPI_Win w, int kv, void *val, void *extra)
{
    (void)w; (void)val; (void)extra;
    keyval_arg_seen = kv;
    return MPI_SUCCESS;
}

/* Frees its own keyval, as the MPICH test keyval_double_free_win does. */
static int self_free_fn(MPI_Win w, int kv, void *val, void *extra)
{
    (void)w; (void)val;
    (*(int *)extra)++;
    return MPI_Win_free_keyval(&kv);
}

int main(int argc, char **argv)
{
    static int tag_a = 1, tag_b = 2;
    int ka = MPI_KEYVAL_INVALID, kb = MPI_KEYVAL_INVALID, kc, kt, kn, kself;
    int buf[4], flag = -1, rank;
    void *v = NULL;
    MPI_Win win, win2;

    EXPECT_OK(MPI_Init(&argc, &argv));
    rank = wtest_world_rank();
    wtest_errors_return();

    EXPECT_OK(MPI_Win_create_keyval(copy_fn, delete_fn, &ka, &tag_a));
    EXPECT_OK(MPI_Win_create_keyval(MPI_WIN_DUP_FN, delete_fn, &kb, &tag_b));
    CHECK(ka != kb && ka != MPI_KEYVAL_INVALID, "keyvals %d %d", ka, kb);
    EXPECT_OK(MPI_Win_create(buf, sizeof buf, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    expect_win = win;

    /* Not set yet: flag 0. */
    v = (void *)7;
    EXPECT_OK(MPI_Win_get_attr(win, ka, &v, &flag));
    CHECK_INT(flag, 0);
    CHECK(v == (void *)7, "attribute_val written without an attribute");

    /* Set, get; replacing a value deletes the old one first. */
    EXPECT_OK(MPI_Win_set_attr(win, ka, (void *)10));
    EXPECT_OK(MPI_Win_set_attr(win, kb, (void *)(intptr_t)(20 + rank)));
    EXPECT_OK(MPI_Win_get_attr(win, ka, &v, &flag));
    CHECK_INT(flag, 1);
    CHECK(v == (void *)10, "got %p", v);
    EXPECT_OK(MPI_Win_set_attr(win, ka, (void *)11));
    CHECK_STR(joined(), "a10");
    EXPECT_OK(MPI_Win_get_attr(win, ka, &v, &flag));
    CHECK(v == (void *)11, "got %p", v);

    /* Delete runs the callback; the attribute is gone. */
    EXPECT_OK(MPI_Win_delete_attr(win, kb));
    {
        char want[16];
        snprintf(want, sizeof want, "b%d", 20 + rank);
        CHECK_STR(joined(), want);
    }
    EXPECT_OK(MPI_Win_get_attr(win, kb, &v, &flag));
    CHECK_INT(flag, 0);
    EXPECT_ERR(MPI_Win_delete_attr(win, kb), MPI_ERR_KEYVAL, "MPI_Win_delete_attr", NULL);

    /* Free runs the delete callbacks in reverse order of setting; never a copy callback
     * (windows are not duplicated). A failing one stops the free: the window stays. */
    EXPECT_OK(MPI_Win_set_attr(win, kb, (void *)30));
    fail_delete = 1;
    win2 = win;
    EXPECT_ERR(MPI_Win_free(&win2), MPI_ERR_OTHER, "MPI_Win_free", "delete callback");
    CHECK(win2 == win, "a failed MPI_Win_free changed the handle");
    CHECK_STR(joined(), "b30");
    EXPECT_OK(MPI_Win_get_attr(win, ka, &v, &flag));
    CHECK_INT(flag, 1);
    /* A failing delete callback also fails a replacement and a delete, keeping the value. */
    EXPECT_CLASS(MPI_Win_set_attr(win, kb, (void *)31), MPI_ERR_OTHER);
    EXPECT_CLASS(MPI_Win_delete_attr(win, ka), MPI_ERR_OTHER);
    CHECK_STR(joined(), "b30,a11");
    EXPECT_OK(MPI_Win_get_attr(win, kb, &v, &flag));
    CHECK(flag == 1 && v == (void *)30, "kb now %d %p", flag, v);
    fail_delete = 0;
    EXPECT_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "not nulled");
    CHECK_STR(joined(), "b30,a11");

    /* The keyval argument of a callback is the keyval. */
    EXPECT_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, keyval_check_fn, &kc, NULL));
    EXPECT_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EXPECT_OK(MPI_Win_set_attr(win, kc, NULL));
    /* MPI_WIN_NULL_DELETE_FN does nothing. */
    EXPECT_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &kn, NULL));
    EXPECT_OK(MPI_Win_set_attr(win, kn, (void *)1));
    EXPECT_OK(MPI_Win_delete_attr(win, kn));

    /* Keyvals of other kinds, the predefined ones, garbage. */
    {
        int kcomm, ktype;
        EXPECT_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kcomm, NULL));
        EXPECT_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &ktype, NULL));
        EXPECT_ERR(MPI_Win_set_attr(win, kcomm, NULL), MPI_ERR_KEYVAL, "MPI_Win_set_attr", "communicator keyval");
        EXPECT_ERR(MPI_Win_get_attr(win, ktype, &v, &flag), MPI_ERR_KEYVAL, "MPI_Win_get_attr", "datatype keyval");
        EXPECT_ERR(MPI_Win_delete_attr(win, kcomm), MPI_ERR_KEYVAL, "MPI_Win_delete_attr", "win_keyval");
        EXPECT_ERR(MPI_Comm_set_attr(MPI_COMM_WORLD, kc, NULL), MPI_ERR_KEYVAL, "MPI_Comm_set_attr", "window keyval");
        EXPECT_ERR(MPI_Type_set_attr(MPI_INT, kc, NULL), MPI_ERR_KEYVAL, "MPI_Type_set_attr", "window keyval");
        EXPECT_ERR(MPI_Win_free_keyval(&kcomm), MPI_ERR_KEYVAL, "MPI_Win_free_keyval", "keyval");
        EXPECT_ERR(MPI_Comm_free_keyval(&kc), MPI_ERR_KEYVAL, "MPI_Comm_free_keyval", "keyval");
        EXPECT_OK(MPI_Comm_free_keyval(&kcomm));
        EXPECT_OK(MPI_Type_free_keyval(&ktype));
    }
    EXPECT_ERR(MPI_Win_set_attr(win, MPI_WIN_BASE, NULL), MPI_ERR_KEYVAL, "MPI_Win_set_attr", "predefined");
    EXPECT_ERR(MPI_Win_delete_attr(win, MPI_WIN_SIZE), MPI_ERR_KEYVAL, "MPI_Win_delete_attr", "predefined");
    EXPECT_ERR(MPI_Win_get_attr(win, MPI_TAG_UB, &v, &flag), MPI_ERR_KEYVAL, "MPI_Win_get_attr", "win_keyval");
    EXPECT_ERR(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WIN_BASE, &v, &flag), MPI_ERR_KEYVAL, "MPI_Comm_get_attr", "comm_keyval");
    EXPECT_ERR(MPI_Win_set_attr(win, MPI_KEYVAL_INVALID, NULL), MPI_ERR_KEYVAL, "MPI_Win_set_attr", "win_keyval");
    EXPECT_ERR(MPI_Win_get_attr(win, 0x4321, &v, &flag), MPI_ERR_KEYVAL, "MPI_Win_get_attr", "win_keyval");

    EXPECT_OK(MPI_Win_free(&win));
    CHECK_INT(keyval_arg_seen, kc);

    /* A keyval freed while an attribute holds it: the attribute stays readable, its delete
     * callback runs at free, freeing the keyval again is harmless; setting new attributes
     * with it is an error. The callback may free the keyval itself. */
    {
        int calls = 0, copy, held;
        MPI_Win w[2];
        EXPECT_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, self_free_fn, &kself, &calls));
        copy = held = kself;
        for (int i = 0; i < 2; i++) {
            EXPECT_OK(MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w[i]));
            EXPECT_OK(MPI_Win_set_errhandler(w[i], MPI_ERRORS_RETURN));
            EXPECT_OK(MPI_Win_set_attr(w[i], kself, (void *)(intptr_t)i));
        }
        EXPECT_OK(MPI_Win_free(&w[0]));
        CHECK_INT(calls, 1);
        EXPECT_OK(MPI_Win_free_keyval(&kself));
        CHECK_INT(kself, MPI_KEYVAL_INVALID);
        EXPECT_OK(MPI_Win_free_keyval(&copy));
        EXPECT_OK(MPI_Win_get_attr(w[1], held, &v, &flag));
        CHECK(flag == 1 && v == (void *)1, "held attribute %d %p", flag, v);
        EXPECT_ERR(MPI_Win_set_attr(w[1], held, NULL), MPI_ERR_KEYVAL, "MPI_Win_set_attr", "freed");
        EXPECT_OK(MPI_Win_free(&w[1]));
        CHECK_INT(calls, 2);
    }

    /* Freed keyvals: not for new attributes. */
    EXPECT_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &kt, NULL));
    {
        int old = kt;
        EXPECT_OK(MPI_Win_free_keyval(&kt));
        CHECK_INT(kt, MPI_KEYVAL_INVALID);
        EXPECT_OK(MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_SELF, &win));
        EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        EXPECT_ERR(MPI_Win_set_attr(win, old, NULL), MPI_ERR_KEYVAL, "MPI_Win_set_attr", "freed");
        EXPECT_ERR(MPI_Win_free_keyval(&old), MPI_ERR_KEYVAL, "MPI_Win_free_keyval", "freed");
        EXPECT_OK(MPI_Win_free(&win));
    }
    EXPECT_ERR(MPI_Win_free_keyval(NULL), MPI_ERR_ARG, "MPI_Win_free_keyval", "keyval");
    EXPECT_ERR(MPI_Win_create_keyval(copy_fn, delete_fn, NULL, NULL), MPI_ERR_ARG, "MPI_Win_create_keyval", "keyval");

    EXPECT_OK(MPI_Win_free_keyval(&ka));
    EXPECT_OK(MPI_Win_free_keyval(&kb));
    EXPECT_OK(MPI_Win_free_keyval(&kc));
    EXPECT_OK(MPI_Win_free_keyval(&kn));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
