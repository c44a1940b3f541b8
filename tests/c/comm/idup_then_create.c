/* Blocking communicator creation while MPI_Comm_idups are pending and not waited for: the
 * idups' context-id agreements (run by the progress engine) must not stop a blocking
 * agreement of this process, here one with no peer to exchange with (MPI_Comm_split_type on
 * MPI_COMM_SELF spun forever), then one over MPI_COMM_WORLD. */
#include "wtest.h"

#define IDUPS 3

int main(int argc, char **argv)
{
    int rank, size, n, i, res;
    MPI_Comm d[IDUPS], s, w;
    MPI_Request req[IDUPS];

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (n = 1; n <= IDUPS; n++) {
        for (i = 0; i < n; i++)
            EXPECT_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d[i], &req[i]));
        EXPECT_OK(MPI_Comm_split_type(MPI_COMM_SELF, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                      &s));
        EXPECT_OK(MPI_Comm_size(s, &res));
        CHECK_INT(res, 1);
        EXPECT_OK(MPI_Comm_split(MPI_COMM_SELF, 0, 0, &w));
        EXPECT_OK(MPI_Comm_compare(w, MPI_COMM_SELF, &res));
        CHECK_INT(res, MPI_CONGRUENT);
        MPI_Comm_free(&w);
        MPI_Comm_free(&s);
        EXPECT_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, 0, &w));
        EXPECT_OK(MPI_Comm_size(w, &res));
        CHECK_INT(res, (size + 1 - rank % 2) / 2);
        MPI_Comm_free(&w);
        EXPECT_OK(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
        for (i = 0; i < n; i++) {
            int sum = rank;
            EXPECT_OK(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, d[i]));
            CHECK_INT(sum, size * (size - 1) / 2);
            MPI_Comm_free(&d[i]);
        }
    }
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
