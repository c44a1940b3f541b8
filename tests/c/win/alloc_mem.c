/* MPI_Alloc_mem/MPI_Free_mem: aligned, writable blocks (size 0 included), the alignment hint,
 * and MPI_ERR_BASE for anything MPI_Free_mem did not get from MPI_Alloc_mem. */
#include "wtest.h"

int main(int argc, char **argv)
{
    char *a = NULL, *b = NULL, *z = NULL, *big = NULL;
    void *keep = (void *)3;
    MPI_Info info;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    EXPECT_OK(MPI_Alloc_mem(1000, MPI_INFO_NULL, &a));
    EXPECT_OK(MPI_Alloc_mem(1000, MPI_INFO_NULL, &b));
    EXPECT_OK(MPI_Alloc_mem(0, MPI_INFO_NULL, &z));
    CHECK(a && b && z && a != b && a != z && b != z, "blocks %p %p %p", (void *)a, (void *)b, (void *)z);
    CHECK(((uintptr_t)a % 64) == 0 && ((uintptr_t)b % 64) == 0, "not aligned to 64: %p %p", (void *)a, (void *)b);
    memset(a, 1, 1000);
    memset(b, 2, 1000);
    CHECK(a[999] == 1 && b[0] == 2, "blocks overlap");

    EXPECT_OK(MPI_Info_create(&info));
    EXPECT_OK(MPI_Info_set(info, "mpi_minimum_memory_alignment", "8192"));
    EXPECT_OK(MPI_Alloc_mem(100, info, &big));
    CHECK(((uintptr_t)big % 8192) == 0, "not aligned to 8192: %p", (void *)big);
    EXPECT_OK(MPI_Info_set(info, "mpi_minimum_memory_alignment", "3000")); /* ignored */
    EXPECT_OK(MPI_Free_mem(big));
    EXPECT_OK(MPI_Alloc_mem(100, info, &big));
    CHECK(((uintptr_t)big % 64) == 0, "not aligned to 64: %p", (void *)big);
    EXPECT_OK(MPI_Info_free(&info));

    EXPECT_ERR(MPI_Alloc_mem(-1, MPI_INFO_NULL, &keep), MPI_ERR_ARG, "MPI_Alloc_mem", "size");
    EXPECT_ERR(MPI_Alloc_mem(10, MPI_INFO_NULL, NULL), MPI_ERR_ARG, "MPI_Alloc_mem", "baseptr");
    EXPECT_ERR(MPI_Alloc_mem(10, (MPI_Info)WTEST_GARBAGE, &keep), MPI_ERR_INFO, "MPI_Alloc_mem", "info");
    EXPECT_ERR(MPI_Alloc_mem((MPI_Aint)1 << 62, MPI_INFO_NULL, &keep), MPI_ERR_NO_MEM, "MPI_Alloc_mem", "size");
    CHECK(keep == (void *)3, "baseptr written on failure");

    EXPECT_OK(MPI_Free_mem(a));
    EXPECT_ERR(MPI_Free_mem(a), MPI_ERR_BASE, "MPI_Free_mem", "base");
    EXPECT_ERR(MPI_Free_mem(b + 1), MPI_ERR_BASE, "MPI_Free_mem", "base");
    {
        int stack;
        EXPECT_ERR(MPI_Free_mem(&stack), MPI_ERR_BASE, "MPI_Free_mem", "base");
    }
    EXPECT_OK(MPI_Free_mem(NULL));
    EXPECT_OK(MPI_Free_mem(b));
    EXPECT_OK(MPI_Free_mem(z));
    EXPECT_OK(MPI_Free_mem(big));

    /* Memory from MPI_Alloc_mem makes a window like any other. */
    {
        MPI_Win win;
        int *mem, *got, flag;
        EXPECT_OK(MPI_Alloc_mem(4 * sizeof(int), MPI_INFO_NULL, &mem));
        EXPECT_OK(MPI_Win_create(mem, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        EXPECT_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &got, &flag));
        CHECK(flag && got == mem, "base %p, expected %p", (void *)got, (void *)mem);
        EXPECT_OK(MPI_Win_free(&win));
        EXPECT_OK(MPI_Free_mem(mem));
    }

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
