/* Info and errhandler functions work before MPI_Init and after MPI_Finalize (MPI 4: info,
 * errhandler creation/free and the version queries need no initialized MPI). */
#include "wtest.h"

static void handler(MPI_Comm *c, int *e, ...) { (void)c; (void)e; }

static void info_round(const char *when)
{
    MPI_Info info = MPI_INFO_NULL, back;
    int n = -1, flag = 0, buflen;
    char v[32];

    EXPECT_OK(MPI_Info_create(&info));
    EXPECT_OK(MPI_Info_set(info, "when", when));
    EXPECT_OK(MPI_Info_get_nkeys(info, &n));
    CHECK_INT(n, 1);
    buflen = sizeof v;
    EXPECT_OK(MPI_Info_get_string(info, "when", &buflen, v, &flag));
    CHECK(flag == 1 && !strcmp(v, when), "%s: value \"%s\"", when, v);
    back = MPI_Info_fromint(MPI_Info_toint(info));
    CHECK(back == info, "%s: toint/fromint", when);
    EXPECT_OK(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL, "%s: not nulled", when);
}

static MPI_Errhandler errh(void)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    EXPECT_OK(MPI_Comm_create_errhandler(handler, &eh));
    CHECK(eh != MPI_ERRHANDLER_NULL, "no errhandler");
    return eh;
}

int main(int argc, char **argv)
{
    MPI_Errhandler before, after;
    MPI_Info kept;

    info_round("before");
    before = errh();
    EXPECT_OK(MPI_Info_create(&kept));
    EXPECT_OK(MPI_Info_set(kept, "made", "before init"));

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    info_round("during");
    /* Objects made before init are usable during it. */
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, before));
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    {
        char v[32];
        int buflen = sizeof v, flag = 0;
        EXPECT_OK(MPI_Info_get_string(kept, "made", &buflen, v, &flag));
        CHECK(flag == 1 && !strcmp(v, "before init"), "info made before init: \"%s\"", v);
    }
    EXPECT_OK(MPI_Finalize());

    info_round("after");
    after = errh();
    EXPECT_OK(MPI_Errhandler_free(&before));
    EXPECT_OK(MPI_Errhandler_free(&after));
    EXPECT_OK(MPI_Info_free(&kept));
    return wtest_finish();
}
