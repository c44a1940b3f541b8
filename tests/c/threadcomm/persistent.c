/* Persistent point-to-point, matched probes and MPI_Comm_idup on a thread communicator
 * (issue 17): each with the values it must give. Run on one or several processes with
 * argv[1] threads each; built with and without OpenMP.
 *  - MPI_Send_init/MPI_Recv_init/MPI_Ssend_init around a ring, restarted many times with
 *    new values each time (eager and single-copy sizes), MPI_Startall, MPI_PROC_NULL;
 *  - MPI_Mprobe/MPI_Improbe/MPI_Mrecv/MPI_Imrecv: the taken message is no longer seen by a
 *    probe or a receive, a later message from the same sender comes next, sizes and status;
 *  - MPI_Comm_idup and MPI_Comm_idup_with_info: same ranks, own traffic, then freed. */
#include "wtest.h"
#include "threads.h"
#include "tcheck.h"
#include <stdlib.h>
#include <string.h>

#define BIG (64 * 1024) /* ints: single-copy (above the eager limit) */
static MPI_Comm tc;

static void persistent(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = -1, in = -1;
    MPI_Request r[2];
    TEXPECT(MPI_Recv_init(&in, 1, MPI_INT, left, 7, tc, &r[0]) == MPI_SUCCESS);
    TEXPECT(MPI_Send_init(&out, 1, MPI_INT, right, 7, tc, &r[1]) == MPI_SUCCESS);
    for (int i = 0; i < 200; i++) {
        out = 1000 * rank + i;
        in = -1;
        MPI_Status st[2];
        TEXPECT(MPI_Startall(2, r) == MPI_SUCCESS);
        TEXPECT(MPI_Waitall(2, r, st) == MPI_SUCCESS);
        TEXPECT(in == 1000 * left + i);
        TEXPECT(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 7);
        int n = -1;
        MPI_Get_count(&st[0], MPI_INT, &n);
        TEXPECT(n == 1);
    }
    /* Inactive again: a wait returns at once with an empty status. */
    MPI_Status empty;
    TEXPECT(MPI_Wait(&r[0], &empty) == MPI_SUCCESS && r[0] != MPI_REQUEST_NULL);
    TEXPECT(MPI_Request_free(&r[0]) == MPI_SUCCESS && MPI_Request_free(&r[1]) == MPI_SUCCESS);

    /* Large (single-copy) and synchronous persistent sends, started one at a time. */
    int *big = malloc(BIG * sizeof(int)), *got = malloc(BIG * sizeof(int));
    TEXPECT(MPI_Recv_init(got, BIG, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &r[0]) ==
            MPI_SUCCESS);
    TEXPECT(MPI_Ssend_init(big, BIG, MPI_INT, right, 3, tc, &r[1]) == MPI_SUCCESS);
    for (int i = 0; i < 5; i++) {
        for (int k = 0; k < BIG; k++)
            big[k] = rank * 7 + i + k;
        TEXPECT(MPI_Start(&r[0]) == MPI_SUCCESS);
        TEXPECT(MPI_Start(&r[1]) == MPI_SUCCESS);
        MPI_Status st;
        TEXPECT(MPI_Wait(&r[0], &st) == MPI_SUCCESS);
        TEXPECT(MPI_Wait(&r[1], MPI_STATUS_IGNORE) == MPI_SUCCESS);
        TEXPECT(st.MPI_SOURCE == left && st.MPI_TAG == 3);
        int bad = 0;
        for (int k = 0; k < BIG; k++)
            bad += got[k] != left * 7 + i + k;
        TEXPECT(bad == 0);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    free(big);
    free(got);

    /* MPI_PROC_NULL: complete at once with the null status. */
    TEXPECT(MPI_Recv_init(&in, 1, MPI_INT, MPI_PROC_NULL, 0, tc, &r[0]) == MPI_SUCCESS);
    MPI_Status st;
    TEXPECT(MPI_Start(&r[0]) == MPI_SUCCESS && MPI_Wait(&r[0], &st) == MPI_SUCCESS);
    TEXPECT(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);
    MPI_Request_free(&r[0]);
    /* Argument errors are checked at the init call. */
    TEXPECT(err_class(MPI_Send_init(&out, 1, MPI_INT, size, 0, tc, &r[0])) == MPI_ERR_RANK);
    TEXPECT(err_class(MPI_Recv_init(&in, 1, MPI_INT, 0, -5, tc, &r[0])) == MPI_ERR_TAG);
}

static void matched(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int a[3] = {rank, rank + 1, rank + 2}, b = 100 + rank;
    TEXPECT(MPI_Send(a, 3, MPI_INT, right, 4, tc) == MPI_SUCCESS);
    TEXPECT(MPI_Send(&b, 1, MPI_INT, right, 4, tc) == MPI_SUCCESS);
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st;
    TEXPECT(MPI_Mprobe(left, 4, tc, &m, &st) == MPI_SUCCESS);
    TEXPECT(m != MPI_MESSAGE_NULL && st.MPI_SOURCE == left && st.MPI_TAG == 4);
    int n = -1;
    MPI_Get_count(&st, MPI_INT, &n);
    TEXPECT(n == 3);
    /* The taken message is gone: the next one from `left` is the single int. */
    int flag = 0;
    MPI_Status st2;
    TEXPECT(MPI_Iprobe(left, 4, tc, &flag, &st2) == MPI_SUCCESS);
    if (flag) {
        MPI_Get_count(&st2, MPI_INT, &n);
        TEXPECT(n == 1);
    }
    int got[3] = {-1, -1, -1};
    TEXPECT(MPI_Mrecv(got, 3, MPI_INT, &m, &st) == MPI_SUCCESS);
    TEXPECT(m == MPI_MESSAGE_NULL);
    TEXPECT(got[0] == left && got[1] == left + 1 && got[2] == left + 2);
    /* Improbe until the second message is there, then Imrecv it. */
    flag = 0;
    while (!flag)
        TEXPECT(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &flag, &m, &st) == MPI_SUCCESS);
    TEXPECT(st.MPI_SOURCE == left && st.MPI_TAG == 4);
    int one = -1;
    MPI_Request r;
    TEXPECT(MPI_Imrecv(&one, 1, MPI_INT, &m, &r) == MPI_SUCCESS);
    TEXPECT(MPI_Wait(&r, &st) == MPI_SUCCESS);
    TEXPECT(one == 100 + left && st.MPI_SOURCE == left);
    /* Nothing left to probe; MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC. */
    TEXPECT(MPI_Improbe(left, 4, tc, &flag, &m, &st) == MPI_SUCCESS && flag == 0);
    TEXPECT(MPI_Mprobe(MPI_PROC_NULL, 0, tc, &m, &st) == MPI_SUCCESS);
    TEXPECT(m == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL);
    TEXPECT(MPI_Mrecv(&one, 1, MPI_INT, &m, &st) == MPI_SUCCESS);
    /* A matched message too long for the buffer: truncated, with the error class. */
    TEXPECT(MPI_Send(a, 3, MPI_INT, right, 9, tc) == MPI_SUCCESS);
    TEXPECT(MPI_Mprobe(left, 9, tc, &m, &st) == MPI_SUCCESS);
    TEXPECT(err_class(MPI_Mrecv(&one, 1, MPI_INT, &m, &st)) == MPI_ERR_TRUNCATE);
    TEXPECT(one == left);
    TEXPECT(err_class(MPI_Mprobe(size, 0, tc, &m, &st)) == MPI_ERR_RANK);
    MPI_Barrier(tc);
}

