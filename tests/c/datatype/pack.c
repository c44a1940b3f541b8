/* MPI_Pack / MPI_Unpack / MPI_Pack_size with derived types, positions, external32. */
#include <string.h>
#include "wtest.h"

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    /* A column of a 5x4 int matrix plus a struct with gaps. */
    int m[5][4];
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++)
            m[i][j] = 10 * i + j;
    MPI_Datatype col;
    EXPECT_OK(MPI_Type_vector(5, 1, 4, MPI_INT, &col));
    char buf[256];
    int pos = 0, size = 0;
    EXPECT_ERR(MPI_Pack(m, 1, col, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Pack",
               "not committed");
    EXPECT_OK(MPI_Type_commit(&col));
    EXPECT_OK(MPI_Pack_size(2, col, MPI_COMM_WORLD, &size));
    CHECK_INT(size, 40);
    EXPECT_OK(MPI_Pack(&m[0][1], 1, col, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK_INT(pos, 20);
    struct { short s; double d; } pr = {7, 2.5};
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    MPI_Datatype ts[2] = {MPI_SHORT, MPI_DOUBLE}, st;
    EXPECT_OK(MPI_Type_create_struct(2, bl, d, ts, &st));
    EXPECT_OK(MPI_Type_commit(&st));
    EXPECT_OK(MPI_Pack(&pr, 1, st, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK_INT(pos, 30);
    int *ints = (int *)buf;
    for (int i = 0; i < 5; i++)
        CHECK_INT(ints[i], 10 * i + 1);

    int out[5][4];
    memset(out, 0, sizeof out);
    struct { short s; double d; } pr2 = {0, 0};
    pos = 0;
    EXPECT_OK(MPI_Unpack(buf, 30, &pos, &out[0][2], 1, col, MPI_COMM_WORLD));
    EXPECT_OK(MPI_Unpack(buf, 30, &pos, &pr2, 1, st, MPI_COMM_WORLD));
    CHECK_INT(pos, 30);
    for (int i = 0; i < 5; i++) {
        CHECK_INT(out[i][2], 10 * i + 1);
        CHECK_INT(out[i][1], 0);
    }
    CHECK(pr2.s == 7 && pr2.d == 2.5, "struct unpacked");

    /* Errors: no room, negative counts and positions, input too short. */
    pos = 25;
    EXPECT_ERR(MPI_Pack(m, 1, col, buf, 40, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE, "MPI_Pack", "outsize");
    CHECK_INT(pos, 25);
    pos = 0;
    EXPECT_ERR(MPI_Pack(m, -1, col, buf, 40, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Pack", "incount");
    pos = -1;
    EXPECT_ERR(MPI_Pack(m, 1, col, buf, 40, &pos, MPI_COMM_WORLD), MPI_ERR_ARG, "MPI_Pack", "position");
    pos = 20;
    EXPECT_ERR(MPI_Unpack(buf, 30, &pos, out, 1, col, MPI_COMM_WORLD), MPI_ERR_TRUNCATE, "MPI_Unpack", "insize");
    pos = 0;
    EXPECT_ERR(MPI_Pack(m, 1, col, buf, 40, &pos, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_Pack", "comm");

    /* external32: big-endian, MPI_LONG is 4 bytes. */
    int iv[2] = {0x01020304, -2};
    long lv = -5;
    MPI_Aint xs, xp = 0;
    unsigned char xb[16];
    EXPECT_OK(MPI_Pack_external_size("external32", 2, MPI_INT, &xs));
    CHECK_INT(xs, 8);
    EXPECT_OK(MPI_Pack_external("external32", iv, 2, MPI_INT, xb, sizeof xb, &xp));
    CHECK_INT(xp, 8);
    CHECK(xb[0] == 1 && xb[1] == 2 && xb[2] == 3 && xb[3] == 4, "big-endian int");
    CHECK(xb[4] == 0xff && xb[7] == 0xfe, "big-endian -2");
    EXPECT_OK(MPI_Pack_external_size("external32", 1, MPI_LONG, &xs));
    CHECK_INT(xs, 4);
    EXPECT_OK(MPI_Pack_external("external32", &lv, 1, MPI_LONG, xb, sizeof xb, &xp));
    CHECK_INT(xp, 12);
    int iv2[2];
    long lv2 = 0;
    xp = 0;
    EXPECT_OK(MPI_Unpack_external("external32", xb, 12, &xp, iv2, 2, MPI_INT));
    EXPECT_OK(MPI_Unpack_external("external32", xb, 12, &xp, &lv2, 1, MPI_LONG));
    CHECK(iv2[0] == iv[0] && iv2[1] == -2 && lv2 == -5, "external32 round trip");
    xp = 0;
    EXPECT_CLASS(MPI_Pack_external("native", iv, 2, MPI_INT, xb, sizeof xb, &xp), MPI_ERR_UNSUPPORTED_DATAREP);
    double dv = 1.0, dv2 = 0;
    xp = 0;
    EXPECT_OK(MPI_Pack_external("external32", &dv, 1, MPI_DOUBLE, xb, sizeof xb, &xp));
    CHECK(xb[0] == 0x3f && xb[1] == 0xf0 && xb[7] == 0, "big-endian double");
    xp = 0;
    EXPECT_OK(MPI_Unpack_external("external32", xb, 8, &xp, &dv2, 1, MPI_DOUBLE));
    CHECK(dv2 == 1.0, "double round trip");

    MPI_Type_free(&col);
    MPI_Type_free(&st);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
