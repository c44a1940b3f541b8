/* Process sets: the built-in ones, those mpiexec --pset defines, names compared as the
 * standard says, their sizes, groups and communicators; an unknown name is MPI_ERR_ARG; a
 * session started after every earlier one ended (the launcher connection is closed then)
 * still sees the launcher's sets. */
#include "wtest.h"

int main(void)
{
    MPI_Session s;
    MPI_Group g;
    MPI_Comm c;
    MPI_Info info;
    int n, i, found_even = 0, wrank, wsize, rc, len;
    char name[256], value[32];
    EXPECT_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    MPI_Group_rank(g, &wrank);
    MPI_Group_size(g, &wsize);
    MPI_Group_free(&g);
    wtest_rank = wrank;
    EXPECT_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n >= 4, "%d process sets (WORLD, SELF, SHARED and app://even expected)", n);
    for (i = 0; i < n; i++) {
        len = 0;
        EXPECT_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        CHECK(len > 1 && len <= (int)sizeof name, "name length %d", len);
        EXPECT_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK_INT((int)strlen(name) + 1, len);
        if (!strcmp(name, "app://even"))
            found_even = 1;
    }
    CHECK(found_even, "the launcher's app://even is listed");

    /* Sizes through the pset info, names case-insensitive for mpi:// and mpix://. */
    const char *names[] = {"mpi://WORLD", "MPI://self", "mpix://SHARED", "mpi://shared", "app://even"};
    int sizes[] = {wsize, 1, wsize, wsize, (wsize + 1) / 2};
    for (i = 0; i < 5; i++) {
        int flag = 0, vlen = sizeof value;
        EXPECT_OK(MPI_Session_get_pset_info(s, names[i], &info));
        MPI_Info_get_string(info, "mpi_size", &vlen, value, &flag);
        CHECK(flag && atoi(value) == sizes[i], "%s: mpi_size %s, expected %d", names[i], flag ? value : "?", sizes[i]);
        MPI_Info_free(&info);
    }

    /* The even ranks build a communicator from app://even. */
    if (wrank % 2 == 0) {
        int crank, csize, sum = 0;
        EXPECT_OK(MPI_Group_from_session_pset(s, "app://even", &g));
        EXPECT_OK(MPI_Comm_create_from_group(g, "weft.test.even", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
        MPI_Comm_rank(c, &crank);
        MPI_Comm_size(c, &csize);
        CHECK_INT(crank, wrank / 2);
        CHECK_INT(csize, (wsize + 1) / 2);
        MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, c);
        CHECK_INT(sum, (csize - 1) * csize); /* 0 + 2 + 4 + ... */
        MPI_Comm_free(&c);
        MPI_Group_free(&g);
    }

    /* An unknown name: MPI_ERR_ARG, and the message names it. */
    rc = MPI_Group_from_session_pset(s, "app://nope", &g);
    CHECK_INT(rc & 0xffff, MPI_ERR_ARG);
    CHECK_CONTAINS(wtest_string(rc), "app://nope");
    CHECK_CONTAINS(wtest_string(rc), "MPI_Group_from_session_pset");
    MPI_Session_finalize(&s);

    EXPECT_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    EXPECT_OK(MPI_Group_from_session_pset(s, "app://even", &g));
    MPI_Group_size(g, &n);
    CHECK_INT(n, (wsize + 1) / 2);
    MPI_Group_free(&g);
    MPI_Session_finalize(&s);
    return wtest_finish();
}
