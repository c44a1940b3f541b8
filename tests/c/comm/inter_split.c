/* MPI_Comm_split and MPI_Comm_create on intercommunicators, MPI_Comm_idup that must not
 * block (overlapping idups, idup then a send the peer needs before its idup), idup on an
 * intercommunicator, and an unguided split_type reporting its level. Needs >= 4 ranks. */
#include "wtest.h"
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, n, res;
    MPI_Comm half, inter, sub, d;
    MPI_Request req;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* even world ranks form side 0, odd ones side 1 */
    int side = rank % 2;
    EXPECT_OK(MPI_Comm_split(MPI_COMM_WORLD, side, rank, &half));
    EXPECT_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - side, 7, &inter));
    int lrank, lsize, rsize;
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);

    /* split by colour lrank % 2, key -lrank: reversed order inside each colour */
    EXPECT_OK(MPI_Comm_split(inter, lrank % 2, -lrank, &sub));
    if (sub == MPI_COMM_NULL) {
        FAIL("split of an intercommunicator gave MPI_COMM_NULL (colour %d)", lrank % 2);
    } else {
        int flag, sr, ss, srs;
        EXPECT_OK(MPI_Comm_test_inter(sub, &flag));
        CHECK_INT(flag, 1);
        MPI_Comm_rank(sub, &sr);
        MPI_Comm_size(sub, &ss);
        MPI_Comm_remote_size(sub, &srs);
        int same = (lsize - (lrank % 2) + 1) / 2; /* local ranks with my colour */
        CHECK_INT(ss, same);
        CHECK_INT(sr, same - 1 - lrank / 2);
        CHECK_INT(srs, (rsize - (lrank % 2) + 1) / 2);
        /* point-to-point across: remote rank r sends its world rank to my sub rank r */
        int out = rank, in = -1;
        if (sr < srs) {
            EXPECT_OK(MPI_Sendrecv(&out, 1, MPI_INT, sr, 3, &in, 1, MPI_INT, sr, 3, sub,
                                   MPI_STATUS_IGNORE));
            CHECK(in >= 0 && in % 2 == 1 - side, "peer world rank %d on the other side", in);
        }
        MPI_Comm_free(&sub);
    }
    /* MPI_UNDEFINED everywhere on one colour: that colour gets MPI_COMM_NULL */
    EXPECT_OK(MPI_Comm_split(inter, lrank == 0 ? 0 : MPI_UNDEFINED, 0, &sub));
    if (lrank == 0) {
        CHECK(sub != MPI_COMM_NULL, "leaders' split");
        MPI_Comm_size(sub, &n);
        CHECK_INT(n, 1);
        MPI_Comm_free(&sub);
    } else {
        CHECK(sub == MPI_COMM_NULL, "undefined colour");
    }

    /* MPI_Comm_create: side 0 keeps its first member, side 1 all but its first */
    {
        MPI_Group lg, g;
        int r0 = 0;
        MPI_Comm_group(inter, &lg);
        if (side == 0)
            MPI_Group_incl(lg, 1, &r0, &g);
        else
            MPI_Group_excl(lg, 1, &r0, &g);
        EXPECT_OK(MPI_Comm_create(inter, g, &sub));
        int in = (side == 0) ? lrank == 0 : lrank != 0;
        if (!in) {
            CHECK(sub == MPI_COMM_NULL, "not in the group");
        } else if (sub == MPI_COMM_NULL) {
            FAIL("MPI_Comm_create on an intercommunicator gave MPI_COMM_NULL");
        } else {
            int ss, srs, sr;
            MPI_Comm_size(sub, &ss);
            MPI_Comm_remote_size(sub, &srs);
            MPI_Comm_rank(sub, &sr);
            CHECK_INT(ss, side == 0 ? 1 : lsize - 1);
            CHECK_INT(srs, side == 0 ? rsize - 1 : 1);
            CHECK_INT(sr, side == 0 ? 0 : lrank - 1);
            MPI_Comm_free(&sub);
        }
        MPI_Group_free(&g);
        MPI_Group_free(&lg);
    }

    /* idup must not block: rank 0 waits for a synchronous send from everyone before its
     * idup; the others idup first */
    if (rank == 0) {
        for (int i = 1; i < size; i++) {
            int x;
            EXPECT_OK(MPI_Recv(&x, 1, MPI_INT, i, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_INT(x, i);
        }
        EXPECT_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &req));
    } else {
        EXPECT_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &req));
        EXPECT_OK(MPI_Ssend(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD));
    }
    EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    EXPECT_OK(MPI_Comm_compare(d, MPI_COMM_WORLD, &res));
    CHECK_INT(res, MPI_CONGRUENT);
    {
        int x = rank, sum = 0;
        EXPECT_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, d));
        CHECK_INT(sum, size * (size - 1) / 2);
    }
    MPI_Comm_free(&d);

    /* overlapping idups: two communicators duplicated in opposite orders */
    {
        MPI_Comm a, b, da, db;
        MPI_Request r[2];
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        MPI_Comm_dup(MPI_COMM_WORLD, &b);
        if (rank % 2) {
            EXPECT_OK(MPI_Comm_idup(a, &da, &r[0]));
            EXPECT_OK(MPI_Comm_idup(b, &db, &r[1]));
        } else {
            /* a blocking creation on another communicator while the idup is pending */
            EXPECT_OK(MPI_Comm_idup(b, &db, &r[1]));
            MPI_Comm c;
            MPI_Group wg, evens;
            int range[1][3] = {{0, size - 1, 2}};
            MPI_Comm_group(MPI_COMM_WORLD, &wg);
            MPI_Group_range_incl(wg, 1, range, &evens);
            EXPECT_OK(MPI_Comm_create_group(a, evens, 1, &c));
            MPI_Comm_size(c, &n);
            CHECK_INT(n, (size + 1) / 2);
            MPI_Comm_free(&c);
            MPI_Group_free(&evens);
            MPI_Group_free(&wg);
            EXPECT_OK(MPI_Comm_idup(a, &da, &r[0]));
        }
        EXPECT_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        int ra, rb;
        MPI_Comm_rank(da, &ra);
        MPI_Comm_rank(db, &rb);
        CHECK_INT(ra, rank);
        CHECK_INT(rb, rank);
        MPI_Comm_free(&da);
        MPI_Comm_free(&db);
        MPI_Comm_free(&a);
        MPI_Comm_free(&b);
    }

    /* idup of an intercommunicator, with its attribute copied */
    EXPECT_OK(MPI_Comm_idup(inter, &d, &req));
    EXPECT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    EXPECT_OK(MPI_Comm_compare(d, inter, &res));
    CHECK_INT(res, MPI_CONGRUENT);
    if (lrank < lsize && lrank < rsize) {
        int out = rank, in = -1;
        EXPECT_OK(MPI_Sendrecv(&out, 1, MPI_INT, lrank, 5, &in, 1, MPI_INT, lrank, 5, d,
                               MPI_STATUS_IGNORE));
        CHECK(in % 2 == 1 - side, "message from the other side (%d)", in);
    }
    MPI_Comm_free(&d);

    /* unguided split_type reports the level it used */
    {
        MPI_Info info;
        MPI_Info_create(&info);
        EXPECT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &sub));
        if (sub != MPI_COMM_NULL) {
            char v[64];
            int len = sizeof v, flag = 0;
            EXPECT_OK(MPI_Info_get_string(info, "mpi_hw_resource_type", &len, v, &flag));
            CHECK(flag && len > 1, "mpi_hw_resource_type set (%d)", flag);
            MPI_Comm_size(sub, &n);
            CHECK(n < size, "unguided split is a proper subset (%d of %d)", n, size);
            MPI_Comm_free(&sub);
        }
        MPI_Info_free(&info);
    }

    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
