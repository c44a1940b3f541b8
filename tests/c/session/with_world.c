/* MPI_Init and sessions in one program: a session started after MPI_Init, and another after
 * MPI_Finalize, both see the same world and communicate. Objects of different sessions do
 * not mix. */
#include "wtest.h"

static void session_round(const char *tag, int expect_size)
{
    MPI_Session s;
    MPI_Group g;
    MPI_Comm c;
    int size, sum = 0, one = 1;
    EXPECT_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    EXPECT_OK(MPI_Group_from_session_pset(s, "mpi://world", &g));
    EXPECT_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_Comm_size(c, &size);
    CHECK_INT(size, expect_size);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK_INT(sum, expect_size);
    MPI_Comm_free(&c);
    MPI_Group_free(&g);
    MPI_Session_finalize(&s);
}

int main(int argc, char **argv)
{
    int size;
    MPI_Session s;
    MPI_Group g;
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Init(&argc, &argv);
    wtest_world_rank();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    session_round("weft.test.during", size);

    /* A group of a session cannot make a communicator of the world session. */
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    EXPECT_CLASS(MPI_Comm_create(MPI_COMM_WORLD, g, &c), MPI_ERR_GROUP);
    CHECK(c == MPI_COMM_NULL, "no communicator was made");
    MPI_Group_free(&g);
    MPI_Session_finalize(&s);

    MPI_Finalize();
    session_round("weft.test.after", size);
    return wtest_finish();
}
