/* RMA error classes, each with a message naming the function: operations outside an epoch
 * (MPI_ERR_RMA_SYNC), out of the window (MPI_ERR_RMA_RANGE), bad lock types, ranks, asserts,
 * ops, mismatched synchronisation, shared_query on a created window (no shared memory), and a
 * bad window. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int rank, size, buf[8] = {0}, v = 1, r;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_rank = rank;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int *mem;
    MPI_Win win;
    EXPECT_OK(MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int peer = (rank + 1) % size;

    /* No epoch yet. */
    EXPECT_ERR(MPI_Put(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC, "MPI_Put", NULL);
    EXPECT_ERR(MPI_Get(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC, "MPI_Get", NULL);
    EXPECT_ERR(MPI_Accumulate(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_SYNC, "MPI_Accumulate", NULL);
    EXPECT_ERR(MPI_Fetch_and_op(&v, &r, MPI_INT, peer, 0, MPI_SUM, win), MPI_ERR_RMA_SYNC, "MPI_Fetch_and_op", NULL);
    EXPECT_ERR(MPI_Win_unlock(peer, win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock", NULL);
    EXPECT_ERR(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all", NULL);
    EXPECT_ERR(MPI_Win_flush(peer, win), MPI_ERR_RMA_SYNC, "MPI_Win_flush", NULL);
    EXPECT_ERR(MPI_Win_complete(win), MPI_ERR_RMA_SYNC, "MPI_Win_complete", NULL);
    EXPECT_ERR(MPI_Win_wait(win), MPI_ERR_RMA_SYNC, "MPI_Win_wait", NULL);
    EXPECT_ERR(MPI_Win_lock(12345, peer, 0, win), MPI_ERR_LOCKTYPE, "MPI_Win_lock", NULL);
    EXPECT_ERR(MPI_Win_lock(MPI_LOCK_SHARED, size, 0, win), MPI_ERR_RANK, "MPI_Win_lock", NULL);
    EXPECT_ERR(MPI_Win_lock(MPI_LOCK_SHARED, peer, 1, win), MPI_ERR_ASSERT, "MPI_Win_lock", NULL);
    EXPECT_ERR(MPI_Win_fence(3, win), MPI_ERR_ASSERT, "MPI_Win_fence", NULL);
    EXPECT_ERR(MPI_Win_shared_query(win, 0, NULL, &v, &r), MPI_ERR_ARG, "MPI_Win_shared_query", NULL);

    /* Inside a lock epoch: ranges, ranks, ops, double locks. */
    EXPECT_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win));
    EXPECT_ERR(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win), MPI_ERR_RMA_SYNC, "MPI_Win_lock", NULL);
    EXPECT_ERR(MPI_Put(buf, 2, MPI_INT, peer, 7, 2, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Put", NULL);
    EXPECT_ERR(MPI_Get(buf, 1, MPI_INT, peer, 8, 1, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Get", NULL);
    EXPECT_ERR(MPI_Put(buf, 1, MPI_INT, peer, -1, 1, MPI_INT, win), MPI_ERR_DISP, "MPI_Put", NULL);
    EXPECT_ERR(MPI_Put(buf, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK, "MPI_Put", NULL);
    EXPECT_ERR(MPI_Put(buf, -1, MPI_INT, peer, 0, 1, MPI_INT, win), MPI_ERR_COUNT, "MPI_Put", NULL);
    EXPECT_ERR(MPI_Put(buf, 1, MPI_DATATYPE_NULL, peer, 0, 1, MPI_INT, win), MPI_ERR_TYPE, "MPI_Put", NULL);
    EXPECT_ERR(MPI_Put(buf, 2, MPI_INT, peer, 0, 1, MPI_INT, win), MPI_ERR_TYPE, "MPI_Put", NULL);
    EXPECT_ERR(MPI_Accumulate(buf, 1, MPI_INT, peer, 0, 1, MPI_INT, MPI_OP_NULL, win), MPI_ERR_OP, "MPI_Accumulate", NULL);
    EXPECT_ERR(MPI_Accumulate(buf, 1, MPI_FLOAT, peer, 0, 1, MPI_FLOAT, MPI_BAND, win), MPI_ERR_OP, "MPI_Accumulate", NULL);
    EXPECT_ERR(MPI_Accumulate(buf, 1, MPI_BYTE, peer, 0, 1, MPI_BYTE, MPI_SUM, win), MPI_ERR_OP, "MPI_Accumulate", NULL);
    /* Nothing to combine: any predefined op goes, as in MPICH (mpi4py relies on it). */
    EXPECT_OK(MPI_Accumulate(buf, 0, MPI_BYTE, peer, 0, 0, MPI_BYTE, MPI_SUM, win));
    EXPECT_OK(MPI_Get_accumulate(buf, 0, MPI_BYTE, &r, 0, MPI_BYTE, peer, 0, 0, MPI_BYTE, MPI_SUM, win));
    EXPECT_ERR(MPI_Compare_and_swap(buf, buf, &r, MPI_FLOAT, peer, 0, win), MPI_ERR_TYPE, "MPI_Compare_and_swap", NULL);
    EXPECT_ERR(MPI_Win_fence(0, win), MPI_ERR_RMA_SYNC, "MPI_Win_fence", NULL);
    EXPECT_ERR(MPI_Win_free(&win), MPI_ERR_RMA_SYNC, "MPI_Win_free", NULL);
    /* Valid operations to MPI_PROC_NULL do nothing. */
    EXPECT_OK(MPI_Put(buf, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    EXPECT_OK(MPI_Win_unlock(peer, win));

    /* Fence epochs: operations are allowed after a fence, not after MPI_MODE_NOSUCCEED. */
    EXPECT_OK(MPI_Win_fence(0, win));
    EXPECT_OK(MPI_Put(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, win));
    EXPECT_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    EXPECT_ERR(MPI_Put(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC, "MPI_Put", NULL);
    EXPECT_ERR(MPI_Win_shared_query(win, size + 1, (MPI_Aint *)buf, &v, &r), MPI_ERR_RANK, "MPI_Win_shared_query", NULL);
    EXPECT_OK(MPI_Win_free(&win));
    EXPECT_ERR(MPI_Win_fence(0, win), MPI_ERR_WIN, "MPI_Win_fence", NULL);

    /* A window over the program's memory has no shared memory: size 0, no address. */
    EXPECT_OK(MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Aint sz;
    void *p;
    p = buf;
    EXPECT_OK(MPI_Win_shared_query(win, 0, &sz, &v, &p));
    CHECK(sz == 0 && p == NULL, "shared_query on a created window: size %ld, base %p", (long)sz, p);
    CHECK_INT(v, 1);
    EXPECT_OK(MPI_Win_free(&win));

    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
