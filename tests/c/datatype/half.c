/* MPICH's half-precision types MPIX_C_FLOAT16 (IEEE binary16) and MPIX_BFLOAT16: sizes,
 * names, external32 (big-endian, 2 bytes), and SUM/PROD/MIN/MAX reductions computed in
 * the type's own precision (bit patterns, so no compiler _Float16 is needed). */
#include "wtest.h"
#include <stdint.h>
#include <string.h>

#define N 4

static void check_bits(const char *what, const uint16_t *got, uint16_t want)
{
    for (int i = 0; i < N; i++)
        if (got[i] != want) {
            FAIL("%s: [%d] = 0x%04x, expected 0x%04x", what, i, got[i], want);
            return;
        }
}

int main(int argc, char **argv)
{
    int rank, size, sz = 0;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    EXPECT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    EXPECT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    MPI_Datatype types[2] = {MPIX_C_FLOAT16, MPIX_BFLOAT16};
    const char *names[2] = {"MPIX_C_FLOAT16", "MPIX_BFLOAT16"};
    for (int t = 0; t < 2; t++) {
        MPI_Aint lb, extent, ext32 = 0;
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        EXPECT_OK(MPI_Type_size(types[t], &sz));
        CHECK_INT(sz, 2);
        EXPECT_OK(MPI_Type_get_extent(types[t], &lb, &extent));
        CHECK_INT((int)extent, 2);
        EXPECT_OK(MPI_Type_get_name(types[t], name, &len));
        CHECK_STR(name, names[t]);
        EXPECT_OK(MPI_Pack_external_size("external32", 3, types[t], &ext32));
        CHECK_INT((int)ext32, 6);
        uint16_t v[2] = {0x3c00, 0xabcd}, back[2] = {0, 0};
        unsigned char packed[4];
        MPI_Aint pos = 0;
        EXPECT_OK(MPI_Pack_external("external32", v, 2, types[t], packed, 4, &pos));
        CHECK_INT((int)pos, 4);
        CHECK(packed[0] == 0x3c && packed[1] == 0x00 && packed[2] == 0xab && packed[3] == 0xcd,
              "external32 is big-endian: %02x %02x %02x %02x", packed[0], packed[1], packed[2], packed[3]);
        pos = 0;
        EXPECT_OK(MPI_Unpack_external("external32", packed, 4, &pos, back, 2, types[t]));
        CHECK(back[0] == v[0] && back[1] == v[1], "external32 round trip");
    }

    /* MPICH's type_float16 test: bfloat16 1.0 summed over the ranks. */
    uint16_t buf[N], out[N];
    uint16_t one_bf = 0x3f80, one_h = 0x3c00;
    uint16_t size_bf[9] = {0, 0x3f80, 0x4000, 0x4040, 0x4080, 0x40a0, 0x40c0, 0x40e0, 0x4100};
    uint16_t size_h[9] = {0, 0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700, 0x4800};
    for (int i = 0; i < N; i++)
        buf[i] = one_bf;
    EXPECT_OK(MPI_Allreduce(MPI_IN_PLACE, buf, N, MPIX_BFLOAT16, MPI_SUM, MPI_COMM_WORLD));
    if (size <= 8)
        check_bits("bfloat16 SUM of 1.0", buf, size_bf[size]);
    for (int i = 0; i < N; i++)
        buf[i] = one_h;
    EXPECT_OK(MPI_Allreduce(MPI_IN_PLACE, buf, N, MPIX_C_FLOAT16, MPI_SUM, MPI_COMM_WORLD));
    if (size <= 8)
        check_bits("float16 SUM of 1.0", buf, size_h[size]);

    /* PROD of 2.0: 2^size. */
    for (int i = 0; i < N; i++)
        buf[i] = 0x4000;
    EXPECT_OK(MPI_Allreduce(buf, out, N, MPIX_BFLOAT16, MPI_PROD, MPI_COMM_WORLD));
    check_bits("bfloat16 PROD of 2.0", out, (uint16_t)((127 + size) << 7));
    EXPECT_OK(MPI_Allreduce(buf, out, N, MPIX_C_FLOAT16, MPI_PROD, MPI_COMM_WORLD));
    check_bits("float16 PROD of 2.0", out, (uint16_t)((15 + size) << 10));

    /* MIN/MAX with signs: rank r holds -(r+1) on odd ranks, r+1 on even ones, compared as
     * numbers, not bit patterns (negative values have the larger patterns). */
    uint16_t mag_bf[9] = {0, 0x3f80, 0x4000, 0x4040, 0x4080, 0x40a0, 0x40c0, 0x40e0, 0x4100};
    uint16_t mag_h[9] = {0, 0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700, 0x4800};
    if (size <= 8) {
        int most_neg = size >= 2 ? (size % 2 == 0 ? size : size - 1) : 0;
        int most_pos = size % 2 == 1 ? size : size - 1;
        for (int i = 0; i < N; i++)
            buf[i] = mag_bf[rank + 1] | ((rank % 2) ? 0x8000 : 0);
        EXPECT_OK(MPI_Allreduce(buf, out, N, MPIX_BFLOAT16, MPI_MIN, MPI_COMM_WORLD));
        if (most_neg)
            check_bits("bfloat16 MIN", out, mag_bf[most_neg] | 0x8000);
        EXPECT_OK(MPI_Allreduce(buf, out, N, MPIX_BFLOAT16, MPI_MAX, MPI_COMM_WORLD));
        check_bits("bfloat16 MAX", out, mag_bf[most_pos]);
        for (int i = 0; i < N; i++)
            buf[i] = mag_h[rank + 1] | ((rank % 2) ? 0x8000 : 0);
        EXPECT_OK(MPI_Allreduce(buf, out, N, MPIX_C_FLOAT16, MPI_MIN, MPI_COMM_WORLD));
        if (most_neg)
            check_bits("float16 MIN", out, mag_h[most_neg] | 0x8000);
        EXPECT_OK(MPI_Allreduce(buf, out, N, MPIX_C_FLOAT16, MPI_MAX, MPI_COMM_WORLD));
        check_bits("float16 MAX", out, mag_h[most_pos]);
    }

    /* Rounding in the type's precision (two ranks): 256 + 1 in bfloat16 is a tie between
     * 256 and 258, to even: 256; in binary16, 2048 + 1 likewise gives 2048. */
    if (size == 2) {
        for (int i = 0; i < N; i++)
            buf[i] = rank == 0 ? 0x4380 : 0x3f80;
        EXPECT_OK(MPI_Allreduce(buf, out, N, MPIX_BFLOAT16, MPI_SUM, MPI_COMM_WORLD));
        check_bits("bfloat16 256 + 1", out, 0x4380);
        for (int i = 0; i < N; i++)
            buf[i] = rank == 0 ? 0x6800 : 0x3c00;
        EXPECT_OK(MPI_Allreduce(buf, out, N, MPIX_C_FLOAT16, MPI_SUM, MPI_COMM_WORLD));
        check_bits("float16 2048 + 1", out, 0x6800);
        /* 1 + 2^-7 twice is exact in bfloat16: 2 + 2^-6. */
        for (int i = 0; i < N; i++)
            buf[i] = 0x3f81;
        EXPECT_OK(MPI_Allreduce(buf, out, N, MPIX_BFLOAT16, MPI_SUM, MPI_COMM_WORLD));
        check_bits("bfloat16 (1 + 2^-7) * 2", out, 0x4001);
    }

    /* Not for logical or bitwise ops. */
    wtest_errors_return();
    EXPECT_CLASS(MPI_Allreduce(buf, out, N, MPIX_BFLOAT16, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
