/* Versions: MPI 5.0, ABI 1.0, the ABI info keys, a library version that names Weft. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int v = -1, sv = -1, len = -1, nkeys = -1, flag = -1, buflen;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    char value[64];
    MPI_Info info = MPI_INFO_NULL;
    const char *keys[] = {"mpi_aint_size", "mpi_count_size", "mpi_offset_size"};
    const int sizes[] = {(int)sizeof(MPI_Aint), (int)sizeof(MPI_Count), (int)sizeof(MPI_Offset)};

    CHECK_INT(MPI_VERSION, 5);
    CHECK_INT(MPI_SUBVERSION, 0);
    CHECK_INT(MPI_ABI_VERSION, 1);
    CHECK_INT(MPI_ABI_SUBVERSION, 0);

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    EXPECT_OK(MPI_Get_version(&v, &sv));
    CHECK_INT(v, 5);
    CHECK_INT(sv, 0);
    v = sv = -1;
    EXPECT_OK(MPI_Abi_get_version(&v, &sv));
    CHECK_INT(v, 1);
    CHECK_INT(sv, 0);

    memset(lib, 'x', sizeof lib);
    EXPECT_OK(MPI_Get_library_version(lib, &len));
    CHECK(strncmp(lib, "Weft", 4) == 0, "library version \"%.100s\" does not start with Weft", lib);
    CHECK(len > 4 && len < MPI_MAX_LIBRARY_VERSION_STRING, "resultlen %d", len);
    CHECK_INT(len, strlen(lib));

    EXPECT_OK(MPI_Abi_get_info(&info));
    CHECK(info != MPI_INFO_NULL, "MPI_Abi_get_info gave MPI_INFO_NULL");
    EXPECT_OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys >= 3, "MPI_Abi_get_info has %d keys", nkeys);
    for (int i = 0; i < 3; i++) {
        buflen = sizeof value;
        flag = -1;
        memset(value, 0, sizeof value);
        EXPECT_OK(MPI_Info_get_string(info, keys[i], &buflen, value, &flag));
        CHECK(flag == 1, "key %s missing", keys[i]);
        CHECK(atoi(value) == sizes[i] && atoi(value) == 8, "%s = \"%s\", expected %d", keys[i],
              value, sizes[i]);
        CHECK_INT(buflen, (int)strlen(value) + 1);
    }
    /* Every key the object lists can be read back. */
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY];
        EXPECT_OK(MPI_Info_get_nthkey(info, i, key));
        buflen = 0;
        flag = -1;
        EXPECT_OK(MPI_Info_get_string(info, key, &buflen, NULL, &flag));
        CHECK(flag == 1 && buflen >= 1, "key %d \"%s\": flag %d buflen %d", i, key, flag, buflen);
    }
    /* Each call gives a new object the caller owns. */
    {
        MPI_Info second = MPI_INFO_NULL;
        EXPECT_OK(MPI_Abi_get_info(&second));
        CHECK(second != info, "MPI_Abi_get_info returned the same handle twice");
        EXPECT_OK(MPI_Info_free(&second));
        CHECK(second == MPI_INFO_NULL, "MPI_Info_free did not null the handle");
    }
    EXPECT_OK(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL, "MPI_Info_free did not null the handle");

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
