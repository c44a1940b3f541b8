/* Persistent collectives on a thread communicator (docs/threadcomm.md): each init'ed once,
 * started many times with new data each time, the results checked every time. Run on one or
 * several processes with argv[1] threads each; built with and without OpenMP.
 *  - MPI_Bcast_init (root turns), MPI_Allreduce_init (sum), MPI_Reduce_init (max at a root),
 *    MPI_Scan_init, MPI_Allgather_init, MPI_Alltoall_init, MPI_Gatherv_init,
 *    MPI_Reduce_scatter_block_init, MPI_Barrier_init, started one by one and by MPI_Startall;
 *  - a started request tests complete; waiting on an inactive one returns at once;
 *  - argument errors are reported at init; finish succeeds once the requests are freed. */
#include "wtest.h"
#include "threads.h"
#include "tcheck.h"
#include <stdlib.h>

static MPI_Comm tc;
static int rounds;

enum { BC, AR, RD, SC, AG, AA, GV, RS, BA, NREQ };

static void region(void *arg)
{
    (void)arg;
    TEXPECT(MPIX_Threadcomm_start(tc) == MPI_SUCCESS);
    int rank = -1, size = -1;
    MPI_Comm_rank(tc, &rank);
    MPI_Comm_size(tc, &size);
    MPI_Comm_set_errhandler(tc, MPI_ERRORS_RETURN);
    int bc[3], ar_in[2], ar_out[2], rd_in, rd_out, sc_in, sc_out, ag_in, ag_out[64];
    int aa_in[64], aa_out[64], gv_in[2], gv_out[128], gv_counts[64], gv_displs[64];
    int rs_in[64], rs_out;
    int root = size - 1;
    for (int i = 0; i < size; i++) {
        gv_counts[i] = 1 + i % 2;
        gv_displs[i] = 2 * i;
    }
    MPI_Request r[NREQ];
    MPI_Info info = MPI_INFO_NULL;
    TEXPECT(MPI_Bcast_init(bc, 3, MPI_INT, 0, tc, info, &r[BC]) == MPI_SUCCESS);
    TEXPECT(MPI_Allreduce_init(ar_in, ar_out, 2, MPI_INT, MPI_SUM, tc, info, &r[AR]) ==
            MPI_SUCCESS);
    TEXPECT(MPI_Reduce_init(&rd_in, &rd_out, 1, MPI_INT, MPI_MAX, root, tc, info, &r[RD]) ==
            MPI_SUCCESS);
    TEXPECT(MPI_Scan_init(&sc_in, &sc_out, 1, MPI_INT, MPI_SUM, tc, info, &r[SC]) ==
            MPI_SUCCESS);
    TEXPECT(MPI_Allgather_init(&ag_in, 1, MPI_INT, ag_out, 1, MPI_INT, tc, info, &r[AG]) ==
            MPI_SUCCESS);
    TEXPECT(MPI_Alltoall_init(aa_in, 1, MPI_INT, aa_out, 1, MPI_INT, tc, info, &r[AA]) ==
            MPI_SUCCESS);
    TEXPECT(MPI_Gatherv_init(gv_in, gv_counts[rank], MPI_INT, gv_out, gv_counts, gv_displs,
                             MPI_INT, root, tc, info, &r[GV]) == MPI_SUCCESS);
    TEXPECT(MPI_Reduce_scatter_block_init(rs_in, &rs_out, 1, MPI_INT, MPI_SUM, tc, info,
                                          &r[RS]) == MPI_SUCCESS);
    TEXPECT(MPI_Barrier_init(tc, info, &r[BA]) == MPI_SUCCESS);
    /* Inactive: a wait returns at once. */
    TEXPECT(MPI_Wait(&r[AR], MPI_STATUS_IGNORE) == MPI_SUCCESS && r[AR] != MPI_REQUEST_NULL);

    for (int it = 0; it < rounds; it++) {
        if (rank == 0)
            for (int k = 0; k < 3; k++)
                bc[k] = 100 * it + k;
        else
            bc[0] = bc[1] = bc[2] = -1;
        ar_in[0] = rank + it;
        ar_in[1] = 2 * rank - it;
        rd_in = (rank * 7 + it) % size;
        sc_in = rank + 1 + it;
        ag_in = 10 * rank + it;
        for (int i = 0; i < size; i++) {
            aa_in[i] = 1000 * rank + 10 * i + it % 10;
            rs_in[i] = rank * i + it;
        }
        gv_in[0] = gv_in[1] = 3 * rank + it;
        for (int i = 0; i < 2 * size; i++)
            gv_out[i] = -7;
        if (it % 2) {
            TEXPECT(MPI_Startall(NREQ, r) == MPI_SUCCESS);
            TEXPECT(MPI_Waitall(NREQ, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
        } else {
            for (int q = 0; q < NREQ; q++) {
                TEXPECT(MPI_Start(&r[q]) == MPI_SUCCESS);
                int flag = 0;
                TEXPECT(MPI_Test(&r[q], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag);
            }
        }
        for (int k = 0; k < 3; k++)
            TEXPECT(bc[k] == 100 * it + k);
        int s0 = 0, s1 = 0, mx = -1;
        for (int i = 0; i < size; i++) {
            s0 += i + it;
            s1 += 2 * i - it;
            int v = (i * 7 + it) % size;
            mx = v > mx ? v : mx;
        }
        TEXPECT(ar_out[0] == s0 && ar_out[1] == s1);
        if (rank == root)
            TEXPECT(rd_out == mx);
        TEXPECT(sc_out == (rank + 1) * (rank + 2) / 2 + (rank + 1) * it);
        for (int i = 0; i < size; i++) {
            TEXPECT(ag_out[i] == 10 * i + it);
            TEXPECT(aa_out[i] == 1000 * i + 10 * rank + it % 10);
        }
        int rs = 0;
        for (int i = 0; i < size; i++)
            rs += i * rank + it;
        TEXPECT(rs_out == rs);
        if (rank == root)
            for (int i = 0; i < size; i++) {
                TEXPECT(gv_out[2 * i] == 3 * i + it);
                TEXPECT(gv_out[2 * i + 1] == (i % 2 ? 3 * i + it : -7));
            }
    }
    for (int q = 0; q < NREQ; q++)
        TEXPECT(MPI_Request_free(&r[q]) == MPI_SUCCESS && r[q] == MPI_REQUEST_NULL);
    /* Argument errors at init. */
    MPI_Request bad;
    TEXPECT(err_class(MPI_Bcast_init(bc, 1, MPI_INT, size, tc, info, &bad)) == MPI_ERR_ROOT);
    TEXPECT(err_class(MPI_Allreduce_init(ar_in, ar_out, -1, MPI_INT, MPI_SUM, tc, info, &bad)) ==
            MPI_ERR_COUNT);
    TEXPECT(err_class(MPI_Barrier_init(tc, info, NULL)) == MPI_ERR_ARG);
    TEXPECT(MPIX_Threadcomm_finish(tc) == MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int nt = argc > 1 ? atoi(argv[1]) : 3;
    rounds = argc > 2 ? atoi(argv[2]) : 200;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_INT(MPIX_Threadcomm_init(MPI_COMM_WORLD, nt, &tc), MPI_SUCCESS);
    for (int region_no = 0; region_no < 3; region_no++)
        run_threads(nt, region, NULL);
    CHECK_INT(atomic_load(&errors_in_threads), 0);
    CHECK_INT(MPIX_Threadcomm_free(&tc), MPI_SUCCESS);
    MPI_Finalize();
    if (wtest_errs == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
