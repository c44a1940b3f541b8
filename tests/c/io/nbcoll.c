/* Nonblocking collective accesses progress in the background of other communication: rank 0
 * starts MPI_File_iwrite_all and then sends to rank 1, which receives before starting its
 * own (a library that ran the collective at the call would hang here); two collectives
 * outstanding on one file complete in reverse order; split collectives; data checked. */
#include <string.h>
#include <unistd.h>

#include "wtest.h"

#define N 1000

int main(int argc, char **argv)
{
    int rank, nranks, token = 7, a[N], b[N], back[N], count;
    char path[200];
    MPI_File fh;
    MPI_Request r1, r2;
    MPI_Status st;
    MPI_Datatype ft;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (rank == 0)
        snprintf(path, sizeof path, "/tmp/weft_io_nbcoll.%d", (int)getpid());
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    EXPECT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR |
                            MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    /* Interleaved ints: rank r owns every nranks-th int from r (aggregation applies). */
    MPI_Type_vector(N, 1, nranks, MPI_INT, &ft);
    {
        MPI_Datatype rs;
        MPI_Type_create_resized(ft, 0, (MPI_Aint)N * nranks * sizeof(int), &rs);
        MPI_Type_free(&ft);
        ft = rs;
    }
    MPI_Type_commit(&ft);
    EXPECT_OK(MPI_File_set_view(fh, rank * sizeof(int), MPI_INT, ft, "native", MPI_INFO_NULL));
    for (int i = 0; i < N; i++)
        a[i] = rank * 100000 + i, b[i] = -a[i];
    if (rank == 0) {
        EXPECT_OK(MPI_File_iwrite_at_all(fh, 0, a, N, MPI_INT, &r1));
        if (nranks > 1)
            EXPECT_OK(MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
    } else {
        if (rank == 1)
            EXPECT_OK(MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st));
        EXPECT_OK(MPI_File_iwrite_at_all(fh, 0, a, N, MPI_INT, &r1));
    }
    /* A second one at offset N, waited for first. */
    EXPECT_OK(MPI_File_iwrite_at_all(fh, N, b, N, MPI_INT, &r2));
    EXPECT_OK(MPI_Wait(&r2, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, N);
    EXPECT_OK(MPI_Wait(&r1, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, N);
    /* Read back both halves: one nonblocking collective, one split collective. */
    EXPECT_OK(MPI_File_iread_at_all(fh, 0, back, N, MPI_INT, &r1));
    EXPECT_OK(MPI_Wait(&r1, &st));
    CHECK(memcmp(back, a, sizeof a) == 0, "first half differs");
    EXPECT_OK(MPI_File_read_at_all_begin(fh, N, back, N, MPI_INT));
    EXPECT_CLASS(MPI_File_read_all_begin(fh, back, N, MPI_INT), MPI_ERR_OTHER);
    EXPECT_OK(MPI_File_read_at_all_end(fh, back, &st));
    CHECK(memcmp(back, b, sizeof b) == 0, "second half differs");
    EXPECT_CLASS(MPI_File_read_all_end(fh, back, &st), MPI_ERR_OTHER);
    EXPECT_OK(MPI_File_close(&fh));
    MPI_Type_free(&ft);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
