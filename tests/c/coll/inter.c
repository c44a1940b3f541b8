/* Intercommunicator collectives: world split into two groups (even and odd ranks); every
 * rooted form with MPI_ROOT / MPI_PROC_NULL / a remote root, allgather, alltoall, allreduce
 * (each group gets the other's reduction), reduce_scatter_block, barrier, nonblocking with a
 * user op, persistent bcast. Needs at least 2 ranks. */
#include "wtest.h"

static int wrank, wsize, lrank, lsize, rsize, left;
static MPI_Comm inter;

static int v(int group_left, int r, int i) { return (group_left ? 1000 : 2000) + r * 10 + i; }

static void subtract(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt; /* non-commutative: inout = in - inout ... folded in rank order */
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = a[i] * 3 + b[i];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    wtest_world_rank();
    if (wsize < 2) {
        MPI_Finalize();
        return wtest_finish();
    }
    MPI_Comm local;
    left = wrank % 2 == 0;
    MPI_Comm_split(MPI_COMM_WORLD, !left, wrank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, left ? 1 : 0, 7, &inter);
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    int buf[64], out[64];

    for (int root_side = 0; root_side < 2; root_side++) {
        int i_am_root_group = (left == (root_side == 0));
        int root = i_am_root_group ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        /* bcast */
        for (int i = 0; i < 4; i++)
            buf[i] = (root == MPI_ROOT) ? v(left, 0, i) : -1;
        EXPECT_OK(MPI_Bcast(buf, 4, MPI_INT, root, inter));
        if (!i_am_root_group)
            for (int i = 0; i < 4; i++)
                CHECK_INT(buf[i], v(!left, 0, i));
        /* gather: root collects one int from each remote rank */
        int mine = v(left, lrank, 0);
        for (int i = 0; i < rsize; i++)
            out[i] = -1;
        EXPECT_OK(MPI_Gather(&mine, 1, MPI_INT, out, 1, MPI_INT, root, inter));
        if (root == MPI_ROOT)
            for (int i = 0; i < rsize; i++)
                CHECK_INT(out[i], v(!left, i, 0));
        /* scatter */
        for (int i = 0; i < rsize; i++)
            buf[i] = v(left, i, 5);
        int got = -1;
        EXPECT_OK(MPI_Scatter(buf, 1, MPI_INT, &got, 1, MPI_INT, root, inter));
        if (!i_am_root_group)
            CHECK_INT(got, v(!left, lrank, 5));
        /* reduce: the root gets the sum over the remote group */
        int s = -1;
        EXPECT_OK(MPI_Reduce(&mine, &s, 1, MPI_INT, MPI_SUM, root, inter));
        if (root == MPI_ROOT) {
            int want = 0;
            for (int r = 0; r < rsize; r++)
                want += v(!left, r, 0);
            CHECK_INT(s, want);
        }
        /* Only `root` is significant at MPI_PROC_NULL: a type the op is not defined on (as
         * mpi4py passes there) must not fail the call (it did, and the others then hung). */
        if (root == MPI_PROC_NULL) {
            unsigned char ignored = 0;
            EXPECT_OK(MPI_Reduce(&ignored, NULL, 1, MPI_BYTE, MPI_SUM, root, inter));
        } else {
            s = -1;
            EXPECT_OK(MPI_Reduce(&mine, &s, 1, MPI_INT, MPI_SUM, root, inter));
            if (root == MPI_ROOT) {
                int want = 0;
                for (int r = 0; r < rsize; r++)
                    want += v(!left, r, 0);
                CHECK_INT(s, want);
            }
        }
    }
    /* allgather / alltoall */
    int mine = v(left, lrank, 1);
    EXPECT_OK(MPI_Allgather(&mine, 1, MPI_INT, out, 1, MPI_INT, inter));
    for (int r = 0; r < rsize; r++)
        CHECK_INT(out[r], v(!left, r, 1));
    for (int r = 0; r < rsize; r++)
        buf[r] = v(left, lrank, r);
    EXPECT_OK(MPI_Alltoall(buf, 1, MPI_INT, out, 1, MPI_INT, inter));
    for (int r = 0; r < rsize; r++)
        CHECK_INT(out[r], v(!left, r, lrank));
    /* allreduce: the other group's sum */
    int s = 0, want = 0;
    for (int r = 0; r < rsize; r++)
        want += v(!left, r, 1);
    EXPECT_OK(MPI_Allreduce(&mine, &s, 1, MPI_INT, MPI_SUM, inter));
    CHECK_INT(s, want);
    /* reduce_scatter_block: count = lsize * 2 ints here; both groups must agree in total,
     * so use a block of 2 * rsize / ... keep it simple: 12 elements split over the group */
    if (12 % lsize == 0 && 12 % rsize == 0) {
        int blk = 12 / lsize;
        int in[12];
        for (int i = 0; i < 12; i++)
            in[i] = v(left, lrank, i);
        EXPECT_OK(MPI_Reduce_scatter_block(in, out, blk, MPI_INT, MPI_SUM, inter));
        for (int k = 0; k < blk; k++) {
            int w = 0;
            for (int r = 0; r < rsize; r++)
                w += v(!left, r, lrank * blk + k);
            CHECK_INT(out[k], w);
        }
    }
    EXPECT_OK(MPI_Barrier(inter));
    /* nonblocking allreduce with a non-commutative user op: the other group's values
     * folded in rank order: ((x0*3 + x1)*3 + x2)... */
    MPI_Op op;
    MPI_Op_create(subtract, 0, &op);
    MPI_Request req;
    s = -1;
    EXPECT_OK(MPI_Iallreduce(&mine, &s, 1, MPI_INT, op, inter, &req));
    EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    want = v(!left, 0, 1);
    for (int r = 1; r < rsize; r++)
        want = want * 3 + v(!left, r, 1);
    CHECK_INT(s, want);
    MPI_Op_free(&op);
    /* persistent bcast from the left group's rank 0, restarted */
    int root = left ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    EXPECT_OK(MPI_Bcast_init(buf, 1, MPI_INT, root, inter, MPI_INFO_NULL, &req));
    for (int k = 0; k < 3; k++) {
        buf[0] = root == MPI_ROOT ? 50 + k : -1;
        EXPECT_OK(MPI_Start(&req));
        EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (!left)
            CHECK_INT(buf[0], 50 + k);
    }
    MPI_Request_free(&req);
    /* scan is not defined on intercommunicators */
    EXPECT_CLASS(MPI_Scan(&mine, &s, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM);
    /* MPI_IN_PLACE is not defined on intercommunicators: alltoallv and alltoallw refuse it
     * alike, before anything moves (alltoallw ran with no send parts and hung) */
    int counts[64], displs[64], bytes[64];
    MPI_Datatype types[64];
    for (int r = 0; r < rsize; r++) {
        counts[r] = 1;
        displs[r] = r;
        bytes[r] = (int)(r * sizeof(int));
        types[r] = MPI_INT;
    }
    EXPECT_ERR(MPI_Alltoallv(MPI_IN_PLACE, counts, displs, MPI_INT, out, counts, displs, MPI_INT,
                             inter),
               MPI_ERR_BUFFER, "MPI_Alltoallv", "sendbuf=MPI_IN_PLACE");
    EXPECT_ERR(MPI_Alltoallw(MPI_IN_PLACE, counts, bytes, types, out, counts, bytes, types,
                             inter),
               MPI_ERR_BUFFER, "MPI_Alltoallw", "sendbuf=MPI_IN_PLACE");
    EXPECT_OK(MPI_Barrier(inter));
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    MPI_Finalize();
    return wtest_finish();
}
