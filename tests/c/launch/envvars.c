/* The launcher passes the environment to every rank. */
#include "wtest.h"

int main(int argc, char **argv)
{
    const char *v = getenv("WTEST_PASSED");
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    CHECK(v && !strcmp(v, "a value with spaces"), "WTEST_PASSED = %s", v ? v : "(unset)");
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
