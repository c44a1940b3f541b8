/* The shared file pointer: concurrent MPI_File_write_shared records all land exactly once
 * (the pointer lives in node shared memory, one atomic add per access); _ordered accesses
 * land in rank order; seek_shared/get_position_shared; read_shared reads each record once. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wtest.h"

#define N 50

int main(int argc, char **argv)
{
    int rank, nranks, rec[2], *seen, count;
    char path[200];
    MPI_File fh;
    MPI_Status st;
    MPI_Offset pos;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (rank == 0)
        snprintf(path, sizeof path, "/tmp/weft_io_shared.%d", (int)getpid());
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    EXPECT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR |
                            MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    EXPECT_OK(MPI_File_set_view(fh, 0, MPI_2INT, MPI_2INT, "native", MPI_INFO_NULL));
    for (int i = 0; i < N; i++) {
        rec[0] = rank;
        rec[1] = i;
        EXPECT_OK(MPI_File_write_shared(fh, rec, 1, MPI_2INT, &st));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT(pos, (MPI_Offset)N * nranks);
    /* Every record once; each rank's own records in its order. */
    seen = calloc((size_t)N * nranks, sizeof(int));
    {
        int (*all)[2] = malloc(sizeof(int[2]) * N * nranks), last[64];
        for (int r = 0; r < 64; r++)
            last[r] = -1;
        EXPECT_OK(MPI_File_read_at(fh, 0, all, N * nranks, MPI_2INT, &st));
        for (int k = 0; k < N * nranks; k++) {
            int r = all[k][0], i = all[k][1];
            if (r < 0 || r >= nranks || i < 0 || i >= N) {
                FAIL("record %d = (%d, %d)", k, r, i);
                break;
            }
            seen[r * N + i]++;
            CHECK(i > last[r], "rank %d's record %d after %d", r, i, last[r]);
            last[r] = i;
        }
        for (int k = 0; k < N * nranks; k++)
            CHECK(seen[k] == 1, "record (%d, %d) seen %d times", k / N, k % N, seen[k]);
        free(all);
    }
    /* Ordered: rank r's 1 + r records after everything, in rank order. */
    {
        int mine[2 * 8], base = N * nranks, expect = 0;
        for (int j = 0; j <= rank; j++)
            mine[2 * j] = 1000 + rank, mine[2 * j + 1] = j;
        EXPECT_OK(MPI_File_write_ordered(fh, mine, rank + 1, MPI_2INT, &st));
        EXPECT_OK(MPI_File_get_position_shared(fh, &pos));
        CHECK_INT(pos, base + nranks * (nranks + 1) / 2);
        for (int r = 0; r < rank; r++)
            expect += r + 1;
        int back[2 * 8];
        EXPECT_OK(MPI_File_read_at(fh, base + expect, back, rank + 1, MPI_2INT, &st));
        CHECK(memcmp(back, mine, sizeof(int) * 2 * (rank + 1)) == 0, "ordered records misplaced");
        /* Read them back in order through the shared pointer. */
        EXPECT_OK(MPI_File_seek_shared(fh, base, MPI_SEEK_SET));
        memset(back, 0, sizeof back);
        EXPECT_OK(MPI_File_read_ordered(fh, back, rank + 1, MPI_2INT, &st));
        MPI_Get_count(&st, MPI_2INT, &count);
        CHECK_INT(count, rank + 1);
        CHECK(memcmp(back, mine, sizeof(int) * 2 * (rank + 1)) == 0, "read_ordered got others'");
    }
    /* read_shared from the start: every record is read by exactly one rank. */
    EXPECT_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    memset(seen, 0, sizeof(int) * N * nranks);
    {
        int got = 0, total = 0;
        for (;;) {
            EXPECT_OK(MPI_File_read_shared(fh, rec, 1, MPI_2INT, &st));
            MPI_Get_count(&st, MPI_2INT, &count);
            if (count == 0 || rec[0] >= 1000)
                break;
            got++;
        }
        MPI_Allreduce(&got, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK_INT(total, N * nranks);
    }
    EXPECT_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    EXPECT_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT(pos, N * nranks + nranks * (nranks + 1) / 2);
    /* Nonblocking and split shared-pointer forms, and the _c twins. */
    {
        MPI_Offset base, end;
        MPI_Request req;
        int r2[2] = {2000 + rank, 0}, back[2 * 8], mine[2 * 8];
        MPI_Count one = 1;
        MPI_Barrier(MPI_COMM_WORLD); /* everyone has checked the position above */
        EXPECT_OK(MPI_File_get_position_shared(fh, &base));
        MPI_Barrier(MPI_COMM_WORLD); /* everyone has read it before anyone moves it */
        EXPECT_OK(MPI_File_iwrite_shared(fh, r2, 1, MPI_2INT, &req));
        EXPECT_OK(MPI_Wait(&req, &st));
        r2[1] = 1;
        EXPECT_OK(MPI_File_write_shared_c(fh, r2, one, MPI_2INT, &st));
        MPI_Barrier(MPI_COMM_WORLD);
        EXPECT_OK(MPI_File_get_position_shared(fh, &end));
        CHECK_INT(end - base, 2 * nranks);
        for (int j = 0; j <= rank; j++)
            mine[2 * j] = 3000 + rank, mine[2 * j + 1] = j;
        EXPECT_OK(MPI_File_write_ordered_begin_c(fh, mine, (MPI_Count)rank + 1, MPI_2INT));
        EXPECT_OK(MPI_File_write_ordered_end(fh, mine, &st));
        MPI_Get_count(&st, MPI_2INT, &count);
        CHECK_INT(count, rank + 1);
        EXPECT_OK(MPI_File_seek_shared(fh, end, MPI_SEEK_SET));
        memset(back, 0, sizeof back);
        EXPECT_OK(MPI_File_read_ordered_begin(fh, back, rank + 1, MPI_2INT));
        EXPECT_OK(MPI_File_read_ordered_end(fh, back, &st));
        CHECK(memcmp(back, mine, sizeof(int) * 2 * (rank + 1)) == 0, "split ordered records");
        /* Every rank reads one of the 2n nonblocking/_c records through the shared pointer. */
        EXPECT_OK(MPI_File_seek_shared(fh, base, MPI_SEEK_SET));
        EXPECT_OK(MPI_File_iread_shared(fh, back, 1, MPI_2INT, &req));
        EXPECT_OK(MPI_Wait(&req, &st));
        CHECK(back[0] >= 2000 && back[0] < 2000 + nranks && (back[1] == 0 || back[1] == 1),
              "iread_shared record (%d, %d)", back[0], back[1]);
        EXPECT_OK(MPI_File_read_shared_c(fh, back, one, MPI_2INT, &st));
        CHECK(back[0] >= 2000 && back[0] < 2000 + nranks, "read_shared_c record %d", back[0]);
        EXPECT_OK(MPI_File_read_ordered_c(fh, back, one, MPI_2INT, &st));
        MPI_Get_count(&st, MPI_2INT, &count);
        CHECK_INT(count, 1);
    }
    EXPECT_OK(MPI_File_close(&fh));
    free(seen);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
