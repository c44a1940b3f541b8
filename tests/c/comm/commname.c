/* Names of the predefined communicators; MPI_Comm_set_name/MPI_Comm_get_name. */
#include "wtest.h"

int main(int argc, char **argv)
{
    char name[MPI_MAX_OBJECT_NAME];
    char longname[MPI_MAX_OBJECT_NAME + 1];
    int len = -1;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    memset(name, 'x', sizeof name);
    EXPECT_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK_STR(name, "MPI_COMM_WORLD");
    CHECK_INT(len, strlen("MPI_COMM_WORLD"));
    memset(name, 'x', sizeof name);
    EXPECT_OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK_STR(name, "MPI_COMM_SELF");
    CHECK_INT(len, strlen("MPI_COMM_SELF"));

    EXPECT_OK(MPI_Comm_set_name(MPI_COMM_WORLD, "everyone"));
    EXPECT_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK_STR(name, "everyone");
    CHECK_INT(len, 8);
    /* SELF keeps its own name. */
    EXPECT_OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK_STR(name, "MPI_COMM_SELF");

    /* The empty name, and the longest name that fits (MPI_MAX_OBJECT_NAME - 1 characters). */
    EXPECT_OK(MPI_Comm_set_name(MPI_COMM_SELF, ""));
    EXPECT_OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK_STR(name, "");
    CHECK_INT(len, 0);
    memset(longname, 'n', MPI_MAX_OBJECT_NAME - 1);
    longname[MPI_MAX_OBJECT_NAME - 1] = 0;
    EXPECT_OK(MPI_Comm_set_name(MPI_COMM_SELF, longname));
    EXPECT_OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK_STR(name, longname);
    CHECK_INT(len, MPI_MAX_OBJECT_NAME - 1);

    /* One character more is too long, and the old name stays. */
    memset(longname, 'm', MPI_MAX_OBJECT_NAME);
    longname[MPI_MAX_OBJECT_NAME] = 0;
    EXPECT_ERR(MPI_Comm_set_name(MPI_COMM_WORLD, longname), MPI_ERR_ARG, "MPI_Comm_set_name", NULL);
    EXPECT_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK_STR(name, "everyone");

    /* Setting a name again replaces it. */
    EXPECT_OK(MPI_Comm_set_name(MPI_COMM_WORLD, "MPI_COMM_WORLD"));
    EXPECT_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK_STR(name, "MPI_COMM_WORLD");

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
