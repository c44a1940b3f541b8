/* 10^6 back-to-back small MPI_Send/MPI_Recv between two thread ranks (issue 17): rank 0
 * sends ITERS ints with no synchronisation, rank 1 receives and checks each in order; then
 * the same with MPI_Isend/MPI_Irecv pairs waited one at a time. Must finish in CI time.
 *   ./sendrecv_million [iters]   (default 1000000) */
#include "wtest.h"
#include "threads.h"
#include <stdatomic.h>
#include <stdlib.h>

static MPI_Comm tc;
static int iters = 1000000;
static atomic_int wrong;

static void region(void *unused)
{
    (void)unused;
    int r = -1;
    MPIX_Threadcomm_start(tc);
    MPI_Comm_rank(tc, &r);
    if (r == 0) {
        for (int i = 0; i < iters; i++)
            MPI_Send(&i, 1, MPI_INT, 1, 0, tc);
    } else {
        for (int i = 0; i < iters; i++) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, 0, 0, tc, MPI_STATUS_IGNORE);
            if (v != i && atomic_fetch_add(&wrong, 1) < 5)
                fprintf(stderr, "message %d carried %d\n", i, v);
        }
    }
    MPI_Request req;
    for (int i = 0; i < iters / 10; i++) {
        int v = r == 0 ? i : -1;
        if (r == 0)
            MPI_Isend(&v, 1, MPI_INT, 1, 1, tc, &req);
        else
            MPI_Irecv(&v, 1, MPI_INT, 0, 1, tc, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (v != i && atomic_fetch_add(&wrong, 1) < 5)
            fprintf(stderr, "nonblocking message %d carried %d\n", i, v);
    }
    MPIX_Threadcomm_finish(tc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc > 1)
        iters = atoi(argv[1]);
    CHECK_INT(MPIX_Threadcomm_init(MPI_COMM_SELF, 2, &tc), MPI_SUCCESS);
    double t = MPI_Wtime();
    run_threads(2, region, NULL);
    t = MPI_Wtime() - t;
    CHECK_INT(atomic_load(&wrong), 0);
    printf("%d send/recv + %d isend/irecv pairs in %.3f s\n", iters, iters / 10, t);
    CHECK_INT(MPIX_Threadcomm_free(&tc), MPI_SUCCESS);
    MPI_Finalize();
    if (wtest_errs == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
