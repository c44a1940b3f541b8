/* A window whose errhandler was never set reports MPI_ERRORS_ARE_FATAL (MPI 4.1 §12.6.1), but
 * its errors go where errors without an object go, as in MPICH: a program that set
 * MPI_ERRORS_RETURN on MPI_COMM_WORLD only (MPICH's errors/attr/keyvalmis) gets them back. A
 * window whose errhandler was set keeps it: after MPI_Win_set_errhandler(MPI_ERRORS_ARE_FATAL)
 * rank 1 errs on the window and the job must end. */
#include "wtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank = -1, buf[2], keyval = MPI_KEYVAL_INVALID, calls = 0;
    MPI_Win win;
    MPI_Errhandler eh;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    EXPECT_OK(MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    EXPECT_OK(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "a new window reports MPI_ERRORS_ARE_FATAL");
    /* a communicator keyval on a window: returned through MPI_COMM_WORLD's errhandler */
    EXPECT_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &keyval, NULL));
    EXPECT_ERR(MPI_Win_set_attr(win, keyval, &calls), MPI_ERR_KEYVAL, "MPI_Win_set_attr", "keyval");
    EXPECT_ERR(MPI_Win_set_attr(win, MPI_WIN_BASE, NULL), MPI_ERR_KEYVAL, "MPI_Win_set_attr", NULL);
    EXPECT_OK(MPI_Comm_free_keyval(&keyval));
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL));
    EXPECT_OK(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "the window's errhandler as set");
    /* Any failed check above: both ranks end normally, without the fatal error the
     * manifest requires, so the test fails. */
    int errs = wtest_errs, total = 0;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (total)
        return wtest_finish();
    if (rank == 1) {
        /* the manifest requires this line: an old library dies at the first error above */
        fprintf(stderr, "rank 1: window errors came back through MPI_COMM_WORLD\n");
        fflush(stderr);
        MPI_Win_set_attr(win, MPI_WIN_BASE, NULL);
        fprintf(stderr, "rank 1: the error on a window set to MPI_ERRORS_ARE_FATAL returned\n");
        return 0;
    }
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 60.0)
        usleep(1000);
    fprintf(stderr, "rank 0: nobody ended the job\n");
    return 0;
}
