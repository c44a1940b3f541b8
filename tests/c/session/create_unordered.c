/* MPI_Comm_create_from_group returns before its members have agreed on the communicator's
 * context id (the agreement runs in the progress engine; the first use waits for it), so
 * two ranks may create two communicators from the same group in opposite orders, and one
 * may free a communicator it never used: a blocking creation would deadlock here. */
#include "wtest.h"

static MPI_Comm create(MPI_Session s, const char *tag)
{
    MPI_Group g;
    MPI_Comm c = MPI_COMM_NULL;
    EXPECT_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    EXPECT_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    EXPECT_OK(MPI_Group_free(&g));
    return c;
}

static void ring(MPI_Comm c, int value)
{
    int rank, size, in = -1, out;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    out = value * 100 + rank;
    EXPECT_OK(MPI_Sendrecv(&out, 1, MPI_INT, (rank + 1) % size, 3, &in, 1, MPI_INT,
                           (rank + size - 1) % size, 3, c, MPI_STATUS_IGNORE));
    CHECK_INT(in, value * 100 + (rank + size - 1) % size);
}

int main(void)
{
    MPI_Session s;
    MPI_Comm a, b, unused;
    int rank, round;
    EXPECT_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    for (round = 0; round < 20; round++) {
        /* The job rank decides the order; nothing has been communicated yet. */
        MPI_Comm first = create(s, round % 2 ? "weft.test.unordered.a" : "weft.test.unordered.b");
        MPI_Comm_rank(first, &rank);
        wtest_rank = rank;
        if (rank % 2 == 0) {
            unused = create(s, "weft.test.unordered.unused");
            a = create(s, "weft.test.unordered.x");
            b = create(s, "weft.test.unordered.y");
        } else {
            b = create(s, "weft.test.unordered.y");
            a = create(s, "weft.test.unordered.x");
            unused = create(s, "weft.test.unordered.unused");
        }
        EXPECT_OK(MPI_Comm_free(&unused));
        ring(b, 2 * round + 1);
        ring(a, 2 * round);
        int result = -1;
        EXPECT_OK(MPI_Comm_compare(a, b, &result));
        CHECK_INT(result, MPI_CONGRUENT);
        EXPECT_OK(MPI_Comm_free(&a));
        EXPECT_OK(MPI_Comm_free(&b));
        EXPECT_OK(MPI_Comm_free(&first));
    }
    EXPECT_OK(MPI_Session_finalize(&s));
    return wtest_finish();
}
