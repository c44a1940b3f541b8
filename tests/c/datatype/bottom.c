/* MPI_BOTTOM as the typed buffer of MPI_Pack/MPI_Unpack and their external32 forms: a derived
 * type built from absolute addresses (MPI_Get_address) packs from and unpacks to memory
 * through a null base; a predefined type with a null buffer is still an error. */
#include "wtest.h"
#include <string.h>

int main(int argc, char **argv)
{
    int a[3] = {11, 12, 13};
    double d = 2.5;
    int blocks[2] = {3, 1};
    MPI_Aint displs[2];
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, t;
    char packed[64], ext[64];
    int pos = 0, size = 0;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    MPI_Get_address(a, &displs[0]);
    MPI_Get_address(&d, &displs[1]);
    EXPECT_OK(MPI_Type_create_struct(2, blocks, displs, types, &t));
    EXPECT_OK(MPI_Type_commit(&t));
    EXPECT_OK(MPI_Pack_size(1, t, MPI_COMM_WORLD, &size));
    CHECK(size >= (int)(3 * sizeof(int) + sizeof(double)), "pack size %d", size);

    EXPECT_OK(MPI_Pack(MPI_BOTTOM, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK_INT(pos, (int)(3 * sizeof(int) + sizeof(double)));
    int got[3];
    double gd;
    memcpy(got, packed, sizeof got);
    memcpy(&gd, packed + sizeof got, sizeof gd);
    CHECK_INT(got[0], 11);
    CHECK_INT(got[2], 13);
    CHECK(gd == 2.5, "packed double %g", gd);

    /* Unpack into the same absolute locations after clearing them. */
    a[0] = a[1] = a[2] = 0;
    d = 0;
    pos = 0;
    EXPECT_OK(MPI_Unpack(packed, sizeof packed, &pos, MPI_BOTTOM, 1, t, MPI_COMM_WORLD));
    CHECK_INT(a[0], 11);
    CHECK_INT(a[1], 12);
    CHECK_INT(a[2], 13);
    CHECK(d == 2.5, "unpacked double %g", d);

    /* external32 from and to MPI_BOTTOM. */
    MPI_Aint epos = 0;
    EXPECT_OK(MPI_Pack_external("external32", MPI_BOTTOM, 1, t, ext, sizeof ext, &epos));
    CHECK_INT((int)epos, 20);
    CHECK_INT((unsigned char)ext[3], 11); /* big-endian int */
    a[1] = 0;
    d = 0;
    epos = 0;
    EXPECT_OK(MPI_Unpack_external("external32", ext, sizeof ext, &epos, MPI_BOTTOM, 1, t));
    CHECK_INT(a[1], 12);
    CHECK(d == 2.5, "external32 double %g", d);

    pos = 0;
    EXPECT_ERR(MPI_Pack(NULL, 1, MPI_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD), MPI_ERR_ARG, "MPI_Pack", "inbuf");
    pos = 0;
    EXPECT_ERR(MPI_Unpack(packed, sizeof packed, &pos, NULL, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_ARG, "MPI_Unpack", "outbuf");
    EXPECT_OK(MPI_Type_free(&t));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
