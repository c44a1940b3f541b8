/* Started without a launcher: a world of size 1 with the usual attributes. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int size = -1, rank = -1, flag = 0, *val = NULL;
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = -1;

    EXPECT_OK(MPI_Init(&argc, &argv));
    EXPECT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    EXPECT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_INT(size, 1);
    CHECK_INT(rank, 0);
    EXPECT_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &val, &flag));
    if (flag)
        CHECK(*val >= 1, "UNIVERSE_SIZE %d", *val);
    EXPECT_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &val, &flag));
    if (flag)
        CHECK_INT(*val, 0);
    EXPECT_OK(MPI_Get_processor_name(name, &len));
    CHECK(len > 0, "processor name empty");
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
