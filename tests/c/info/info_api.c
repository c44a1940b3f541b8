/* The whole info API, before MPI_Init, from threads, and after: dup, delete, get (deprecated),
 * get_valuelen, MPI_INFO_ENV, MPI_Info_create_env. */
#include "wtest.h"
#include <pthread.h>

static void *churn(void *arg)
{
    MPI_Info i;
    char v[16];
    int flag, len = (int)sizeof v;
    for (int k = 0; k < 1000; k++) {
        MPI_Info_create(&i);
        snprintf(v, sizeof v, "%d", k);
        MPI_Info_set(i, "k", v);
        MPI_Info_set((MPI_Info)arg, "shared", v);
        len = (int)sizeof v;
        MPI_Info_get_string(i, "k", &len, v, &flag);
        if (!flag || atoi(v) != k)
            FAIL("thread read %s for %d", v, k);
        MPI_Info_free(&i);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    MPI_Info a, b, env;
    int flag, n, len;
    char v[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY];

    /* before MPI_Init */
    EXPECT_OK(MPI_Info_create(&a));
    EXPECT_OK(MPI_Info_set(a, "x", "1"));
    EXPECT_OK(MPI_Info_set(a, "y", "hello"));
    EXPECT_OK(MPI_Info_dup(a, &b));
    EXPECT_OK(MPI_Info_delete(a, "x"));
    EXPECT_OK(MPI_Info_get_nkeys(a, &n));
    CHECK_INT(n, 1);
    EXPECT_OK(MPI_Info_get_nkeys(b, &n));
    CHECK_INT(n, 2);
    EXPECT_OK(MPI_Info_get_nthkey(b, 1, key));
    CHECK_STR(key, "y");
    EXPECT_OK(MPI_Info_get_valuelen(b, "y", &len, &flag));
    CHECK(flag == 1 && len == 5, "valuelen %d flag %d", len, flag);
    EXPECT_OK(MPI_Info_get_valuelen(b, "zz", &len, &flag));
    CHECK_INT(flag, 0);
    memset(v, 'Q', sizeof v);
    EXPECT_OK(MPI_Info_get(b, "y", 3, v, &flag));
    CHECK_INT(flag, 1);
    CHECK_STR(v, "hel"); /* at most valuelen characters, then NUL */
    EXPECT_OK(MPI_Info_get(b, "y", MPI_MAX_INFO_VAL, v, &flag));
    CHECK_STR(v, "hello");

    /* MPI_INFO_ENV and MPI_Info_create_env, before MPI_Init */
    len = sizeof v;
    EXPECT_OK(MPI_Info_get_string(MPI_INFO_ENV, "command", &len, v, &flag));
    CHECK_INT(flag, 1);
    CHECK_CONTAINS(v, "info_api");
    EXPECT_OK(MPI_Info_create_env(argc, argv, &env));
    len = sizeof v;
    EXPECT_OK(MPI_Info_get_string(env, "command", &len, v, &flag));
    CHECK(flag == 1 && strcmp(v, argv[0]) == 0, "command %s", v);
    len = sizeof v;
    EXPECT_OK(MPI_Info_get_string(env, "argv", &len, v, &flag));
    CHECK(flag == 1 && strcmp(v, "one two") == 0, "argv '%s' flag %d", v, flag);
    len = sizeof v;
    EXPECT_OK(MPI_Info_get_string(env, "wdir", &len, v, &flag));
    CHECK(flag == 1 && v[0] == '/', "wdir %s", v);
    EXPECT_OK(MPI_Info_free(&env));

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    /* errors (before MPI_Init they would be fatal: no errhandler can be set yet) */
    EXPECT_ERR(MPI_Info_delete(a, "x"), MPI_ERR_INFO_NOKEY, "MPI_Info_delete", "key");
    EXPECT_ERR(MPI_Info_get(b, "", 3, v, &flag), MPI_ERR_INFO_KEY, "MPI_Info_get", "key");
    EXPECT_ERR(MPI_Info_get(b, "y", -1, v, &flag), MPI_ERR_ARG, "MPI_Info_get", "valuelen");
    EXPECT_ERR(MPI_Info_dup(MPI_INFO_NULL, &b), MPI_ERR_INFO, "MPI_Info_dup", "info");
    EXPECT_ERR(MPI_Info_delete(MPI_INFO_ENV, "command"), MPI_ERR_INFO, "MPI_Info_delete", "MPI_INFO_ENV");
    {
        pthread_t t[2];
        for (int k = 0; k < 2; k++)
            pthread_create(&t[k], NULL, churn, b);
        for (int k = 0; k < 2; k++)
            pthread_join(t[k], NULL);
        EXPECT_OK(MPI_Info_get_nkeys(b, &n));
        CHECK_INT(n, 3);
    }
    EXPECT_OK(MPI_Info_free(&b));
    EXPECT_OK(MPI_Finalize());
    /* after MPI_Finalize */
    EXPECT_OK(MPI_Info_get_nkeys(a, &n));
    CHECK_INT(n, 1);
    EXPECT_OK(MPI_Info_free(&a));
    return wtest_finish();
}
