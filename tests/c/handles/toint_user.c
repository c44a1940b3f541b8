/* User handles of every kind round-trip through MPI_X_toint/MPI_X_fromint (ops, requests of
 * every kind and sessions included), the same handle always gets the same int, and the int
 * of a freed object never names the object that reuses its slot: using it is an error. */
#include "wtest.h"

#define ROUND(kind, TYPE, h)                                                             \
    do {                                                                                 \
        TYPE h_ = (h);                                                                   \
        int i_ = MPI_##kind##_toint(h_);                                                 \
        TYPE back_ = MPI_##kind##_fromint(i_);                                           \
        if (back_ != h_)                                                                 \
            FAIL("MPI_" #kind "_fromint(MPI_" #kind "_toint(%s)) = %p, not %p (int %d)", \
                 #h, (void *)back_, (void *)h_, i_);                                     \
        CHECK(MPI_##kind##_toint(h_) == i_, "MPI_" #kind "_toint(%s) is not stable", #h);  \
    } while (0)

static void sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static int query(void *state, MPI_Status *s)
{
    (void)state;
    MPI_Status_set_elements(s, MPI_BYTE, 0);
    MPI_Status_set_cancelled(s, 0);
    s->MPI_SOURCE = MPI_UNDEFINED;
    s->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int free_fn(void *state) { (void)state; return MPI_SUCCESS; }
static int cancel_fn(void *state, int complete) { (void)state; (void)complete; return MPI_SUCCESS; }

int main(int argc, char **argv)
{
    MPI_Op op1, op2, op3;
    MPI_Request preq, greq, rreq;
    MPI_Session session;
    MPI_Comm dup;
    MPI_Datatype vec;
    MPI_Group group;
    MPI_Win win;
    MPI_Message msg;
    int buf = 0, one = 1, commute = -1, v = 0;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    /* Ops. */
    EXPECT_OK(MPI_Op_create(sum, 1, &op1));
    EXPECT_OK(MPI_Op_create(sum, 0, &op2));
    ROUND(Op, MPI_Op, op1);
    ROUND(Op, MPI_Op, op2);
    CHECK(MPI_Op_toint(op1) != MPI_Op_toint(op2), "two ops share an int");
    EXPECT_OK(MPI_Op_commutative(MPI_Op_fromint(MPI_Op_toint(op2)), &commute));
    CHECK_INT(commute, 0);

    /* Requests: persistent, generalized, a pending receive. */
    EXPECT_OK(MPI_Send_init(&one, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &preq));
    EXPECT_OK(MPI_Grequest_start(query, free_fn, cancel_fn, NULL, &greq));
    EXPECT_OK(MPI_Irecv(&buf, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &rreq));
    ROUND(Request, MPI_Request, preq);
    ROUND(Request, MPI_Request, greq);
    ROUND(Request, MPI_Request, rreq);
    {
        /* The request from the int is usable: start it, complete the receive with it. */
        MPI_Request p = MPI_Request_fromint(MPI_Request_toint(preq));
        MPI_Request r = MPI_Request_fromint(MPI_Request_toint(rreq));
        EXPECT_OK(MPI_Start(&p));
        EXPECT_OK(MPI_Wait(&p, MPI_STATUS_IGNORE));
        EXPECT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK_INT(buf, 1);
        CHECK(p == preq, "a persistent request keeps its handle");
    }
    {
        MPI_Request g = MPI_Request_fromint(MPI_Request_toint(greq));
        EXPECT_OK(MPI_Grequest_complete(g));
        EXPECT_OK(MPI_Wait(&g, MPI_STATUS_IGNORE));
    }

    /* Sessions. */
    EXPECT_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session));
    ROUND(Session, MPI_Session, session);
    {
        int n = -1;
        EXPECT_OK(MPI_Session_get_num_psets(MPI_Session_fromint(MPI_Session_toint(session)),
                                            MPI_INFO_NULL, &n));
        CHECK(n >= 2, "a session from its int has %d process sets", n);
    }

    /* The kinds that already round-tripped, and messages. */
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_SELF, &dup));
    EXPECT_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    EXPECT_OK(MPI_Comm_group(MPI_COMM_WORLD, &group));
    EXPECT_OK(MPI_Win_create(&v, sizeof v, 1, MPI_INFO_NULL, MPI_COMM_SELF, &win));
    EXPECT_OK(MPI_Send(&one, 1, MPI_INT, 0, 9, MPI_COMM_SELF));
    EXPECT_OK(MPI_Mprobe(0, 9, MPI_COMM_SELF, &msg, MPI_STATUS_IGNORE));
    ROUND(Comm, MPI_Comm, dup);
    ROUND(Type, MPI_Datatype, vec);
    ROUND(Group, MPI_Group, group);
    ROUND(Win, MPI_Win, win);
    ROUND(Message, MPI_Message, msg);
    {
        MPI_Message m = MPI_Message_fromint(MPI_Message_toint(msg));
        buf = 0;
        EXPECT_OK(MPI_Mrecv(&buf, 1, MPI_INT, &m, MPI_STATUS_IGNORE));
        CHECK_INT(buf, 1);
    }

    /* A freed object's int never names the object that takes its place. */
    {
        int i1 = MPI_Op_toint(op1), ir = MPI_Request_toint(preq), is = MPI_Session_toint(session);
        MPI_Op stale_op;
        MPI_Request stale_req, preq2;
        MPI_Session session2;
        EXPECT_OK(MPI_Op_free(&op1));
        EXPECT_OK(MPI_Op_create(sum, 1, &op3));
        stale_op = MPI_Op_fromint(i1);
        CHECK(stale_op != op3, "the int of a freed op names the new op");
        CHECK(stale_op != MPI_OP_NULL, "the int of a freed op gives MPI_OP_NULL");
        EXPECT_CLASS(MPI_Op_commutative(stale_op, &commute), MPI_ERR_OP);

        EXPECT_OK(MPI_Request_free(&preq));
        EXPECT_OK(MPI_Send_init(&one, 1, MPI_INT, 0, 8, MPI_COMM_SELF, &preq2));
        stale_req = MPI_Request_fromint(ir);
        CHECK(stale_req != preq2, "the int of a freed request names the new request");
        CHECK(stale_req != MPI_REQUEST_NULL, "the int of a freed request gives MPI_REQUEST_NULL");
        EXPECT_CLASS(MPI_Wait(&stale_req, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
        EXPECT_OK(MPI_Request_free(&preq2));

        {
            /* A communicator's slot is reused at once: the old int must not follow it. */
            MPI_Comm c1, c2, stale;
            int ic, n = -1;
            EXPECT_OK(MPI_Comm_dup(MPI_COMM_SELF, &c1));
            ic = MPI_Comm_toint(c1);
            EXPECT_OK(MPI_Comm_free(&c1));
            EXPECT_OK(MPI_Comm_dup(MPI_COMM_SELF, &c2));
            stale = MPI_Comm_fromint(ic);
            CHECK(stale != c2, "the int of a freed communicator names the new one");
            EXPECT_CLASS(MPI_Comm_size(stale, &n), MPI_ERR_COMM);
            EXPECT_OK(MPI_Comm_free(&c2));
        }

        EXPECT_OK(MPI_Session_finalize(&session));
        EXPECT_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session2));
        CHECK(MPI_Session_fromint(is) != session2, "the int of a finalized session names the new one");
        EXPECT_OK(MPI_Session_finalize(&session2));
    }
    /* Ints that were never handed out name nothing. */
    CHECK(MPI_Op_fromint(0x7ffffff0) != MPI_OP_NULL, "a garbage int gives MPI_OP_NULL");
    EXPECT_CLASS(MPI_Op_commutative(MPI_Op_fromint(0x7ffffff0), &commute), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Comm_size(MPI_Comm_fromint(MPI_Op_toint(op2)), &v), MPI_ERR_COMM);

    EXPECT_OK(MPI_Op_free(&op2));
    EXPECT_OK(MPI_Op_free(&op3));
    EXPECT_OK(MPI_Win_free(&win));
    EXPECT_OK(MPI_Group_free(&group));
    EXPECT_OK(MPI_Type_free(&vec));
    EXPECT_OK(MPI_Comm_free(&dup));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
