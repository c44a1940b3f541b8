/* Errhandlers for windows, files and sessions exist as objects (they are freed like comm
 * errhandlers) but do not fit communicators. */
#include "wtest.h"

static void comm_fn(MPI_Comm *c, int *e, ...) { (void)c; (void)e; }
static void win_fn(MPI_Win *w, int *e, ...) { (void)w; (void)e; }
static void file_fn(MPI_File *f, int *e, ...) { (void)f; (void)e; }
static void session_fn(MPI_Session *s, int *e, ...) { (void)s; (void)e; }

int main(int argc, char **argv)
{
    MPI_Errhandler c = MPI_ERRHANDLER_NULL, w = MPI_ERRHANDLER_NULL, f = MPI_ERRHANDLER_NULL,
                   s = MPI_ERRHANDLER_NULL, keep;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    EXPECT_OK(MPI_Comm_create_errhandler(comm_fn, &c));
    EXPECT_OK(MPI_Win_create_errhandler(win_fn, &w));
    EXPECT_OK(MPI_File_create_errhandler(file_fn, &f));
    EXPECT_OK(MPI_Session_create_errhandler(session_fn, &s));
    CHECK(c != w && c != f && c != s && w != f && w != s && f != s, "handles not distinct");
    CHECK(c != MPI_ERRHANDLER_NULL && w != MPI_ERRHANDLER_NULL && f != MPI_ERRHANDLER_NULL &&
              s != MPI_ERRHANDLER_NULL,
          "a null handle");

    EXPECT_ERR(MPI_Comm_set_errhandler(MPI_COMM_WORLD, w), MPI_ERR_ARG, "MPI_Comm_set_errhandler", "errhandler");
    EXPECT_ERR(MPI_Comm_set_errhandler(MPI_COMM_WORLD, f), MPI_ERR_ARG, "MPI_Comm_set_errhandler", "errhandler");
    EXPECT_ERR(MPI_Comm_set_errhandler(MPI_COMM_SELF, s), MPI_ERR_ARG, "MPI_Comm_set_errhandler", "errhandler");
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, c));
    {
        /* The failed sets left WORLD's errhandler as it was. */
        MPI_Errhandler got;
        EXPECT_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
        CHECK(got == MPI_ERRORS_RETURN, "WORLD's errhandler changed to %p", (void *)got);
    }
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    /* NULL functions and NULL outputs. */
    keep = (MPI_Errhandler)WTEST_GARBAGE;
    EXPECT_ERR(MPI_Comm_create_errhandler(NULL, &keep), MPI_ERR_ARG, "MPI_Comm_create_errhandler", NULL);
    EXPECT_ERR(MPI_Win_create_errhandler(NULL, &keep), MPI_ERR_ARG, "MPI_Win_create_errhandler", NULL);
    EXPECT_ERR(MPI_File_create_errhandler(NULL, &keep), MPI_ERR_ARG, "MPI_File_create_errhandler", NULL);
    EXPECT_ERR(MPI_Session_create_errhandler(NULL, &keep), MPI_ERR_ARG, "MPI_Session_create_errhandler", NULL);
    CHECK(keep == (MPI_Errhandler)WTEST_GARBAGE, "output written on failure");
    EXPECT_ERR(MPI_Comm_create_errhandler(comm_fn, NULL), MPI_ERR_ARG, "MPI_Comm_create_errhandler", "errhandler");
    EXPECT_ERR(MPI_Win_create_errhandler(win_fn, NULL), MPI_ERR_ARG, "MPI_Win_create_errhandler", "errhandler");
    EXPECT_ERR(MPI_File_create_errhandler(file_fn, NULL), MPI_ERR_ARG, "MPI_File_create_errhandler", "errhandler");
    EXPECT_ERR(MPI_Session_create_errhandler(session_fn, NULL), MPI_ERR_ARG, "MPI_Session_create_errhandler", "errhandler");

    EXPECT_OK(MPI_Errhandler_free(&c));
    EXPECT_OK(MPI_Errhandler_free(&w));
    EXPECT_OK(MPI_Errhandler_free(&f));
    EXPECT_OK(MPI_Errhandler_free(&s));
    CHECK(c == MPI_ERRHANDLER_NULL && w == MPI_ERRHANDLER_NULL && f == MPI_ERRHANDLER_NULL &&
              s == MPI_ERRHANDLER_NULL,
          "MPI_Errhandler_free did not null the handles");

    /* Many create/free cycles do not run out of handles or reuse a live one. */
    for (int i = 0; i < 2000; i++) {
        MPI_Errhandler a, b;
        EXPECT_OK(MPI_Comm_create_errhandler(comm_fn, &a));
        EXPECT_OK(MPI_Comm_create_errhandler(comm_fn, &b));
        if (a == b) {
            FAIL("cycle %d: equal handles", i);
            break;
        }
        EXPECT_OK(MPI_Errhandler_free(&a));
        EXPECT_OK(MPI_Errhandler_free(&b));
    }

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
