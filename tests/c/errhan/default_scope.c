/* Errors tied to no communicator, window, file or session (datatype and info calls, a failing
 * datatype attribute callback, garbage or freed handles) go to MPI_COMM_SELF's errhandler
 * (MPI 4.1); while the program has set none on MPI_COMM_SELF but has set one on
 * MPI_COMM_WORLD, to MPI_COMM_WORLD's (MPI <= 3.1, as MPICH and Open MPI do). */
#include "wtest.h"

static int w_calls = 0, s_calls = 0, last_class = -1;
static MPI_Comm last_comm = MPI_COMM_NULL;

static void w_eh(MPI_Comm *c, int *code, ...)
{
    w_calls++;
    last_comm = *c;
    MPI_Error_class(*code, &last_class);
}

static void s_eh(MPI_Comm *c, int *code, ...)
{
    s_calls++;
    last_comm = *c;
    MPI_Error_class(*code, &last_class);
}

static int fail_delete(MPI_Datatype t, int kv, void *v, void *x)
{
    (void)t; (void)kv; (void)v; (void)x;
    return MPI_ERR_OTHER;
}

/* Make one error of each kind; each must reach a handler (or return) with its class. */
static int errors_made = 0;
static void make_errors(MPI_Datatype dup, int key)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int n;
    MPI_Win freed = MPI_WIN_NULL;
    int buf;
    EXPECT_CLASS(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_INFO);
    EXPECT_CLASS(MPI_Type_set_attr(dup, key, NULL), MPI_ERR_OTHER); /* replaces: delete fails */
    EXPECT_CLASS(MPI_Comm_size((MPI_Comm)WTEST_GARBAGE, &n), MPI_ERR_COMM);
    MPI_Win_create(&buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_SELF, &freed);
    {
        MPI_Win w = freed;
        MPI_Win_free(&w);
    }
    EXPECT_CLASS(MPI_Win_set_name(freed, "x"), MPI_ERR_WIN);
    errors_made += 5;
}

int main(int argc, char **argv)
{
    MPI_Errhandler w, s, got;
    MPI_Datatype dup;
    int key;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    EXPECT_OK(MPI_Comm_create_errhandler(w_eh, &w));
    EXPECT_OK(MPI_Comm_create_errhandler(s_eh, &s));
    EXPECT_OK(MPI_Type_dup(MPI_INT, &dup));
    EXPECT_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, fail_delete, &key, NULL));
    EXPECT_OK(MPI_Type_set_attr(dup, key, NULL));

    /* Only WORLD's set: WORLD's handler, with MPI_COMM_WORLD. SELF still reports fatal. */
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, w));
    make_errors(dup, key);
    CHECK_INT(w_calls, errors_made);
    CHECK_INT(s_calls, 0);
    CHECK(last_comm == MPI_COMM_WORLD, "handler saw %p", (void *)last_comm);
    CHECK_INT(last_class, MPI_ERR_WIN);
    EXPECT_OK(MPI_Comm_get_errhandler(MPI_COMM_SELF, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "SELF's errhandler %p", (void *)got);

    /* WORLD returns: so do these errors (the MPICH test attr/attrerrtype relies on it). */
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    make_errors(dup, key);
    CHECK_INT(w_calls, errors_made - 5);

    /* Once SELF's is set it is the one, whatever WORLD's is. */
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, w));
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, s));
    make_errors(dup, key);
    CHECK_INT(w_calls, 5);
    CHECK_INT(s_calls, 5);
    CHECK(last_comm == MPI_COMM_SELF, "handler saw %p", (void *)last_comm);
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    make_errors(dup, key);
    CHECK_INT(w_calls, 5);
    CHECK_INT(s_calls, 5);

    /* Errors on a communicator stay on it. */
    EXPECT_CLASS(MPI_Comm_rank(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK_INT(w_calls, 6);

    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT_OK(MPI_Errhandler_free(&w));
    EXPECT_OK(MPI_Errhandler_free(&s));
    {
        /* Let the attribute go. */
        MPI_Type_free_keyval(&key);
        MPI_Type_free(&dup); /* its delete callback fails: the error returns */
    }
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
