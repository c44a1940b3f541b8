/* Bad calls on windows give the right error class and a message naming the function and the
 * argument, write no output, and go to the right errhandler: creation errors to the
 * communicator's, the others to the window's (MPI_ERRORS_ARE_FATAL until set). */
#include "wtest.h"

static int comm_calls = 0, comm_class = -1;
static MPI_Comm comm_seen = MPI_COMM_NULL;
static int win_calls = 0, win_class = -1;
static MPI_Win win_seen = MPI_WIN_NULL;

static void comm_eh(MPI_Comm *c, int *code, ...)
{
    comm_calls++;
    comm_seen = *c;
    MPI_Error_class(*code, &comm_class);
}

static void win_eh(MPI_Win *w, int *code, ...)
{
    win_calls++;
    win_seen = *w;
    MPI_Error_class(*code, &win_class);
}

static void any_comm_eh(MPI_Comm *c, int *code, ...) { (void)c; (void)code; }

int main(int argc, char **argv)
{
    int buf[8], flag = 0, len = 0;
    void *p = NULL;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Win win = MPI_WIN_NULL, keep;
    MPI_Errhandler weh, ceh, got;
    MPI_Group g;
    MPI_Info info;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    /* Creation: bad arguments (MPI_ERR_SIZE, MPI_ERR_DISP, ...), no window written. */
    keep = (MPI_Win)WTEST_GARBAGE;
    EXPECT_ERR(MPI_Win_create(buf, -1, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &keep), MPI_ERR_SIZE, "MPI_Win_create", "size");
    EXPECT_ERR(MPI_Win_create(buf, 16, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &keep), MPI_ERR_DISP, "MPI_Win_create", "disp_unit");
    EXPECT_ERR(MPI_Win_create(buf, 16, -4, MPI_INFO_NULL, MPI_COMM_WORLD, &keep), MPI_ERR_DISP, "MPI_Win_create", "disp_unit");
    EXPECT_ERR(MPI_Win_create_c(buf, 16, (MPI_Aint)1 << 40, MPI_INFO_NULL, MPI_COMM_WORLD, &keep), MPI_ERR_DISP, "MPI_Win_create_c", "disp_unit");
    EXPECT_ERR(MPI_Win_create(NULL, 16, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &keep), MPI_ERR_ARG, "MPI_Win_create", "base");
    EXPECT_ERR(MPI_Win_create(buf, 16, 4, MPI_INFO_NULL, MPI_COMM_NULL, &keep), MPI_ERR_COMM, "MPI_Win_create", "comm");
    EXPECT_ERR(MPI_Win_create(buf, 16, 4, MPI_INFO_NULL, (MPI_Comm)WTEST_GARBAGE, &keep), MPI_ERR_COMM, "MPI_Win_create", "comm");
    EXPECT_ERR(MPI_Win_create(buf, 16, 4, (MPI_Info)WTEST_GARBAGE, MPI_COMM_WORLD, &keep), MPI_ERR_INFO, "MPI_Win_create", "info");
    EXPECT_ERR(MPI_Win_create(buf, 16, 4, MPI_INFO_NULL, MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "MPI_Win_create", "win");
    EXPECT_ERR(MPI_Win_allocate(-8, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &keep), MPI_ERR_SIZE, "MPI_Win_allocate", "size");
    EXPECT_ERR(MPI_Win_allocate(8, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &keep), MPI_ERR_DISP, "MPI_Win_allocate", "disp_unit");
    EXPECT_ERR(MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, NULL, &keep), MPI_ERR_ARG, "MPI_Win_allocate", "baseptr");
    EXPECT_ERR(MPI_Win_allocate_c(-1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &keep), MPI_ERR_SIZE, "MPI_Win_allocate_c", "size");
    EXPECT_ERR(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_NULL, &keep), MPI_ERR_COMM, "MPI_Win_create_dynamic", "comm");
    CHECK(keep == (MPI_Win)WTEST_GARBAGE, "output written on failure");
    CHECK(p == NULL, "baseptr written on failure");
    {
        /* Windows live on intracommunicators. */
        int rank, size;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (size >= 2) {
            MPI_Comm local, inter;
            EXPECT_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local));
            EXPECT_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter));
            EXPECT_ERR(MPI_Win_create(buf, 16, 4, MPI_INFO_NULL, inter, &keep), MPI_ERR_COMM, "MPI_Win_create", "comm");
            MPI_Comm_free(&inter);
            MPI_Comm_free(&local);
        }
    }

    /* Creation errors go to the communicator's errhandler. */
    EXPECT_OK(MPI_Comm_create_errhandler(comm_eh, &ceh));
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, ceh));
    EXPECT_CLASS(MPI_Win_create(buf, -1, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &keep), MPI_ERR_SIZE);
    CHECK_INT(comm_calls, 1);
    CHECK_INT(comm_class, MPI_ERR_SIZE);
    CHECK(comm_seen == MPI_COMM_WORLD, "handler saw %p", (void *)comm_seen);
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    /* Bad window handles: MPI_ERR_WIN. */
    EXPECT_ERR(MPI_Win_get_group(MPI_WIN_NULL, &g), MPI_ERR_WIN, "MPI_Win_get_group", "win");
    EXPECT_ERR(MPI_Win_get_group((MPI_Win)WTEST_GARBAGE, &g), MPI_ERR_WIN, "MPI_Win_get_group", "win");
    EXPECT_ERR(MPI_Win_set_name(MPI_WIN_NULL, "x"), MPI_ERR_WIN, "MPI_Win_set_name", "win");
    EXPECT_ERR(MPI_Win_get_name((MPI_Win)WTEST_GARBAGE, name, &len), MPI_ERR_WIN, "MPI_Win_get_name", "win");
    EXPECT_ERR(MPI_Win_get_info(MPI_WIN_NULL, &info), MPI_ERR_WIN, "MPI_Win_get_info", "win");
    EXPECT_ERR(MPI_Win_set_info(MPI_WIN_NULL, MPI_INFO_NULL), MPI_ERR_WIN, "MPI_Win_set_info", "win");
    EXPECT_ERR(MPI_Win_get_attr(MPI_WIN_NULL, MPI_WIN_BASE, &p, &flag), MPI_ERR_WIN, "MPI_Win_get_attr", "win");
    EXPECT_ERR(MPI_Win_set_errhandler(MPI_WIN_NULL, MPI_ERRORS_RETURN), MPI_ERR_WIN, "MPI_Win_set_errhandler", "win");
    EXPECT_ERR(MPI_Win_get_errhandler(MPI_WIN_NULL, &got), MPI_ERR_WIN, "MPI_Win_get_errhandler", "win");
    EXPECT_ERR(MPI_Win_call_errhandler(MPI_WIN_NULL, MPI_ERR_OTHER), MPI_ERR_WIN, "MPI_Win_call_errhandler", "win");
    EXPECT_ERR(MPI_Win_free(NULL), MPI_ERR_ARG, "MPI_Win_free", "win");
    keep = MPI_WIN_NULL;
    EXPECT_ERR(MPI_Win_free(&keep), MPI_ERR_WIN, "MPI_Win_free", "win");
    /* A communicator is not a window. */
    EXPECT_ERR(MPI_Win_get_group((MPI_Win)MPI_COMM_WORLD, &g), MPI_ERR_WIN, "MPI_Win_get_group", "win");

    /* A window's errhandler starts as MPI_ERRORS_ARE_FATAL and accepts only window ones. */
    EXPECT_OK(MPI_Win_create(buf, sizeof buf, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    EXPECT_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "initial window errhandler %p", (void *)got);
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EXPECT_ERR(MPI_Win_set_errhandler(win, ceh), MPI_ERR_ARG, "MPI_Win_set_errhandler", "errhandler");
    EXPECT_OK(MPI_Win_create_errhandler(win_eh, &weh));
    EXPECT_ERR(MPI_Comm_set_errhandler(MPI_COMM_WORLD, weh), MPI_ERR_ARG, "MPI_Comm_set_errhandler", "errhandler");
    EXPECT_OK(MPI_Win_set_errhandler(win, weh));
    EXPECT_OK(MPI_Errhandler_free(&weh)); /* the window keeps it */

    /* Errors on the window go to its handler, with the window. */
    EXPECT_CLASS(MPI_Win_set_attr(win, MPI_WIN_BASE, NULL), MPI_ERR_KEYVAL);
    CHECK_INT(win_calls, 1);
    CHECK_INT(win_class, MPI_ERR_KEYVAL);
    CHECK(win_seen == win, "handler saw %p", (void *)win_seen);
    EXPECT_CLASS(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC);
    CHECK_INT(win_calls, 2);
    CHECK_INT(win_class, MPI_ERR_RMA_SYNC);
    CHECK_INT(comm_calls, 1);
    /* MPI_Win_call_errhandler: the handler runs, the call succeeds. */
    EXPECT_OK(MPI_Win_call_errhandler(win, MPI_ERR_RMA_SYNC));
    CHECK_INT(win_calls, 3);
    CHECK_INT(win_class, MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_call_errhandler(win, -5), MPI_ERR_ARG);
    CHECK_INT(win_calls, 4);
    /* get_errhandler gives a handle that works on another window. */
    EXPECT_OK(MPI_Win_get_errhandler(win, &got));
    {
        MPI_Win w2;
        EXPECT_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_SELF, &w2));
        EXPECT_OK(MPI_Win_set_errhandler(w2, got));
        EXPECT_CLASS(MPI_Win_detach(w2, buf), MPI_ERR_RMA_ATTACH);
        CHECK_INT(win_calls, 5);
        CHECK(win_seen == w2, "handler saw %p", (void *)win_seen);
        EXPECT_OK(MPI_Win_free(&w2));
    }
    EXPECT_OK(MPI_Errhandler_free(&got));

    /* Other bad arguments on a valid window. */
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EXPECT_ERR(MPI_Win_get_group(win, NULL), MPI_ERR_ARG, "MPI_Win_get_group", "group");
    EXPECT_ERR(MPI_Win_set_name(win, NULL), MPI_ERR_ARG, "MPI_Win_set_name", "win_name");
    {
        char longname[MPI_MAX_OBJECT_NAME + 10];
        memset(longname, 'x', sizeof longname - 1);
        longname[sizeof longname - 1] = 0;
        EXPECT_ERR(MPI_Win_set_name(win, longname), MPI_ERR_ARG, "MPI_Win_set_name", "win_name");
    }
    EXPECT_ERR(MPI_Win_get_name(win, name, NULL), MPI_ERR_ARG, "MPI_Win_get_name", "resultlen");
    EXPECT_ERR(MPI_Win_get_info(win, NULL), MPI_ERR_ARG, "MPI_Win_get_info", "info_used");
    EXPECT_ERR(MPI_Win_set_info(win, (MPI_Info)WTEST_GARBAGE), MPI_ERR_INFO, "MPI_Win_set_info", "info");
    EXPECT_ERR(MPI_Win_set_errhandler(win, MPI_ERRHANDLER_NULL), MPI_ERR_ARG, "MPI_Win_set_errhandler", "errhandler");
    EXPECT_ERR(MPI_Win_get_errhandler(win, NULL), MPI_ERR_ARG, "MPI_Win_get_errhandler", "errhandler");
    EXPECT_ERR(MPI_Win_get_attr(win, MPI_WIN_SIZE, NULL, &flag), MPI_ERR_ARG, "MPI_Win_get_attr", "attribute_val");
    EXPECT_ERR(MPI_Win_get_attr(win, MPI_WIN_SIZE, &p, NULL), MPI_ERR_ARG, "MPI_Win_get_attr", "flag");
    EXPECT_OK(MPI_Win_free(&win));

    /* A user communicator errhandler is not a window errhandler: the errhandler kinds are
     * checked, the handle kinds too (a window is not an errhandler). */
    {
        MPI_Errhandler other;
        EXPECT_OK(MPI_Comm_create_errhandler(any_comm_eh, &other));
        EXPECT_OK(MPI_Win_create(buf, sizeof buf, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        EXPECT_ERR(MPI_Win_set_errhandler(win, other), MPI_ERR_ARG, "MPI_Win_set_errhandler", "errhandler");
        EXPECT_ERR(MPI_Win_set_errhandler(win, (MPI_Errhandler)win), MPI_ERR_ARG, "MPI_Win_set_errhandler", "errhandler");
        EXPECT_OK(MPI_Win_free(&win));
        EXPECT_OK(MPI_Errhandler_free(&other));
    }
    EXPECT_OK(MPI_Errhandler_free(&ceh));

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
