/* MPI_Aint_add and MPI_Aint_diff are address arithmetic. */
#include "wtest.h"

int main(int argc, char **argv)
{
    double a[16];
    MPI_Aint base = (MPI_Aint)(intptr_t)&a[0];
    MPI_Aint at5 = (MPI_Aint)(intptr_t)&a[5];

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    CHECK_INT(MPI_Aint_add(base, 5 * sizeof(double)), at5);
    CHECK_INT(MPI_Aint_diff(at5, base), 5 * sizeof(double));
    CHECK_INT(MPI_Aint_diff(base, at5), -(MPI_Aint)(5 * sizeof(double)));
    CHECK_INT(MPI_Aint_add(at5, -(MPI_Aint)(5 * sizeof(double))), base);
    CHECK_INT(MPI_Aint_add(0, 0), 0);
    CHECK_INT(MPI_Aint_diff(100, 100), 0);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
