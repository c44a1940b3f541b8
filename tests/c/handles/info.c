/* Info objects: set, get, count, nth key, replace, limits, free. */
#include "wtest.h"

int main(int argc, char **argv)
{
    MPI_Info a, b;
    int n = -1, flag = -1, buflen;
    char key[MPI_MAX_INFO_KEY], val[MPI_MAX_INFO_VAL + 2], big[MPI_MAX_INFO_VAL + 2];

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    EXPECT_OK(MPI_Info_create(&a));
    EXPECT_OK(MPI_Info_create(&b));
    CHECK(a != b && a != MPI_INFO_NULL && b != MPI_INFO_NULL && a != MPI_INFO_ENV, "handles %p %p",
          (void *)a, (void *)b);
    EXPECT_OK(MPI_Info_get_nkeys(a, &n));
    CHECK_INT(n, 0);

    EXPECT_OK(MPI_Info_set(a, "alpha", "1"));
    EXPECT_OK(MPI_Info_set(a, "beta", "two"));
    EXPECT_OK(MPI_Info_set(a, "gamma", ""));
    EXPECT_OK(MPI_Info_get_nkeys(a, &n));
    CHECK_INT(n, 3);
    EXPECT_OK(MPI_Info_get_nkeys(b, &n));
    CHECK_INT(n, 0); /* objects are separate */

    /* Keys come back in the order they were set. */
    EXPECT_OK(MPI_Info_get_nthkey(a, 0, key));
    CHECK_STR(key, "alpha");
    EXPECT_OK(MPI_Info_get_nthkey(a, 1, key));
    CHECK_STR(key, "beta");
    EXPECT_OK(MPI_Info_get_nthkey(a, 2, key));
    CHECK_STR(key, "gamma");
    EXPECT_ERR(MPI_Info_get_nthkey(a, 3, key), MPI_ERR_ARG, "MPI_Info_get_nthkey", "n");
    EXPECT_ERR(MPI_Info_get_nthkey(a, -1, key), MPI_ERR_ARG, "MPI_Info_get_nthkey", "n");

    buflen = sizeof val;
    EXPECT_OK(MPI_Info_get_string(a, "beta", &buflen, val, &flag));
    CHECK_INT(flag, 1);
    CHECK_STR(val, "two");
    CHECK_INT(buflen, 4);
    buflen = sizeof val;
    EXPECT_OK(MPI_Info_get_string(a, "gamma", &buflen, val, &flag));
    CHECK_INT(flag, 1);
    CHECK_STR(val, "");
    CHECK_INT(buflen, 1);

    /* Missing key: flag 0, buffer and length untouched. */
    buflen = sizeof val;
    strcpy(val, "unchanged");
    flag = -1;
    EXPECT_OK(MPI_Info_get_string(a, "delta", &buflen, val, &flag));
    CHECK_INT(flag, 0);
    CHECK_STR(val, "unchanged");

    /* buflen 0 asks for the length only; a short buffer gets a truncated, terminated value. */
    EXPECT_OK(MPI_Info_set(a, "beta", "a longer value"));
    buflen = 0;
    EXPECT_OK(MPI_Info_get_string(a, "beta", &buflen, val, &flag));
    CHECK_INT(flag, 1);
    CHECK_INT(buflen, 15);
    buflen = 5;
    memset(val, 'z', sizeof val);
    EXPECT_OK(MPI_Info_get_string(a, "beta", &buflen, val, &flag));
    CHECK_INT(flag, 1);
    CHECK_STR(val, "a lo");
    CHECK_INT(buflen, 15);
    EXPECT_OK(MPI_Info_get_nkeys(a, &n));
    CHECK_INT(n, 3); /* replaced, not added */
    EXPECT_OK(MPI_Info_get_nthkey(a, 1, key));
    CHECK_STR(key, "beta");

    /* Limits: the longest key and value that fit; one more is an error of the right class. */
    memset(key, 'k', MPI_MAX_INFO_KEY - 1);
    key[MPI_MAX_INFO_KEY - 1] = 0;
    memset(big, 'v', MPI_MAX_INFO_VAL - 1);
    big[MPI_MAX_INFO_VAL - 1] = 0;
    EXPECT_OK(MPI_Info_set(b, key, big));
    buflen = sizeof val;
    EXPECT_OK(MPI_Info_get_string(b, key, &buflen, val, &flag));
    CHECK(flag == 1 && !strcmp(val, big), "longest value did not round-trip");
    {
        char k2[MPI_MAX_INFO_KEY + 1];
        memset(k2, 'k', MPI_MAX_INFO_KEY);
        k2[MPI_MAX_INFO_KEY] = 0;
        EXPECT_ERR(MPI_Info_set(b, k2, "v"), MPI_ERR_INFO_KEY, "MPI_Info_set", "key");
    }
    memset(big, 'w', MPI_MAX_INFO_VAL + 1);
    big[MPI_MAX_INFO_VAL + 1] = 0;
    EXPECT_ERR(MPI_Info_set(b, "x", big), MPI_ERR_INFO_VALUE, "MPI_Info_set", "value");
    EXPECT_ERR(MPI_Info_set(b, "", "v"), MPI_ERR_INFO_KEY, "MPI_Info_set", "key");
    EXPECT_OK(MPI_Info_get_nkeys(b, &n));
    CHECK_INT(n, 1);

    /* Free nulls the handle; the freed handle is then invalid. */
    {
        MPI_Info old = a;
        EXPECT_OK(MPI_Info_free(&a));
        CHECK(a == MPI_INFO_NULL, "MPI_Info_free did not null the handle");
        EXPECT_ERR(MPI_Info_get_nkeys(old, &n), MPI_ERR_INFO, "MPI_Info_get_nkeys", "info");
        EXPECT_ERR(MPI_Info_free(&old), MPI_ERR_INFO, "MPI_Info_free", "info");
        /* A new object never gets the old handle back. */
        for (int i = 0; i < 100; i++) {
            MPI_Info c;
            EXPECT_OK(MPI_Info_create(&c));
            CHECK(c != old, "a freed handle came back for a new object");
            EXPECT_OK(MPI_Info_free(&c));
        }
    }
    EXPECT_OK(MPI_Info_free(&b));

    /* Many live objects at once (the handle table grows): all distinct, all intact. */
    {
        enum { MANY = 3000 };
        static MPI_Info many[MANY];
        char want[16];
        for (int i = 0; i < MANY; i++) {
            snprintf(want, sizeof want, "%d", i);
            EXPECT_OK(MPI_Info_create(&many[i]));
            EXPECT_OK(MPI_Info_set(many[i], "i", want));
        }
        for (int i = 0; i < MANY; i++) {
            snprintf(want, sizeof want, "%d", i);
            buflen = sizeof val;
            flag = 0;
            EXPECT_OK(MPI_Info_get_string(many[i], "i", &buflen, val, &flag));
            if (!flag || strcmp(val, want) != 0) {
                FAIL("info %d holds \"%s\"", i, val);
                break;
            }
        }
        for (int i = 0; i < MANY; i++)
            EXPECT_OK(MPI_Info_free(&many[i]));
    }

    /* MPI_INFO_ENV is a valid info object that cannot be freed. */
    EXPECT_OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
    CHECK(n >= 0, "MPI_INFO_ENV has %d keys", n);
    for (int i = 0; i < n; i++) {
        EXPECT_OK(MPI_Info_get_nthkey(MPI_INFO_ENV, i, key));
        buflen = 0;
        flag = 0;
        EXPECT_OK(MPI_Info_get_string(MPI_INFO_ENV, key, &buflen, NULL, &flag));
        CHECK(flag == 1, "MPI_INFO_ENV key \"%s\" listed but not found", key);
    }
    {
        MPI_Info env = MPI_INFO_ENV;
        EXPECT_ERR(MPI_Info_free(&env), MPI_ERR_INFO, "MPI_Info_free", "info");
        CHECK(env == MPI_INFO_ENV, "MPI_Info_free changed MPI_INFO_ENV");
    }

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
