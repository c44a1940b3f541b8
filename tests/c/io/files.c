/* Opening and managing files: access modes (DELETE_ON_CLOSE, EXCL, APPEND, SEQUENTIAL,
 * UNIQUE_OPEN), sizes, hints, atomicity, groups, errhandlers (files default to
 * MPI_ERRORS_RETURN), and the error classes of bad cases with messages naming the file. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wtest.h"

static int rank, nranks, handler_calls;

static void on_error(MPI_File *fh, int *code, ...)
{
    (void)fh;
    if (*code != MPI_SUCCESS)
        handler_calls++;
}

static int exists(const char *p)
{
    struct stat s;
    return stat(p, &s) == 0;
}

int main(int argc, char **argv)
{
    char path[200], other[220], msg[MPI_MAX_ERROR_STRING];
    MPI_File fh;
    MPI_Status st;
    MPI_Offset size;
    MPI_Info info;
    MPI_Errhandler eh;
    MPI_Group g, wg;
    int len, amode, flag, cmp, data[4] = {1, 2, 3, 4}, back[4];
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (rank == 0)
        snprintf(path, sizeof path, "/tmp/weft_io_files.%d", (int)getpid());
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(other, sizeof other, "%s.missing", path);

    /* Files default to MPI_ERRORS_RETURN (the communicators keep ERRORS_ARE_FATAL). */
    EXPECT_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "default file errhandler is not MPI_ERRORS_RETURN");
    int rc = MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    EXPECT_CLASS(rc, MPI_ERR_NO_SUCH_FILE);
    MPI_Error_string(rc, msg, &len);
    CHECK_CONTAINS(msg, "MPI_File_open");
    CHECK_CONTAINS(msg, other);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE,
                               MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_WRONLY,
                               MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL,
                               MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, "/tmp", MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                 MPI_ERR_BAD_FILE);
    EXPECT_CLASS(MPI_File_delete(other, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    EXPECT_CLASS(MPI_File_get_size(MPI_FILE_NULL, &size), MPI_ERR_FILE);

    /* Create exclusively; a second exclusive create fails everywhere. */
    EXPECT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR |
                            MPI_MODE_UNIQUE_OPEN, MPI_INFO_NULL, &fh));
    EXPECT_OK(MPI_File_get_amode(fh, &amode));
    CHECK_INT(amode, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR | MPI_MODE_UNIQUE_OPEN);
    EXPECT_OK(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    CHECK_INT(cmp, MPI_IDENT);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    EXPECT_OK(MPI_File_set_size(fh, 1000));
    EXPECT_OK(MPI_File_get_size(fh, &size));
    CHECK_INT(size, 1000);
    EXPECT_OK(MPI_File_preallocate(fh, 4096));
    EXPECT_OK(MPI_File_get_size(fh, &size));
    CHECK_INT(size, 4096);
    EXPECT_OK(MPI_File_preallocate(fh, 10)); /* never shrinks */
    EXPECT_OK(MPI_File_get_size(fh, &size));
    CHECK_INT(size, 4096);
    EXPECT_CLASS(MPI_File_set_size(fh, -1), MPI_ERR_ARG);
    EXPECT_OK(MPI_File_get_atomicity(fh, &flag));
    CHECK_INT(flag, 0);
    EXPECT_OK(MPI_File_set_atomicity(fh, 1));
    EXPECT_OK(MPI_File_get_atomicity(fh, &flag));
    CHECK_INT(flag, 1);
    EXPECT_OK(MPI_File_write_at(fh, rank * 16, data, 4, MPI_INT, &st));
    EXPECT_OK(MPI_File_read_at(fh, rank * 16, back, 4, MPI_INT, &st));
    CHECK(memcmp(data, back, sizeof data) == 0, "atomic-mode read back differs");
    EXPECT_OK(MPI_File_set_atomicity(fh, 0));
    /* Hints: ours reported, a program's key kept. */
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    MPI_Info_set(info, "access_style", "read_once");
    EXPECT_OK(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    EXPECT_OK(MPI_File_get_info(fh, &info));
    {
        char v[MPI_MAX_INFO_VAL];
        MPI_Info_get(info, "cb_buffer_size", sizeof v - 1, v, &flag);
        CHECK(flag && strcmp(v, "1048576") == 0, "cb_buffer_size hint not in effect");
        MPI_Info_get(info, "access_style", sizeof v - 1, v, &flag);
        CHECK(flag && strcmp(v, "read_once") == 0, "access_style not kept");
        MPI_Info_get(info, "romio_cb_write", sizeof v - 1, v, &flag);
        CHECK(flag, "romio_cb_write not reported");
    }
    MPI_Info_free(&info);
    EXPECT_OK(MPI_File_sync(fh));
    EXPECT_OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close did not reset the handle");
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                               MPI_INFO_NULL, &fh), MPI_ERR_FILE_EXISTS);

    /* Read-only and write-only files refuse the other direction; a user errhandler runs. */
    EXPECT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    rc = MPI_File_write_at(fh, 0, data, 4, MPI_INT, &st);
    EXPECT_CLASS(rc, MPI_ERR_READ_ONLY);
    MPI_Error_string(rc, msg, &len);
    CHECK_CONTAINS(msg, path);
    EXPECT_CLASS(MPI_File_set_size(fh, 0), MPI_ERR_READ_ONLY);
    EXPECT_CLASS(MPI_File_read_at(fh, -1, back, 4, MPI_INT, &st), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_File_read_at(fh, 0, back, -1, MPI_INT, &st), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_File_read_at(fh, 0, back, 4, MPI_DATATYPE_NULL, &st), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep", MPI_INFO_NULL),
                 MPI_ERR_UNSUPPORTED_DATAREP);
    EXPECT_CLASS(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
    EXPECT_OK(MPI_File_close(&fh));
    EXPECT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    EXPECT_OK(MPI_File_create_errhandler(on_error, &eh));
    EXPECT_OK(MPI_File_set_errhandler(fh, eh));
    MPI_Errhandler_free(&eh);
    EXPECT_CLASS(MPI_File_read_at(fh, 0, back, 4, MPI_INT, &st), MPI_ERR_ACCESS);
    CHECK_INT(handler_calls, 1);
    EXPECT_OK(MPI_File_close(&fh));

    /* Append starts both pointers at the end; SEQUENTIAL allows shared pointers only. */
    EXPECT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_APPEND,
                            MPI_INFO_NULL, &fh));
    {
        MPI_Offset pos;
        EXPECT_OK(MPI_File_get_position(fh, &pos));
        CHECK_INT(pos, 4096);
        EXPECT_OK(MPI_File_get_position_shared(fh, &pos));
        CHECK_INT(pos, 4096);
    }
    EXPECT_OK(MPI_File_close(&fh));
    EXPECT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL,
                            MPI_INFO_NULL, &fh));
    EXPECT_CLASS(MPI_File_write_at(fh, 0, data, 1, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION);
    EXPECT_OK(MPI_File_write_shared(fh, data, 1, MPI_INT, &st));
    EXPECT_OK(MPI_File_close(&fh));

    /* DELETE_ON_CLOSE removes the file once everyone closed it. */
    EXPECT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, &fh));
    CHECK(exists(path), "the file vanished before close");
    EXPECT_OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(!exists(path), "MPI_MODE_DELETE_ON_CLOSE left the file");

    /* A fatal default errhandler is what new files get. */
    EXPECT_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL));
    EXPECT_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default file errhandler not set");
    EXPECT_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
