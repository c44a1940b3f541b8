/* Values the standard defines where a query has no ordinary answer: MPI_Get_count and
 * MPI_Get_elements of a status whose count does not fit in an int give MPI_UNDEFINED and
 * succeed (the _c forms give the count), and MPI_DATATYPE_NULL has a name. */
#include <limits.h>
#include "wtest.h"

int main(int argc, char **argv)
{
    MPI_Status st;
    MPI_Datatype pair;
    MPI_Count big = (MPI_Count)INT_MAX + 10, c = -1;
    int count = 0, len = -1;
    char name[MPI_MAX_OBJECT_NAME];

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    /* INT_MAX + 10 bytes. */
    EXPECT_OK(MPI_Status_set_elements_x(&st, MPI_BYTE, big));
    EXPECT_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK_INT(count, MPI_UNDEFINED);
    count = 0;
    EXPECT_OK(MPI_Get_elements(&st, MPI_BYTE, &count));
    CHECK_INT(count, MPI_UNDEFINED);
    EXPECT_OK(MPI_Get_count_c(&st, MPI_BYTE, &c));
    CHECK_INT(c, big);
    EXPECT_OK(MPI_Get_elements_c(&st, MPI_BYTE, &c));
    CHECK_INT(c, big);
    /* The same bytes in 2-byte elements fit: an ordinary count. */
    EXPECT_OK(MPI_Type_contiguous(2, MPI_BYTE, &pair));
    EXPECT_OK(MPI_Type_commit(&pair));
    EXPECT_OK(MPI_Status_set_elements_x(&st, MPI_BYTE, 2 * (MPI_Count)(INT_MAX / 2 + 5)));
    EXPECT_OK(MPI_Get_count(&st, pair, &count));
    CHECK_INT(count, INT_MAX / 2 + 5);
    /* ...but their basic elements (bytes) do not. */
    EXPECT_OK(MPI_Get_elements(&st, pair, &count));
    CHECK_INT(count, MPI_UNDEFINED);
    EXPECT_OK(MPI_Type_free(&pair));

    strcpy(name, "unchanged");
    EXPECT_OK(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len));
    CHECK_STR(name, "MPI_DATATYPE_NULL");
    CHECK_INT(len, (int)strlen("MPI_DATATYPE_NULL"));
    EXPECT_OK(MPI_Type_get_name(MPI_INT, name, &len));
    CHECK_STR(name, "MPI_INT");

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