static void idup(int rank, int size, int with_info)
{
    MPI_Comm d = MPI_COMM_NULL;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    if (with_info)
        TEXPECT(MPI_Comm_idup_with_info(tc, info, &d, &r) == MPI_SUCCESS);
    else
        TEXPECT(MPI_Comm_idup(tc, &d, &r) == MPI_SUCCESS);
    MPI_Info_free(&info);
    TEXPECT(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS && r == MPI_REQUEST_NULL);
    TEXPECT(d != MPI_COMM_NULL && d != tc);
    int drank = -1, dsize = -1, flag = 0;
    MPI_Comm_rank(d, &drank);
    MPI_Comm_size(d, &dsize);
    TEXPECT(drank == rank && dsize == size);
    TEXPECT(MPIX_Comm_test_threadcomm(d, &flag) == MPI_SUCCESS && flag == 1);
    if (with_info) {
        MPI_Info got;
        char v[16] = "";
        TEXPECT(MPI_Comm_get_info(d, &got) == MPI_SUCCESS);
        MPI_Info_get_string(got, "mpi_assert_no_any_tag", &(int){16}, v, &flag);
        TEXPECT(flag && strcmp(v, "true") == 0);
        MPI_Info_free(&got);
    }
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int a = 10 * rank + 1, b = 10 * rank + 2, in = -1;
    TEXPECT(MPI_Send(&a, 1, MPI_INT, right, 5, tc) == MPI_SUCCESS);
    TEXPECT(MPI_Send(&b, 1, MPI_INT, right, 5, d) == MPI_SUCCESS);
    TEXPECT(MPI_Recv(&in, 1, MPI_INT, left, 5, d, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    TEXPECT(in == 10 * left + 2);
    TEXPECT(MPI_Recv(&in, 1, MPI_INT, left, 5, tc, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    TEXPECT(in == 10 * left + 1);
    int sum = -1;
    TEXPECT(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, d) == MPI_SUCCESS);
    TEXPECT(sum == size * (size - 1) / 2);
    TEXPECT(MPI_Comm_free(&d) == MPI_SUCCESS);
}

static void region(void *arg)
{
    (void)arg;
    TEXPECT(MPIX_Threadcomm_start(tc) == MPI_SUCCESS);
    int rank = -1, size = -1;
    MPI_Comm_rank(tc, &rank);
    MPI_Comm_size(tc, &size);
    MPI_Comm_set_errhandler(tc, MPI_ERRORS_RETURN);
    persistent(rank, size);
    matched(rank, size);
    idup(rank, size, 0);
    idup(rank, size, 1);
    TEXPECT(MPIX_Threadcomm_finish(tc) == MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int nt = argc > 1 ? atoi(argv[1]) : 2;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_INT(MPIX_Threadcomm_init(MPI_COMM_WORLD, nt, &tc), MPI_SUCCESS);
    for (int round = 0; round < 2; round++)
        run_threads(nt, region, NULL);
    CHECK_INT(atomic_load(&errors_in_threads), 0);
    CHECK_INT(MPIX_Threadcomm_free(&tc), MPI_SUCCESS);
    MPI_Finalize();
    if (wtest_errs == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
