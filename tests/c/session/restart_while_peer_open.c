/* One process ends its only session and starts another while its peer's first session is
 * still open; both then build a communicator in the new sessions and exchange on it. (The
 * restarted process must reach the peer through the transports the peer still uses.) */
#include "wtest.h"

static MPI_Comm world_comm(MPI_Session s, const char *tag)
{
    MPI_Group g;
    MPI_Comm c = MPI_COMM_NULL;
    EXPECT_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    EXPECT_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    EXPECT_OK(MPI_Group_free(&g));
    return c;
}

/* rank r sends r*10+round to the other and checks what it gets back */
static void exchange(MPI_Comm c, int round)
{
    int rank, in = -1, out;
    MPI_Comm_rank(c, &rank);
    out = rank * 10 + round;
    EXPECT_OK(MPI_Sendrecv(&out, 1, MPI_INT, 1 - rank, round, &in, 1, MPI_INT, 1 - rank, round, c,
                           MPI_STATUS_IGNORE));
    CHECK_INT(in, (1 - rank) * 10 + round);
}

int main(void)
{
    MPI_Session first, second;
    MPI_Comm c;
    int rank;
    EXPECT_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &first));
    c = world_comm(first, "weft.test.restart.first");
    MPI_Comm_rank(c, &rank);
    wtest_rank = rank;
    exchange(c, 1);
    EXPECT_OK(MPI_Comm_free(&c));
    if (rank == 0) {
        /* Rank 0 has no session left for a moment; rank 1 keeps its first one. */
        EXPECT_OK(MPI_Session_finalize(&first));
        EXPECT_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &second));
    } else {
        EXPECT_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &second));
    }
    c = world_comm(second, "weft.test.restart.second");
    exchange(c, 2);
    EXPECT_OK(MPI_Comm_free(&c));
    if (rank == 1)
        EXPECT_OK(MPI_Session_finalize(&first));
    EXPECT_OK(MPI_Session_finalize(&second));
    return wtest_finish();
}
