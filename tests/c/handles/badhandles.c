/* Every implemented function that takes a handle, given a garbage, freed, null or wrong-kind
 * handle: the exact error class, a message naming the function and the argument, outputs
 * untouched, and no crash. */
#include "wtest.h"

static void handler(MPI_Comm *c, int *e, ...) { (void)c; (void)e; }

int main(int argc, char **argv)
{
    MPI_Info info, freed_info, live_info;
    MPI_Errhandler eh, freed_eh;
    int v = -7, flag = -7, n;
    char buf[MPI_MAX_INFO_VAL];
    void *attr = NULL;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    EXPECT_OK(MPI_Info_create(&info));
    freed_info = info;
    EXPECT_OK(MPI_Info_free(&info));
    EXPECT_OK(MPI_Info_create(&live_info));
    EXPECT_OK(MPI_Info_set(live_info, "k", "v"));
    EXPECT_OK(MPI_Comm_create_errhandler(handler, &eh));
    freed_eh = eh;
    EXPECT_OK(MPI_Errhandler_free(&eh));
    EXPECT_OK(MPI_Comm_create_errhandler(handler, &eh));

    /* Communicator arguments: garbage, null, an info handle (live and freed), an errhandler
     * handle, the address of a variable, small predefined values of other kinds. */
    const MPI_Comm bad_comms[] = {
        (MPI_Comm)WTEST_GARBAGE, MPI_COMM_NULL, (MPI_Comm)live_info, (MPI_Comm)freed_info,
        (MPI_Comm)eh, (MPI_Comm)(intptr_t)&v, (MPI_Comm)MPI_INFO_ENV, (MPI_Comm)MPI_ERRORS_RETURN,
        (MPI_Comm)(intptr_t)0x103, (MPI_Comm)(intptr_t)-1, (MPI_Comm)(intptr_t)0,
    };
    for (int i = 0; i < (int)(sizeof bad_comms / sizeof bad_comms[0]); i++) {
        MPI_Comm c = bad_comms[i];
        MPI_Errhandler got = (MPI_Errhandler)WTEST_GARBAGE;
        char name[MPI_MAX_OBJECT_NAME] = "unchanged";
        int len = -7;
        v = -7;
        flag = -7;
        attr = NULL;
        fprintf(stderr, "bad communicator %d: %p\n", i, (void *)c);
        EXPECT_ERR(MPI_Comm_size(c, &v), MPI_ERR_COMM, "MPI_Comm_size", "comm");
        EXPECT_ERR(MPI_Comm_rank(c, &v), MPI_ERR_COMM, "MPI_Comm_rank", "comm");
        EXPECT_ERR(MPI_Comm_set_name(c, "x"), MPI_ERR_COMM, "MPI_Comm_set_name", "comm");
        if (c == MPI_COMM_NULL) {
            /* As in MPICH, the null communicator's name is "MPI_COMM_NULL". */
            EXPECT_OK(MPI_Comm_get_name(c, name, &len));
            CHECK_STR(name, "MPI_COMM_NULL");
            strcpy(name, "unchanged");
            len = -7;
        } else {
            EXPECT_ERR(MPI_Comm_get_name(c, name, &len), MPI_ERR_COMM, "MPI_Comm_get_name", "comm");
        }
        EXPECT_ERR(MPI_Comm_get_attr(c, MPI_TAG_UB, &attr, &flag), MPI_ERR_COMM, "MPI_Comm_get_attr", "comm");
        EXPECT_ERR(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN), MPI_ERR_COMM, "MPI_Comm_set_errhandler", "comm");
        EXPECT_ERR(MPI_Comm_get_errhandler(c, &got), MPI_ERR_COMM, "MPI_Comm_get_errhandler", "comm");
        EXPECT_ERR(MPI_Comm_call_errhandler(c, MPI_ERR_OTHER), MPI_ERR_COMM, "MPI_Comm_call_errhandler", "comm");
        CHECK(v == -7 && flag == -7 && len == -7 && attr == NULL && !strcmp(name, "unchanged") &&
                  got == (MPI_Errhandler)WTEST_GARBAGE,
              "outputs written on failure (comm %d)", i);
    }
    /* The good communicators still answer. */
    EXPECT_OK(MPI_Comm_size(MPI_COMM_SELF, &v));
    CHECK_INT(v, 1);

    /* Errhandler arguments: MPI_ERR_ARG. */
    const MPI_Errhandler bad_ehs[] = {
        (MPI_Errhandler)WTEST_GARBAGE, MPI_ERRHANDLER_NULL, freed_eh, (MPI_Errhandler)live_info,
        (MPI_Errhandler)freed_info, (MPI_Errhandler)MPI_COMM_WORLD, (MPI_Errhandler)(intptr_t)0x144,
        (MPI_Errhandler)(intptr_t)&v,
    };
    for (int i = 0; i < (int)(sizeof bad_ehs / sizeof bad_ehs[0]); i++) {
        MPI_Errhandler e = bad_ehs[i];
        fprintf(stderr, "bad errhandler %d: %p\n", i, (void *)e);
        EXPECT_ERR(MPI_Comm_set_errhandler(MPI_COMM_WORLD, e), MPI_ERR_ARG, "MPI_Comm_set_errhandler", "errhandler");
        if (e != MPI_ERRHANDLER_NULL) {
            MPI_Errhandler copy = e;
            EXPECT_ERR(MPI_Errhandler_free(&copy), MPI_ERR_ARG, "MPI_Errhandler_free", "errhandler");
            CHECK(copy == e, "MPI_Errhandler_free changed its argument on failure");
        }
    }
    {
        /* WORLD kept MPI_ERRORS_RETURN through all of that. */
        MPI_Errhandler got;
        EXPECT_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
        CHECK(got == MPI_ERRORS_RETURN, "WORLD's errhandler is %p", (void *)got);
    }

    /* Info arguments: MPI_ERR_INFO. */
    const MPI_Info bad_infos[] = {
        (MPI_Info)WTEST_GARBAGE, MPI_INFO_NULL, freed_info, (MPI_Info)eh, (MPI_Info)freed_eh,
        (MPI_Info)MPI_COMM_WORLD, (MPI_Info)MPI_ERRORS_RETURN, (MPI_Info)(intptr_t)&v,
        (MPI_Info)(intptr_t)0x132,
    };
    for (int i = 0; i < (int)(sizeof bad_infos / sizeof bad_infos[0]); i++) {
        MPI_Info x = bad_infos[i], copy = bad_infos[i];
        int buflen = sizeof buf;
        char key[MPI_MAX_INFO_KEY] = "unchanged";
        n = -7;
        flag = -7;
        fprintf(stderr, "bad info %d: %p\n", i, (void *)x);
        EXPECT_ERR(MPI_Info_set(x, "k", "v"), MPI_ERR_INFO, "MPI_Info_set", "info");
        EXPECT_ERR(MPI_Info_get_string(x, "k", &buflen, buf, &flag), MPI_ERR_INFO, "MPI_Info_get_string", "info");
        EXPECT_ERR(MPI_Info_get_nkeys(x, &n), MPI_ERR_INFO, "MPI_Info_get_nkeys", "info");
        EXPECT_ERR(MPI_Info_get_nthkey(x, 0, key), MPI_ERR_INFO, "MPI_Info_get_nthkey", "info");
        EXPECT_ERR(MPI_Info_free(&copy), MPI_ERR_INFO, "MPI_Info_free", "info");
        CHECK(copy == x && n == -7 && flag == -7 && buflen == (int)sizeof buf && !strcmp(key, "unchanged"),
              "outputs written on failure (info %d)", i);
    }
    /* The live info is intact. */
    {
        int buflen = sizeof buf;
        flag = 0;
        EXPECT_OK(MPI_Info_get_string(live_info, "k", &buflen, buf, &flag));
        CHECK(flag == 1 && !strcmp(buf, "v"), "live info lost its key");
    }

    EXPECT_OK(MPI_Info_free(&live_info));
    EXPECT_OK(MPI_Errhandler_free(&eh));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
