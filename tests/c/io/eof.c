/* Reads at the end of the file, through every path: independent, collective with and without
 * aggregation, nonblocking. The count says what was read and the buffer beyond it keeps its
 * contents (collective reads once filled it from the aggregator's window). Also the view
 * rules: negative or decreasing displacements are MPI_ERR_IO, overlapping ones only in a
 * file open for writing; atomic-mode nonblocking accesses work. */
#include <string.h>
#include <unistd.h>

#include "wtest.h"

#define FILE_INTS 10
#define ASK 8

int main(int argc, char **argv)
{
    int rank, nranks, buf[ASK], count, data[FILE_INTS];
    char path[200];
    MPI_File fh;
    MPI_Status st;
    MPI_Request req;
    MPI_Datatype ft, bad;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (rank == 0)
        snprintf(path, sizeof path, "/tmp/weft_io_eof.%d", (int)getpid());
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    EXPECT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR |
                            MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    for (int i = 0; i < FILE_INTS; i++)
        data[i] = i + 1;
    if (rank == 0)
        EXPECT_OK(MPI_File_write_at(fh, 0, data, FILE_INTS, MPI_INT, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    /* Rank r sees ints r, r+n, r+2n, ... */
    MPI_Type_vector(1, 1, nranks, MPI_INT, &ft);
    {
        MPI_Datatype rs;
        MPI_Type_create_resized(ft, 0, (MPI_Aint)nranks * sizeof(int), &rs);
        MPI_Type_free(&ft);
        ft = rs;
    }
    MPI_Type_commit(&ft);
    EXPECT_OK(MPI_File_set_view(fh, rank * sizeof(int), MPI_INT, ft, "native", MPI_INFO_NULL));
    int have = rank < FILE_INTS ? (FILE_INTS - rank + nranks - 1) / nranks : 0;
    if (have > ASK)
        have = ASK;
    for (int path_kind = 0; path_kind < 4; path_kind++) {
        for (int i = 0; i < ASK; i++)
            buf[i] = 99;
        switch (path_kind) {
        case 0: EXPECT_OK(MPI_File_read_at(fh, 0, buf, ASK, MPI_INT, &st)); break;
        case 1: EXPECT_OK(MPI_File_read_at_all(fh, 0, buf, ASK, MPI_INT, &st)); break;
        case 2:
            EXPECT_OK(MPI_File_iread_at(fh, 0, buf, ASK, MPI_INT, &req));
            EXPECT_OK(MPI_Wait(&req, &st));
            break;
        default:
            EXPECT_OK(MPI_File_iread_at_all(fh, 0, buf, ASK, MPI_INT, &req));
            EXPECT_OK(MPI_Wait(&req, &st));
        }
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == have, "path %d: count %d, expected %d", path_kind, count, have);
        for (int i = 0; i < ASK; i++) {
            int want = i < have ? rank + i * nranks + 1 : 99;
            CHECK(buf[i] == want, "path %d: buf[%d] = %d, expected %d", path_kind, i, buf[i], want);
        }
    }
    /* View rules. */
    {
        int blen[2] = {1, 1}, disp[2] = {3, 0};
        MPI_Type_indexed(2, blen, disp, MPI_INT, &bad);
        MPI_Type_commit(&bad);
        EXPECT_CLASS(MPI_File_set_view(fh, 0, MPI_INT, bad, "native", MPI_INFO_NULL), MPI_ERR_IO);
        MPI_Type_free(&bad);
        int blen2[2] = {3, 1}, disp2[2] = {0, 1};
        MPI_Type_indexed(2, blen2, disp2, MPI_INT, &bad);
        MPI_Type_commit(&bad);
        EXPECT_CLASS(MPI_File_set_view(fh, 0, MPI_INT, bad, "native", MPI_INFO_NULL), MPI_ERR_IO);
    }
    /* Atomic mode: a nonblocking access completes like any other. */
    EXPECT_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    EXPECT_OK(MPI_File_set_atomicity(fh, 1));
    EXPECT_OK(MPI_File_iwrite_at(fh, 100 + rank, &rank, 1, MPI_INT, &req));
    EXPECT_OK(MPI_Wait(&req, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, 1);
    EXPECT_OK(MPI_File_close(&fh));
    /* Overlapping filetypes are fine for reading only. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_File f2;
        EXPECT_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &f2));
        EXPECT_OK(MPI_File_write_at(f2, 0, data, FILE_INTS, MPI_INT, &st));
        EXPECT_OK(MPI_File_close(&f2));
        EXPECT_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
                                MPI_INFO_NULL, &f2));
        EXPECT_OK(MPI_File_set_view(f2, 0, MPI_INT, bad, "native", MPI_INFO_NULL));
        EXPECT_OK(MPI_File_read_at(f2, 0, buf, 4, MPI_INT, &st));
        CHECK(buf[0] == 1 && buf[1] == 2 && buf[2] == 3 && buf[3] == 2, "overlapping view read %d %d %d %d",
              buf[0], buf[1], buf[2], buf[3]);
        EXPECT_OK(MPI_File_close(&f2));
    }
    MPI_Type_free(&bad);
    MPI_Type_free(&ft);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
