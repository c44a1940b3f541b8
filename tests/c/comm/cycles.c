/* 100000 MPI_Comm_dup/MPI_Comm_free cycles (and 10000 splits) neither run out of context ids
 * nor grow memory; afterwards many communicators can live at once. */
#include "wtest.h"

static long rss_kb(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss * 4;
}

#define LIVE 2000

int main(int argc, char **argv)
{
    int rank, size, i, res;
    long before, after;
    static MPI_Comm live[LIVE];
    int cycles = wtest_env_int("WTEST_CYCLES", 100000);

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (i = 0; i < 1000; i++) {
        MPI_Comm c;
        EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        EXPECT_OK(MPI_Comm_free(&c));
    }
    before = rss_kb();
    for (i = 0; i < cycles; i++) {
        MPI_Comm c;
        int rc = MPI_Comm_dup(MPI_COMM_WORLD, &c);
        if (rc != MPI_SUCCESS) {
            FAIL("MPI_Comm_dup failed at cycle %d: %s", i, wtest_string(rc));
            break;
        }
        EXPECT_OK(MPI_Comm_free(&c));
    }
    for (i = 0; i < cycles / 10; i++) {
        MPI_Comm c;
        int rc = MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c);
        if (rc != MPI_SUCCESS) {
            FAIL("MPI_Comm_split failed at cycle %d: %s", i, wtest_string(rc));
            break;
        }
        EXPECT_OK(MPI_Comm_free(&c));
    }
    after = rss_kb();
    CHECK(after - before < 2048, "RSS grew by %ld kB over the cycles", after - before);

    /* Many at once (more than any small fixed table), each usable. */
    for (i = 0; i < LIVE; i++)
        EXPECT_OK(MPI_Comm_dup(i == 0 ? MPI_COMM_WORLD : live[i - 1], &live[i]));
    EXPECT_OK(MPI_Comm_compare(live[LIVE - 1], MPI_COMM_WORLD, &res));
    CHECK_INT(res, MPI_CONGRUENT);
    if (size > 1) {
        int v = rank, got = -1;
        EXPECT_OK(MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT,
                               (rank + size - 1) % size, 0, live[LIVE - 1], MPI_STATUS_IGNORE));
        CHECK_INT(got, (rank + size - 1) % size);
    }
    for (i = LIVE - 1; i >= 0; i--)
        EXPECT_OK(MPI_Comm_free(&live[i]));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
