/* MPIX_Attr_value_hooks: the library tells a language binding of every attribute value it
 * stores on an object (set, copy callback) and of every stored value that leaves one
 * (replaced, deleted, the object freed), after the delete callback; one hook without the
 * other is MPI_ERR_ARG, naming the function and the arguments. */
#include "wtest.h"

static int retains[4], releases[4], deletes_seen[4];
static int cells[4]; /* the values' storage: their addresses are the attribute values */

static int index_of(void *v)
{
    for (int i = 0; i < 4; i++)
        if (v == &cells[i])
            return i;
    return -1;
}

static void retain(void *v)
{
    int i = index_of(v);
    if (i >= 0)
        retains[i]++;
}

static void release(void *v)
{
    int i = index_of(v);
    if (i >= 0)
        releases[i]++;
}

static int on_delete(MPI_Comm c, int k, void *v, void *extra)
{
    (void)c, (void)k, (void)extra;
    int i = index_of(v);
    /* this holder's release comes after its delete callback: one is still to come */
    if (i >= 0 && retains[i] > 0 && releases[i] >= retains[i])
        FAIL("cell %d released (%d of %d) before its delete callback", i, releases[i], retains[i]);
    if (i >= 0)
        deletes_seen[i]++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    EXPECT_ERR(MPIX_Attr_value_hooks(retain, NULL), MPI_ERR_ARG, "MPIX_Attr_value_hooks", "release_fn");
    EXPECT_OK(MPIX_Attr_value_hooks(retain, release));

    int key;
    MPI_Comm dup;
    EXPECT_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, on_delete, &key, NULL));
    EXPECT_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, &cells[0]));
    CHECK_INT(retains[0], 1);
    /* Replaced: the old value is released, the new one retained. */
    EXPECT_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, &cells[1]));
    CHECK_INT(releases[0], 1);
    CHECK_INT(deletes_seen[0], 1);
    CHECK_INT(retains[1], 1);
    /* MPI_COMM_DUP_FN passes the pointer on: a second holder. */
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_INT(retains[1], 2);
    EXPECT_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, key));
    CHECK_INT(releases[1], 1);
    EXPECT_OK(MPI_Comm_free(&dup));
    CHECK_INT(releases[1], 2);
    CHECK_INT(deletes_seen[1], 2);
    /* Two NULLs unregister: nothing more is reported. */
    EXPECT_OK(MPIX_Attr_value_hooks(NULL, NULL));
    EXPECT_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, &cells[2]));
    EXPECT_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, key));
    CHECK_INT(retains[2], 0);
    CHECK_INT(releases[2], 0);
    EXPECT_OK(MPI_Comm_free_keyval(&key));
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
