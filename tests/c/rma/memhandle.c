/* Memory handles (issue 18, seed 004 section 4) at 2+ ranks: each rank exposes memory
 * attached to a dynamic window through a handle; its left neighbour builds a window from
 * the handle and puts, gets and accumulates there under a lock on the parent window. Bad
 * handles (garbage bytes, another rank's handle, wrong size, released) are errors, never a
 * crash; synchronisation other than flushes is refused on a handle window. */
#include <string.h>
#include "wtest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_rank = rank;
    wtest_errors_return();
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    MPI_Win dyn, hwin, alloc;
    long *mem = malloc(64 * sizeof(long)), *amem;
    for (int i = 0; i < 64; i++)
        mem[i] = -1;
    EXPECT_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn));
    EXPECT_OK(MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN));
    char h[MPIX_MAX_MEMHANDLE_SIZE], rh[MPIX_MAX_MEMHANDLE_SIZE], junk[MPIX_MAX_MEMHANDLE_SIZE];
    int hsize = -1;
    /* Not attached yet. */
    EXPECT_ERR(MPIX_Memhandle_create(mem, 64 * sizeof(long), MPI_INFO_NULL, dyn, h, &hsize), MPI_ERR_RMA_ATTACH, "MPIX_Memhandle_create", NULL);
    EXPECT_OK(MPI_Win_attach(dyn, mem, 64 * sizeof(long)));
    /* Only the middle 32 longs are exposed through the handle. */
    EXPECT_OK(MPIX_Memhandle_create(mem + 16, 32 * sizeof(long), MPI_INFO_NULL, dyn, h, &hsize));
    CHECK(hsize > 0 && hsize <= MPIX_MAX_MEMHANDLE_SIZE, "memhandle_size %d", hsize);
    EXPECT_ERR(MPIX_Memhandle_create(mem + 60, 8 * sizeof(long), MPI_INFO_NULL, dyn, junk, &hsize), MPI_ERR_RMA_ATTACH, "MPIX_Memhandle_create", NULL);
    EXPECT_ERR(MPIX_Memhandle_create(mem, -1, MPI_INFO_NULL, dyn, junk, &hsize), MPI_ERR_SIZE, "MPIX_Memhandle_create", NULL);
    EXPECT_ERR(MPIX_Memhandle_create(mem, 8, MPI_INFO_NULL, dyn, NULL, &hsize), MPI_ERR_ARG, "MPIX_Memhandle_create", NULL);

    /* Handles travel to the left neighbour (who targets us). */
    EXPECT_OK(MPI_Sendrecv(h, MPIX_MAX_MEMHANDLE_SIZE, MPI_BYTE, left, 0, rh, MPIX_MAX_MEMHANDLE_SIZE, MPI_BYTE, right, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));

    /* Bad handles and arguments. */
    memset(junk, 0xa5, sizeof junk);
    EXPECT_ERR(MPIX_Win_from_memhandle(junk, 8, 1, MPI_INFO_NULL, right, dyn, &hwin), MPI_ERR_ARG, "MPIX_Win_from_memhandle", "memhandle");
    memcpy(junk, rh, sizeof junk);
    junk[30] ^= 0x40;
    EXPECT_ERR(MPIX_Win_from_memhandle(junk, 8, 1, MPI_INFO_NULL, right, dyn, &hwin), MPI_ERR_ARG, "MPIX_Win_from_memhandle", "memhandle");
    if (size > 2)
        EXPECT_ERR(MPIX_Win_from_memhandle(rh, 8, 1, MPI_INFO_NULL, left, dyn, &hwin), MPI_ERR_ARG, "MPIX_Win_from_memhandle", "target");
    EXPECT_ERR(MPIX_Win_from_memhandle(h, 8, 1, MPI_INFO_NULL, right, dyn, &hwin), MPI_ERR_ARG, "MPIX_Win_from_memhandle", NULL);
    EXPECT_ERR(MPIX_Win_from_memhandle(rh, 33 * sizeof(long), 1, MPI_INFO_NULL, right, dyn, &hwin), MPI_ERR_SIZE, "MPIX_Win_from_memhandle", "size");
    EXPECT_ERR(MPIX_Win_from_memhandle(rh, 8, 0, MPI_INFO_NULL, right, dyn, &hwin), MPI_ERR_DISP, "MPIX_Win_from_memhandle", NULL);
    EXPECT_ERR(MPIX_Win_from_memhandle(rh, 8, 1, MPI_INFO_NULL, size, dyn, &hwin), MPI_ERR_RANK, "MPIX_Win_from_memhandle", NULL);
    EXPECT_ERR(MPIX_Win_from_memhandle(NULL, 8, 1, MPI_INFO_NULL, right, dyn, &hwin), MPI_ERR_ARG, "MPIX_Win_from_memhandle", NULL);
    EXPECT_OK(MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &amem, &alloc));
    EXPECT_OK(MPI_Win_set_errhandler(alloc, MPI_ERRORS_RETURN));
    EXPECT_ERR(MPIX_Win_from_memhandle(rh, 8, 1, MPI_INFO_NULL, right, alloc, &hwin), MPI_ERR_RMA_FLAVOR, "MPIX_Win_from_memhandle", NULL);
    EXPECT_ERR(MPIX_Memhandle_create(amem, 8, MPI_INFO_NULL, alloc, junk, &hsize), MPI_ERR_RMA_FLAVOR, "MPIX_Memhandle_create", NULL);
    /* A handle of another window (same memory, other parent) is refused. */
    MPI_Win dyn2;
    EXPECT_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn2));
    EXPECT_OK(MPI_Win_set_errhandler(dyn2, MPI_ERRORS_RETURN));
    EXPECT_ERR(MPIX_Win_from_memhandle(rh, 8, 1, MPI_INFO_NULL, right, dyn2, &hwin), MPI_ERR_ARG, "MPIX_Win_from_memhandle", NULL);
    EXPECT_OK(MPI_Win_free(&dyn2));

    /* The handle window: 32 longs at the right neighbour, displacement unit 8. */
    EXPECT_OK(MPIX_Win_from_memhandle(rh, 32 * sizeof(long), sizeof(long), MPI_INFO_NULL, right, dyn, &hwin));
    EXPECT_OK(MPI_Win_set_errhandler(hwin, MPI_ERRORS_RETURN));
    long v = 100 + rank, got = 0, one = 1;
    EXPECT_ERR(MPI_Put(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, hwin), MPI_ERR_RMA_SYNC, "MPI_Put", NULL);
    EXPECT_ERR(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, hwin), MPI_ERR_RMA_SYNC, "MPI_Win_lock", NULL);
    EXPECT_ERR(MPI_Win_lock_all(0, hwin), MPI_ERR_RMA_SYNC, "MPI_Win_lock_all", NULL);
    EXPECT_ERR(MPI_Win_fence(0, hwin), MPI_ERR_RMA_SYNC, "MPI_Win_fence", NULL);
    EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, dyn));
    EXPECT_OK(MPI_Put(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, hwin));
    EXPECT_OK(MPI_Put(&v, 1, MPI_LONG, right, 31, 1, MPI_LONG, hwin));
    EXPECT_OK(MPI_Accumulate(&one, 1, MPI_LONG, right, 0, 1, MPI_LONG, MPI_SUM, hwin));
    EXPECT_OK(MPI_Win_flush(right, hwin));
    EXPECT_OK(MPI_Get(&got, 1, MPI_LONG, right, 0, 1, MPI_LONG, hwin));
    CHECK(got == v + 1, "get through the handle window: %ld", got);
    EXPECT_ERR(MPI_Put(&v, 1, MPI_LONG, right, 32, 1, MPI_LONG, hwin), MPI_ERR_RMA_RANGE, "MPI_Put", NULL);
    if (size > 2)
        EXPECT_ERR(MPI_Put(&v, 1, MPI_LONG, left, 0, 1, MPI_LONG, hwin), MPI_ERR_RANK, "MPI_Put", NULL);
    EXPECT_ERR(MPI_Win_unlock(right, hwin), MPI_ERR_RMA_SYNC, "MPI_Win_unlock", NULL);
    EXPECT_OK(MPI_Win_unlock(right, dyn));
    MPI_Barrier(MPI_COMM_WORLD);
    long expect = 100 + left;
    CHECK(mem[16] == expect + 1 && mem[47] == expect, "handle window data: %ld %ld", mem[16], mem[47]);
    CHECK(mem[15] == -1 && mem[48] == -1, "outside the handle's region touched: %ld %ld", mem[15], mem[48]);

    /* Release: only the maker, only once; afterwards the handle window reports an error. */
    EXPECT_ERR(MPIX_Memhandle_release(rh, dyn), MPI_ERR_ARG, "MPIX_Memhandle_release", NULL);
    EXPECT_OK(MPIX_Memhandle_release(h, dyn));
    EXPECT_ERR(MPIX_Memhandle_release(h, dyn), MPI_ERR_ARG, "MPIX_Memhandle_release", NULL);
    memset(junk, 0, sizeof junk);
    EXPECT_ERR(MPIX_Memhandle_release(junk, dyn), MPI_ERR_ARG, "MPIX_Memhandle_release", NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, dyn));
    EXPECT_ERR(MPI_Put(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, hwin), MPI_ERR_RMA_ATTACH, "MPI_Put", "released");
    EXPECT_ERR(MPI_Get(&got, 1, MPI_LONG, right, 0, 1, MPI_LONG, hwin), MPI_ERR_RMA_ATTACH, "MPI_Get", NULL);
    EXPECT_OK(MPI_Win_unlock(right, dyn));
    EXPECT_ERR(MPIX_Win_from_memhandle(rh, 8, 1, MPI_INFO_NULL, right, dyn, &alloc), MPI_ERR_RMA_ATTACH, "MPIX_Win_from_memhandle", NULL);
    /* A new handle on the same memory is a new registration; the old one stays dead. */
    EXPECT_OK(MPIX_Memhandle_create(mem, 8, MPI_INFO_NULL, dyn, h, &hsize));
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, dyn));
    EXPECT_ERR(MPI_Put(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, hwin), MPI_ERR_RMA_ATTACH, "MPI_Put", NULL);
    EXPECT_OK(MPI_Win_unlock(right, dyn));
    EXPECT_OK(MPIX_Memhandle_release(h, dyn));
    EXPECT_OK(MPI_Win_free(&hwin));
    CHECK(hwin == MPI_WIN_NULL, "handle window not freed");
    CHECK(mem[16] == expect + 1, "released handle wrote: %ld", mem[16]);

    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_Win_free(&alloc));
    EXPECT_OK(MPI_Win_detach(dyn, mem));
    EXPECT_OK(MPI_Win_free(&dyn));
    free(mem);
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
