/* MPI_Status_set_elements(_x/_c) and MPI_Get_elements on types of billions of elements: the
 * byte count comes from the type's structure at once (this used to walk every element). */
#include "wtest.h"
#include <time.h>

int main(int argc, char **argv)
{
    MPI_Datatype block, vec, st;
    MPI_Status status;
    MPI_Count n;
    int count;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    clock_t t0 = clock();

    /* 2^20 ints per block, 2^12 blocks strided: 2^32 ints, 16 GiB of data. */
    EXPECT_OK(MPI_Type_contiguous(1 << 20, MPI_INT, &block));
    EXPECT_OK(MPI_Type_vector(1 << 12, 1, 2, block, &vec));
    EXPECT_OK(MPI_Type_commit(&vec));
    EXPECT_OK(MPI_Status_set_elements_x(&status, vec, (MPI_Count)1 << 32));
    EXPECT_OK(MPI_Get_elements_x(&status, vec, &n));
    CHECK(n == (MPI_Count)1 << 32, "elements %lld", (long long)n);
    EXPECT_OK(MPI_Get_elements_x(&status, MPI_INT, &n));
    CHECK(n == (MPI_Count)1 << 32, "ints %lld", (long long)n);

    /* A partial instance: 3 ints short of one instance. */
    EXPECT_OK(MPI_Status_set_elements_c(&status, vec, ((MPI_Count)1 << 32) - 3));
    EXPECT_OK(MPI_Get_elements_c(&status, MPI_INT, &n));
    CHECK(n == ((MPI_Count)1 << 32) - 3, "ints %lld", (long long)n);
    EXPECT_OK(MPI_Get_elements_c(&status, vec, &n));
    CHECK(n == ((MPI_Count)1 << 32) - 3, "elements %lld", (long long)n);
    EXPECT_OK(MPI_Get_count(&status, vec, &count));
    CHECK_INT(count, MPI_UNDEFINED);

    /* A struct of a double and the vector: set 2 elements past two instances. */
    int lens[2] = {1, 1};
    MPI_Aint disps[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_DOUBLE, vec};
    EXPECT_OK(MPI_Type_create_struct(2, lens, disps, types, &st));
    EXPECT_OK(MPI_Type_commit(&st));
    MPI_Count per = ((MPI_Count)1 << 32) + 1;
    EXPECT_OK(MPI_Status_set_elements_x(&status, st, 2 * per + 2));
    EXPECT_OK(MPI_Get_elements_x(&status, MPI_BYTE, &n));
    CHECK(n == 2 * (8 + ((MPI_Count)1 << 34)) + 8 + 4, "bytes %lld", (long long)n);
    EXPECT_OK(MPI_Get_elements_x(&status, st, &n));
    CHECK(n == 2 * per + 2, "elements %lld", (long long)n);

    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    CHECK(secs < 2.0, "took %.2f s of CPU", secs);
    EXPECT_OK(MPI_Type_free(&st));
    EXPECT_OK(MPI_Type_free(&vec));
    EXPECT_OK(MPI_Type_free(&block));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
