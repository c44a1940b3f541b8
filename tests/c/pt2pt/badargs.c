/* Every point-to-point entry point rejects bad counts, ranks, tags, communicators, datatypes,
 * requests and null pointers with the right error class and a message naming the function
 * and the argument. */
#include "pt2pt_util.h"

int main(int argc, char **argv)
{
    int rank, size, v = 0, flag, index, outcount, indices[2];
    MPI_Request req, reqs[2];
    MPI_Status st;
    MPI_Comm bad = (MPI_Comm)WTEST_GARBAGE;
    MPI_Datatype badt = (MPI_Datatype)WTEST_GARBAGE;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;

    EXPECT_ERR(MPI_Send(&v, -1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Send", "count");
    EXPECT_ERR(MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Send", "dest");
    EXPECT_ERR(MPI_Send(&v, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Send", "dest");
    EXPECT_ERR(MPI_Send(&v, 1, MPI_INT, peer, -1, MPI_COMM_WORLD), MPI_ERR_TAG, "MPI_Send", "tag");
    EXPECT_ERR(MPI_Send(&v, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG, "MPI_Send", "tag");
    EXPECT_ERR(MPI_Send(&v, 1, MPI_INT, peer, 0, bad), MPI_ERR_COMM, "MPI_Send", "comm");
    EXPECT_ERR(MPI_Send(&v, 1, MPI_INT, peer, 0, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_Send", "comm");
    EXPECT_ERR(MPI_Send(&v, 1, badt, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Send", "datatype");
    EXPECT_ERR(MPI_Send(NULL, 1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "MPI_Send", "buf");
    EXPECT_ERR(MPI_Ssend_c(&v, -3, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Ssend_c", "count");
    EXPECT_ERR(MPI_Rsend(&v, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Rsend", "dest");
    EXPECT_ERR(MPI_Isend(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "MPI_Isend", "request");
    EXPECT_ERR(MPI_Issend(&v, 1, MPI_INT, peer, -9, MPI_COMM_WORLD, &req), MPI_ERR_TAG, "MPI_Issend", "tag");
    EXPECT_ERR(MPI_Irsend(&v, 1, MPI_INT, peer, 0, bad, &req), MPI_ERR_COMM, "MPI_Irsend", "comm");
    EXPECT_ERR(MPI_Recv(&v, -1, MPI_INT, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT, "MPI_Recv", "count");
    EXPECT_ERR(MPI_Recv(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK, "MPI_Recv", "source");
    EXPECT_ERR(MPI_Recv(&v, 1, MPI_INT, peer, -7, MPI_COMM_WORLD, &st), MPI_ERR_TAG, "MPI_Recv", "tag");
    EXPECT_ERR(MPI_Irecv(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "MPI_Irecv", "request");
    EXPECT_ERR(MPI_Irecv_c(&v, 1, badt, peer, 0, MPI_COMM_WORLD, &req), MPI_ERR_TYPE, "MPI_Irecv_c", "datatype");
    EXPECT_ERR(MPI_Sendrecv(&v, 1, MPI_INT, size, 0, &v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK, "MPI_Sendrecv", "dest");
    EXPECT_ERR(MPI_Isendrecv(&v, 1, MPI_INT, peer, 0, &v, -1, MPI_INT, peer, 0, MPI_COMM_WORLD, &req), MPI_ERR_COUNT, "MPI_Isendrecv", "count");
    EXPECT_ERR(MPI_Sendrecv_replace(&v, 1, MPI_INT, peer, 0, peer, -4, MPI_COMM_WORLD, &st), MPI_ERR_TAG, "MPI_Sendrecv_replace", "tag");
    EXPECT_ERR(MPI_Probe(size, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK, "MPI_Probe", "source");
    EXPECT_ERR(MPI_Iprobe(peer, 0, MPI_COMM_WORLD, NULL, &st), MPI_ERR_ARG, "MPI_Iprobe", "flag");
    /* Requests. */
    req = (MPI_Request)WTEST_GARBAGE;
    EXPECT_ERR(MPI_Wait(&req, &st), MPI_ERR_REQUEST, "MPI_Wait", "request");
    EXPECT_ERR(MPI_Test(&req, &flag, &st), MPI_ERR_REQUEST, "MPI_Test", "request");
    EXPECT_ERR(MPI_Request_free(&req), MPI_ERR_REQUEST, "MPI_Request_free", "request");
    EXPECT_ERR(MPI_Wait(NULL, &st), MPI_ERR_ARG, "MPI_Wait", "request");
    reqs[0] = MPI_REQUEST_NULL;
    reqs[1] = (MPI_Request)WTEST_GARBAGE;
    EXPECT_ERR(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST, "MPI_Waitall", "array_of_requests");
    EXPECT_ERR(MPI_Waitany(2, reqs, &index, &st), MPI_ERR_REQUEST, "MPI_Waitany", "array_of_requests");
    EXPECT_ERR(MPI_Testsome(2, reqs, &outcount, indices, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST, "MPI_Testsome", "array_of_requests");
    EXPECT_ERR(MPI_Waitall(-1, reqs, MPI_STATUSES_IGNORE), MPI_ERR_COUNT, "MPI_Waitall", "count");
    /* A freed (stale) request handle. */
    EXPECT_OK(MPI_Isend(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req));
    MPI_Request stale = req;
    EXPECT_OK(MPI_Wait(&req, &st));
    EXPECT_ERR(MPI_Wait(&stale, &st), MPI_ERR_REQUEST, "MPI_Wait", "request");
    EXPECT_ERR(MPI_Test_cancelled(NULL, &flag), MPI_ERR_ARG, "MPI_Test_cancelled", "status");
    EXPECT_ERR(MPI_Get_count(&st, badt, &v), MPI_ERR_TYPE, "MPI_Get_count", "datatype");
    /* Null request operations succeed with the empty status. */
    req = MPI_REQUEST_NULL;
    st.MPI_TAG = 5;
    EXPECT_OK(MPI_Wait(&req, &st));
    CHECK_INT(st.MPI_TAG, MPI_ANY_TAG);
    CHECK_INT(st.MPI_SOURCE, MPI_ANY_SOURCE);
    pair_sync(peer);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
