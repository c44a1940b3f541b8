/* Nonblocking file accesses are generalized requests driven by MPI's progress: many of them
 * complete in one MPI_Waitall, MPI_Test completes one eventually without any waiting call,
 * MPIX_Stream_progress completes them too, and the data is right. Runs with each engine. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wtest.h"

#define NREQ 16
#define LEN (64 * 1024)

int main(int argc, char **argv)
{
    char path[200];
    MPI_File fh;
    MPI_Request req[NREQ];
    MPI_Status st[NREQ];
    int *buf = malloc(sizeof(int) * NREQ * LEN), *back = malloc(sizeof(int) * NREQ * LEN);
    int rank, flag = 0, count;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        snprintf(path, sizeof path, "/tmp/weft_io_nb.%d", (int)getpid());
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    EXPECT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR |
                            MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    for (int i = 0; i < NREQ * LEN; i++)
        buf[i] = i ^ (rank << 24);
    MPI_Offset base = (MPI_Offset)rank * NREQ * LEN * sizeof(int);
    for (int r = 0; r < NREQ; r++)
        EXPECT_OK(MPI_File_iwrite_at(fh, base + (MPI_Offset)r * LEN * sizeof(int), buf + r * LEN,
                                     LEN, MPI_INT, &req[r]));
    EXPECT_OK(MPI_Waitall(NREQ, req, st));
    for (int r = 0; r < NREQ; r++) {
        CHECK(req[r] == MPI_REQUEST_NULL, "request %d not freed", r);
        MPI_Get_count(&st[r], MPI_INT, &count);
        CHECK_INT(count, LEN);
    }
    /* Reads completed by MPI_Test alone, then by MPIX_Stream_progress + MPI_Test. */
    EXPECT_OK(MPI_File_iread_at(fh, base, back, LEN * NREQ / 2, MPI_INT, &req[0]));
    while (!flag)
        EXPECT_OK(MPI_Test(&req[0], &flag, &st[0]));
    MPI_Get_count(&st[0], MPI_INT, &count);
    CHECK_INT(count, LEN * NREQ / 2);
    EXPECT_OK(MPI_File_iread_at(fh, base + (MPI_Offset)LEN * NREQ / 2 * sizeof(int),
                                back + LEN * NREQ / 2, LEN * NREQ / 2, MPI_INT, &req[0]));
    flag = 0;
    while (!flag) {
        MPIX_Stream_progress(MPIX_STREAM_NULL);
        flag = MPIX_Request_is_complete(req[0]);
    }
    EXPECT_OK(MPI_Wait(&req[0], &st[0]));
    CHECK(memcmp(buf, back, sizeof(int) * NREQ * LEN) == 0, "read back differs");
    /* Reading past the end of the file: the count says how much there was (once every rank
     * wrote its region: rank 0's read reaches into rank 1's). */
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_File_iread_at(fh, base + (MPI_Offset)(NREQ * LEN - 10) * sizeof(int), back, 100,
                                MPI_INT, &req[0]));
    EXPECT_OK(MPI_Wait(&req[0], &st[0]));
    MPI_Get_count(&st[0], MPI_INT, &count);
    MPI_Barrier(MPI_COMM_WORLD);
    {
        int last;
        MPI_Comm_size(MPI_COMM_WORLD, &last);
        CHECK_INT(count, rank == last - 1 ? 10 : 100);
    }
    EXPECT_OK(MPI_File_close(&fh));
    free(buf);
    free(back);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
