/* external32 files: written through an external32 view, the bytes on disk are big-endian
 * with the standard's sizes (MPI_LONG in 4 bytes), checked with plain POSIX reads; reading
 * them back (also through a derived memory type) gives the values; get_type_extent reports
 * the file sizes. A representation registered by the program converts through its
 * callbacks. */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "wtest.h"

static int conversions;

static int to_file(void *user, MPI_Datatype t, int count, void *filebuf, MPI_Offset pos, void *x)
{
    (void)t; (void)pos; (void)x;
    for (int i = 0; i < count; i++)
        ((int *)filebuf)[i] = ((int *)user)[i] ^ 0x5a5a5a5a;
    conversions++;
    return MPI_SUCCESS;
}

static int from_file(void *user, MPI_Datatype t, int count, void *filebuf, MPI_Offset pos, void *x)
{
    (void)t; (void)pos; (void)x;
    for (int i = 0; i < count; i++)
        ((int *)user)[i] = ((int *)filebuf)[i] ^ 0x5a5a5a5a;
    conversions++;
    return MPI_SUCCESS;
}

static int extent(MPI_Datatype t, MPI_Aint *e, void *x)
{
    (void)x;
    return MPI_Type_get_extent(t, &(MPI_Aint){0}, e);
}

int main(int argc, char **argv)
{
    char path[200];
    MPI_File fh;
    MPI_Status st;
    MPI_Aint ext;
    unsigned char raw[64];
    int ints[3] = {1, -2, 0x01020304}, iback[3];
    long longs[2] = {-3, 0x11223344}, lback[2];
    double d = 1.5, dback;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    snprintf(path, sizeof path, "/tmp/weft_io_e32.%d", (int)getpid());
    EXPECT_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    EXPECT_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    EXPECT_OK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
    CHECK_INT(ext, 4);
    EXPECT_OK(MPI_File_write(fh, ints, 3, MPI_INT, &st));
    EXPECT_OK(MPI_File_write(fh, longs, 2, MPI_LONG, &st));
    EXPECT_OK(MPI_File_write(fh, &d, 1, MPI_DOUBLE, &st));
    {
        int fd = open(path, O_RDONLY);
        ssize_t n = pread(fd, raw, sizeof raw, 0);
        close(fd);
        CHECK_INT(n, 12 + 8 + 8);
        static const unsigned char want[20] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 1, 2, 3, 4,
                                               0xff, 0xff, 0xff, 0xfd, 0x11, 0x22, 0x33, 0x44};
        CHECK(memcmp(raw, want, sizeof want) == 0, "external32 bytes differ");
        CHECK(raw[20] == 0x3f && raw[21] == 0xf8, "double not big-endian: %02x %02x", raw[20], raw[21]);
    }
    EXPECT_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    EXPECT_OK(MPI_File_read(fh, iback, 3, MPI_INT, &st));
    EXPECT_OK(MPI_File_read(fh, lback, 2, MPI_LONG, &st));
    EXPECT_OK(MPI_File_read(fh, &dback, 1, MPI_DOUBLE, &st));
    CHECK(memcmp(ints, iback, sizeof ints) == 0, "ints differ");
    CHECK(lback[0] == -3 && lback[1] == 0x11223344, "longs differ: %ld %ld", lback[0], lback[1]);
    CHECK(dback == 1.5, "double differs");
    /* A derived memory type: every other int. */
    {
        MPI_Datatype v;
        int wide[6] = {0};
        MPI_Type_vector(3, 1, 2, MPI_INT, &v);
        MPI_Type_commit(&v);
        EXPECT_OK(MPI_File_read_at(fh, 0, wide, 1, v, &st));
        CHECK(wide[0] == 1 && wide[2] == -2 && wide[4] == 0x01020304 && wide[1] == 0,
              "strided external32 read: %d %d %d", wide[0], wide[2], wide[4]);
        MPI_Type_free(&v);
    }
    EXPECT_OK(MPI_File_close(&fh));

    /* A registered representation. */
    EXPECT_OK(MPI_Register_datarep("weft-xor", from_file, to_file, extent, NULL));
    EXPECT_CLASS(MPI_Register_datarep("weft-xor", from_file, to_file, extent, NULL),
                 MPI_ERR_DUP_DATAREP);
    EXPECT_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    EXPECT_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "weft-xor", MPI_INFO_NULL));
    EXPECT_OK(MPI_File_write_at(fh, 0, ints, 3, MPI_INT, &st));
    EXPECT_OK(MPI_File_read_at(fh, 0, iback, 3, MPI_INT, &st));
    CHECK(memcmp(ints, iback, sizeof ints) == 0, "user representation round trip");
    CHECK(conversions == 2, "conversion functions ran %d times", conversions);
    {
        int fd = open(path, O_RDONLY), raw0 = 0;
        CHECK_INT(pread(fd, &raw0, 4, 0), 4);
        close(fd);
        CHECK_INT(raw0, 1 ^ 0x5a5a5a5a);
    }
    {
        char rep[MPI_MAX_DATAREP_STRING];
        MPI_Offset disp;
        MPI_Datatype e, f;
        EXPECT_OK(MPI_File_get_view(fh, &disp, &e, &f, rep));
        CHECK_STR(rep, "weft-xor");
        CHECK(e == MPI_INT && f == MPI_INT, "view types");
    }
    EXPECT_OK(MPI_File_close(&fh));
    EXPECT_OK(MPI_File_delete(path, MPI_INFO_NULL));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
