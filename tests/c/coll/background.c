/* Nonblocking reductions with user ops complete in the background: the operator is not run
 * inside MPI_Iallreduce/MPI_Ireduce/MPI_Iscan (it runs from later completion calls, outside
 * the library's locks), the order of a non-commutative op is kept, several are outstanding
 * at once, and a persistent one restarts. */
#include "wtest.h"

static int calls = 0;
static int rank, size;

/* 2x2 integer matrix product mod 10007, inout = in * inout */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    calls++;
    int *x = in, *y = inout;
    for (int k = 0; k < *len / 4; k++, x += 4, y += 4) {
        int r[4] = {(x[0] * y[0] + x[1] * y[2]) % 10007, (x[0] * y[1] + x[1] * y[3]) % 10007,
                    (x[2] * y[0] + x[3] * y[2]) % 10007, (x[2] * y[1] + x[3] * y[3]) % 10007};
        memcpy(y, r, sizeof r);
    }
}

static void mat_of(int r, int *m) { m[0] = r + 2, m[1] = 1, m[2] = r % 3, m[3] = 1; }

static void prod(int lo, int hi, int *m)
{
    int acc[4] = {1, 0, 0, 1}, t[4];
    for (int r = lo; r < hi; r++) {
        mat_of(r, t);
        int n = 4;
        /* acc = acc * t: matmul computes inout = in * inout, so pass acc as in */
        int a[4];
        memcpy(a, acc, sizeof a);
        memcpy(acc, t, sizeof acc);
        matmul(a, acc, &n, NULL);
        calls--;
    }
    memcpy(m, acc, sizeof acc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_world_rank();
    MPI_Op op;
    MPI_Op_create(matmul, 0, &op);
    int mine[4], all[4], red[4], scan[4], want[4];
    mat_of(rank, mine);
    MPI_Request reqs[3];
    calls = 0;
    EXPECT_OK(MPI_Iallreduce(mine, all, 4, MPI_INT, op, MPI_COMM_WORLD, &reqs[0]));
    EXPECT_OK(MPI_Ireduce(mine, red, 4, MPI_INT, op, 0, MPI_COMM_WORLD, &reqs[1]));
    EXPECT_OK(MPI_Iscan(mine, scan, 4, MPI_INT, op, MPI_COMM_WORLD, &reqs[2]));
    CHECK(calls == 0, "the user op ran %d times inside the nonblocking calls", calls);
    EXPECT_OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
    if (size > 1)
        CHECK(calls > 0, "the user op never ran");
    prod(0, size, want);
    CHECK(memcmp(all, want, sizeof want) == 0, "iallreduce: %d %d %d %d", all[0], all[1],
          all[2], all[3]);
    if (rank == 0)
        CHECK(memcmp(red, want, sizeof want) == 0, "ireduce: %d %d %d %d", red[0], red[1],
              red[2], red[3]);
    prod(0, rank + 1, want);
    CHECK(memcmp(scan, want, sizeof want) == 0, "iscan: %d %d %d %d", scan[0], scan[1], scan[2],
          scan[3]);
    /* persistent, restarted; completion by MPI_Test polling */
    MPI_Request p;
    EXPECT_OK(MPI_Allreduce_init(mine, all, 4, MPI_INT, op, MPI_COMM_WORLD, MPI_INFO_NULL, &p));
    for (int round = 0; round < 3; round++) {
        memset(all, 0, sizeof all);
        EXPECT_OK(MPI_Start(&p));
        int done = 0;
        while (!done)
            EXPECT_OK(MPI_Test(&p, &done, MPI_STATUS_IGNORE));
        prod(0, size, want);
        CHECK(memcmp(all, want, sizeof want) == 0, "persistent round %d", round);
    }
    MPI_Request_free(&p);
    MPI_Op_free(&op);
    MPI_Finalize();
    return wtest_finish();
}
