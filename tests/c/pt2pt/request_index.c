/* An invalid or freed request in an array is reported with its index by every function that
 * takes an array of requests. */
#include "wtest.h"

int main(int argc, char **argv)
{
    MPI_Request reqs[3], stale;
    MPI_Status sts[3];
    int one = 1, index, flag, outcount, ind[3];

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    /* A garbage handle at index 1. */
    reqs[0] = MPI_REQUEST_NULL;
    reqs[1] = (MPI_Request)WTEST_GARBAGE;
    reqs[2] = MPI_REQUEST_NULL;
    EXPECT_ERR(MPI_Waitall(3, reqs, sts), MPI_ERR_REQUEST, "MPI_Waitall", "array_of_requests[1]");
    EXPECT_ERR(MPI_Testall(3, reqs, &flag, sts), MPI_ERR_REQUEST, "MPI_Testall", "array_of_requests[1]");
    EXPECT_ERR(MPI_Waitany(3, reqs, &index, sts), MPI_ERR_REQUEST, "MPI_Waitany", "array_of_requests[1]");
    EXPECT_ERR(MPI_Testany(3, reqs, &index, &flag, sts), MPI_ERR_REQUEST, "MPI_Testany",
               "array_of_requests[1]");
    EXPECT_ERR(MPI_Waitsome(3, reqs, &outcount, ind, sts), MPI_ERR_REQUEST, "MPI_Waitsome",
               "array_of_requests[1]");
    EXPECT_ERR(MPI_Testsome(3, reqs, &outcount, ind, sts), MPI_ERR_REQUEST, "MPI_Testsome",
               "array_of_requests[1]");
    EXPECT_ERR(MPI_Startall(3, reqs), MPI_ERR_REQUEST, "MPI_Startall", "array_of_requests[0]");
    EXPECT_ERR(MPI_Request_get_status_any(3, reqs, &index, &flag, sts), MPI_ERR_REQUEST,
               "MPI_Request_get_status_any", "array_of_requests[1]");
    EXPECT_ERR(MPI_Request_get_status_some(3, reqs, &outcount, ind, sts), MPI_ERR_REQUEST,
               "MPI_Request_get_status_some", "array_of_requests[1]");
    EXPECT_ERR(MPI_Request_get_status_all(3, reqs, &flag, sts), MPI_ERR_REQUEST,
               "MPI_Request_get_status_all", "array_of_requests[1]");

    /* A freed persistent request at index 2. */
    EXPECT_OK(MPI_Send_init(&one, 1, MPI_INT, 0, 1, MPI_COMM_SELF, &stale));
    reqs[1] = MPI_REQUEST_NULL;
    reqs[2] = stale;
    EXPECT_OK(MPI_Request_free(&stale));
    EXPECT_ERR(MPI_Waitall(3, reqs, sts), MPI_ERR_REQUEST, "MPI_Waitall", "array_of_requests[2]");
    EXPECT_ERR(MPI_Testall(3, reqs, &flag, sts), MPI_ERR_REQUEST, "MPI_Testall", "array_of_requests[2]");
    EXPECT_ERR(MPI_Waitany(3, reqs, &index, sts), MPI_ERR_REQUEST, "MPI_Waitany", "array_of_requests[2]");
    EXPECT_ERR(MPI_Testsome(3, reqs, &outcount, ind, sts), MPI_ERR_REQUEST, "MPI_Testsome",
               "array_of_requests[2]");
    reqs[0] = reqs[2];
    EXPECT_ERR(MPI_Startall(1, reqs), MPI_ERR_REQUEST, "MPI_Startall", "array_of_requests[0]");

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
