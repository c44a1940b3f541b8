/* MPI_Comm_size/MPI_Comm_rank on MPI_COMM_WORLD and MPI_COMM_SELF. WTEST_NP is the number of
 * ranks the manifest launches; each rank prints "rank R of N" and the runner checks that the
 * ranks are distinct (expect-ranks). */
#include "wtest.h"

int main(int argc, char **argv)
{
    int size = -1, rank = -1, ssize = -1, srank = -1;
    int np = wtest_env_int("WTEST_NP", -1);

    EXPECT_OK(MPI_Init(&argc, &argv));
    EXPECT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    EXPECT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    wtest_rank = rank;
    CHECK_INT(size, np);
    CHECK(rank >= 0 && rank < size, "rank %d of %d", rank, size);
    EXPECT_OK(MPI_Comm_size(MPI_COMM_SELF, &ssize));
    EXPECT_OK(MPI_Comm_rank(MPI_COMM_SELF, &srank));
    CHECK_INT(ssize, 1);
    CHECK_INT(srank, 0);
    /* Asking again gives the same answers. */
    for (int i = 0; i < 1000; i++) {
        int s2 = -1, r2 = -1;
        MPI_Comm_size(MPI_COMM_WORLD, &s2);
        MPI_Comm_rank(MPI_COMM_WORLD, &r2);
        if (s2 != size || r2 != rank) {
            FAIL("call %d: size %d rank %d, first %d %d", i, s2, r2, size, rank);
            break;
        }
    }
    printf("rank %d of %d\n", rank, size);
    fflush(stdout);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
