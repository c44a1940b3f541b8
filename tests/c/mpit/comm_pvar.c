/* The performance variables bound to a communicator, weft_comm_msgs_sent and
 * weft_comm_bytes_sent, count exactly the point-to-point messages this process sends on that
 * communicator while the handle is started: not those on another communicator (even on the
 * same group), not the messages of collectives, not what was sent before the start or after
 * the stop; all send modes and nonblocking sends count. */
#include "wtest.h"

static MPI_T_pvar_session s;

static MPI_T_pvar_handle handle(const char *name, MPI_Comm *comm)
{
    int i = -1, count = 0, verb, var_class, bind, readonly, continuous, atomic;
    char nm[128], desc[512];
    int nl = sizeof nm, dl = sizeof desc;
    MPI_Datatype dt;
    MPI_T_enum et;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    EXPECT_OK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &i));
    EXPECT_OK(MPI_T_pvar_get_info(i, nm, &nl, &verb, &var_class, &dt, &et, desc, &dl, &bind,
                                  &readonly, &continuous, &atomic));
    CHECK_INT(bind, MPI_T_BIND_MPI_COMM);
    CHECK_INT(continuous, 0);
    EXPECT_OK(MPI_T_pvar_handle_alloc(s, i, comm, &h, &count));
    CHECK_INT(count, 1);
    return h;
}

static unsigned long long value(MPI_T_pvar_handle h)
{
    unsigned long long v = 12345678;
    EXPECT_OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    EXPECT_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    EXPECT_OK(MPI_T_pvar_session_create(&s));
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_T_pvar_handle am = handle("weft_comm_msgs_sent", &a),
                      ab = handle("weft_comm_bytes_sent", &a),
                      bm = handle("weft_comm_msgs_sent", &b);
    char buf[1000] = {0};
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;

    /* Before the start: not counted. */
    MPI_Sendrecv(buf, 10, MPI_CHAR, peer, 0, buf, 10, MPI_CHAR, from, 0, a, MPI_STATUS_IGNORE);
    EXPECT_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    CHECK_INT(value(am), 0);

    /* Rank r sends r + 3 messages of 100 bytes on a (blocking, synchronous, nonblocking),
     * 2 on b, and takes part in collectives on a. */
    int mine = rank + 3;
    MPI_Request reqs[64];
    for (int i = 0; i < mine; i++) {
        if (i % 3 == 0)
            MPI_Isend(buf, 100, MPI_CHAR, peer, 1, a, &reqs[i]);
        else if (i % 3 == 1)
            MPI_Issend(buf, 100, MPI_CHAR, peer, 1, a, &reqs[i]);
        else
            MPI_Isend(buf, 25, MPI_INT, peer, 1, a, &reqs[i]);
    }
    int theirs = from + 3;
    for (int i = 0; i < theirs; i++)
        MPI_Recv(buf + 200, 100, MPI_CHAR, from, 1, a, MPI_STATUS_IGNORE);
    MPI_Waitall(mine, reqs, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 2; i++)
        MPI_Sendrecv(buf, 7, MPI_CHAR, peer, 2, buf + 500, 7, MPI_CHAR, from, 2, b,
                     MPI_STATUS_IGNORE);
    int x = 1, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, a);
    MPI_Bcast(buf, 1000, MPI_CHAR, 0, a);
    MPI_Barrier(a);
    EXPECT_OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));

    CHECK_INT(value(am), mine);
    CHECK_INT(value(ab), mine * 100);
    CHECK_INT(value(bm), 2);

    /* Stopped: more sends leave the values alone. */
    MPI_Sendrecv(buf, 10, MPI_CHAR, peer, 3, buf + 500, 10, MPI_CHAR, from, 3, a,
                 MPI_STATUS_IGNORE);
    CHECK_INT(value(am), mine);

    EXPECT_OK(MPI_T_pvar_handle_free(s, &am));
    EXPECT_OK(MPI_T_pvar_handle_free(s, &ab));
    EXPECT_OK(MPI_T_pvar_handle_free(s, &bm));
    EXPECT_OK(MPI_T_pvar_session_free(&s));
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    EXPECT_OK(MPI_T_finalize());
    MPI_Finalize();
    return wtest_finish();
}
