/* MPI_Comm_spawn: 2 parents start 2 children of this program; parents and children exchange
 * values over the intercommunicator, merge it and reduce over the merged communicator; the
 * children report their own error counts to the parents, which check them. */
#include "wtest.h"

#define NCHILD 2

/* Streams do not reach processes of other jobs: a stream communicator over parents and
 * children fails clearly, on every member. */
static void streams_refused(MPI_Comm merged)
{
    MPIX_Stream stream;
    MPI_Comm sc = MPI_COMM_NULL;
    MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN);
    EXPECT_OK(MPIX_Stream_create(MPI_INFO_NULL, &stream));
    EXPECT_ERR(MPIX_Stream_comm_create(merged, stream, &sc), MPI_ERR_UNSUPPORTED_OPERATION,
               "MPIX_Stream_comm_create", "different jobs");
    CHECK(sc == MPI_COMM_NULL, "no stream communicator");
    MPIX_Stream_free(&stream);
}

static void child(MPI_Comm parent)
{
    int rank, size, rsize, inter;
    MPI_Comm again, merged;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_INT(size, NCHILD);
    MPI_Comm_test_inter(parent, &inter);
    CHECK_INT(inter, 1);
    MPI_Comm_remote_size(parent, &rsize);
    CHECK_INT(rsize, 2);
    MPI_Comm_get_parent(&again);
    CHECK(again == parent, "MPI_Comm_get_parent gives the same handle twice");
    int v = -1;
    MPI_Recv(&v, 1, MPI_INT, rank, 7, parent, MPI_STATUS_IGNORE);
    CHECK_INT(v, 100 + rank);
    v *= 2;
    MPI_Send(&v, 1, MPI_INT, rank, 8, parent);
    /* A larger message, past the eager size (rendezvous between jobs). */
    enum { N = 1 << 16 };
    static int big[N];
    MPI_Recv(big, N, MPI_INT, 0, 9, parent, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; i++)
        if (big[i] != i * 3 + 1) {
            FAIL("big[%d] = %d", i, big[i]);
            break;
        }
    MPI_Intercomm_merge(parent, 1, &merged);
    int mrank, msize, sum = 0;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK_INT(msize, 2 + NCHILD);
    CHECK_INT(mrank, 2 + rank);
    MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
    CHECK_INT(sum, 0 + 1 + 2 + 3);
    int b = 0;
    MPI_Bcast(&b, 1, MPI_INT, 0, merged);
    CHECK_INT(b, 4242);
    streams_refused(merged);
    MPI_Comm_free(&merged);
    /* The children's errors, summed, go to parent 0. */
    int errs = wtest_errs, total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Send(&total, 1, MPI_INT, 0, 10, parent);
    MPI_Comm_disconnect(&parent);
    CHECK(parent == MPI_COMM_NULL, "disconnect sets the handle to MPI_COMM_NULL");
    MPI_Comm_get_parent(&again);
    CHECK(again == MPI_COMM_NULL, "no parent after disconnecting it");
}

int main(int argc, char **argv)
{
    MPI_Comm parent, inter, merged;
    MPI_Init(&argc, &argv);
    wtest_world_rank();
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        child(parent);
        MPI_Finalize();
        return wtest_errs != 0;
    }
    int rank, errcodes[NCHILD] = {-1, -1};
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *args[] = {"child", NULL};
    int rc = MPI_Comm_spawn(argv[0], args, NCHILD, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                            errcodes);
    CHECK_INT(rc, MPI_SUCCESS);
    for (int i = 0; i < NCHILD; i++)
        CHECK_INT(errcodes[i], MPI_SUCCESS);
    int rsize, lsize;
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_size(inter, &lsize);
    CHECK_INT(rsize, NCHILD);
    CHECK_INT(lsize, 2);
    int v = 100 + rank, back = 0;
    MPI_Send(&v, 1, MPI_INT, rank, 7, inter);
    MPI_Recv(&back, 1, MPI_INT, rank, 8, inter, MPI_STATUS_IGNORE);
    CHECK_INT(back, 2 * (100 + rank));
    enum { N = 1 << 16 };
    static int big[N];
    for (int i = 0; i < N; i++)
        big[i] = i * 3 + 1;
    if (rank == 0)
        for (int c = 0; c < NCHILD; c++)
            MPI_Send(big, N, MPI_INT, c, 9, inter);
    MPI_Intercomm_merge(inter, 0, &merged);
    int mrank, msize, sum = 0;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK_INT(msize, 2 + NCHILD);
    CHECK_INT(mrank, rank);
    MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
    CHECK_INT(sum, 0 + 1 + 2 + 3);
    int b = 4242;
    MPI_Bcast(&b, 1, MPI_INT, 0, merged);
    streams_refused(merged);
    MPI_Comm_free(&merged);
    if (rank == 0) {
        int child_errs = -1;
        MPI_Recv(&child_errs, 1, MPI_INT, 0, 10, inter, MPI_STATUS_IGNORE);
        CHECK_INT(child_errs, 0);
    }
    MPI_Comm_disconnect(&inter);
    MPI_Finalize();
    return wtest_finish();
}
