/* MPI_Abi_get_fortran_info / _booleans answer Weft's Fortran facts (4-byte LOGICAL, INTEGER and
 * REAL, 8-byte DOUBLE PRECISION, .TRUE. = 1, .FALSE. = 0); the setters accept agreeing values
 * and refuse others with MPI_ERR_ABI naming the function. */
#include "wtest.h"

static void check_key(MPI_Info info, const char *key, const char *expected)
{
    char value[64] = "";
    int buflen = sizeof value, flag = 0;
    EXPECT_OK(MPI_Info_get_string(info, key, &buflen, value, &flag));
    CHECK(flag == 1, "key %s missing", key);
    CHECK(strcmp(value, expected) == 0, "%s = \"%s\", expected \"%s\"", key, value, expected);
}

int main(int argc, char **argv)
{
    MPI_Info info = MPI_INFO_NULL, mine = MPI_INFO_NULL;
    int32_t t = -7, f = -7;
    int is_set = -1;

    MPI_Init(&argc, &argv);
    wtest_errors_return();

    EXPECT_OK(MPI_Abi_get_fortran_info(&info));
    CHECK(info != MPI_INFO_NULL, "MPI_Abi_get_fortran_info gave MPI_INFO_NULL");
    check_key(info, "mpi_logical_size", "4");
    check_key(info, "mpi_integer_size", "4");
    check_key(info, "mpi_real_size", "4");
    check_key(info, "mpi_double_precision_size", "8");
    check_key(info, "mpi_integer8_supported", "true");
    check_key(info, "mpi_real16_supported", "true");
    /* The info says what it is: setting it back agrees. */
    EXPECT_OK(MPI_Abi_set_fortran_info(info));
    EXPECT_OK(MPI_Info_free(&info));

    EXPECT_OK(MPI_Abi_get_fortran_booleans(4, &t, &f, &is_set));
    CHECK_INT(is_set, 1);
    CHECK_INT(t, 1);
    CHECK_INT(f, 0);
    EXPECT_OK(MPI_Abi_set_fortran_booleans(4, &t, &f));
    EXPECT_ERR(MPI_Abi_get_fortran_booleans(8, &t, &f, &is_set), MPI_ERR_ABI,
               "MPI_Abi_get_fortran_booleans", "logical_size");
    t = -1; /* another compiler's .TRUE. */
    EXPECT_ERR(MPI_Abi_set_fortran_booleans(4, &t, &f), MPI_ERR_ABI, "MPI_Abi_set_fortran_booleans",
               ".TRUE.");
    EXPECT_ERR(MPI_Abi_get_fortran_booleans(4, NULL, &f, &is_set), MPI_ERR_ARG,
               "MPI_Abi_get_fortran_booleans", "logical_true");

    /* A different INTEGER size, or a missing size, is refused. */
    EXPECT_OK(MPI_Info_create(&mine));
    EXPECT_OK(MPI_Info_set(mine, "mpi_logical_size", "4"));
    EXPECT_OK(MPI_Info_set(mine, "mpi_integer_size", "8"));
    EXPECT_OK(MPI_Info_set(mine, "mpi_real_size", "4"));
    EXPECT_OK(MPI_Info_set(mine, "mpi_double_precision_size", "8"));
    EXPECT_ERR(MPI_Abi_set_fortran_info(mine), MPI_ERR_ABI, "MPI_Abi_set_fortran_info",
               "mpi_integer_size");
    EXPECT_OK(MPI_Info_delete(mine, "mpi_integer_size"));
    EXPECT_ERR(MPI_Abi_set_fortran_info(mine), MPI_ERR_ABI, "MPI_Abi_set_fortran_info",
               "mpi_integer_size");
    EXPECT_OK(MPI_Info_set(mine, "mpi_integer_size", "4"));
    EXPECT_OK(MPI_Abi_set_fortran_info(mine));
    EXPECT_OK(MPI_Info_free(&mine));

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
