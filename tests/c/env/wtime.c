/* MPI_Wtime never goes back and measures a sleep; MPI_Wtick is a plausible resolution. */
#include "wtest.h"
#include <time.h>

int main(int argc, char **argv)
{
    double t0, prev, tick, t1, t2;
    struct timespec ts = {0, 50 * 1000 * 1000};
    int flag = -1, *val = NULL;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    tick = MPI_Wtick();
    CHECK(tick > 0.0 && tick <= 0.01, "MPI_Wtick = %g", tick);

    t0 = prev = MPI_Wtime();
    CHECK(t0 >= 0.0, "MPI_Wtime = %g", t0);
    for (int i = 0; i < 100000; i++) {
        double t = MPI_Wtime();
        if (t < prev) {
            FAIL("MPI_Wtime went back from %.9f to %.9f", prev, t);
            break;
        }
        prev = t;
    }
    t1 = MPI_Wtime();
    nanosleep(&ts, NULL);
    t2 = MPI_Wtime();
    CHECK(t2 - t1 >= 0.049 && t2 - t1 < 2.0, "a 50 ms sleep measured %.6f s", t2 - t1);

    EXPECT_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &val, &flag));
    CHECK_INT(flag, 1);
    if (flag)
        CHECK(*val == 0 || *val == 1, "MPI_WTIME_IS_GLOBAL = %d", *val);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
