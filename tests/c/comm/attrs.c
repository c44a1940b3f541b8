/* The predefined attributes of MPI_COMM_WORLD (and MPI_COMM_SELF). WTEST_NP: ranks launched. */
#include "wtest.h"

static int get(MPI_Comm comm, int key, const char *name, int *value)
{
    int *p = NULL, flag = -1;
    int rc = MPI_Comm_get_attr(comm, key, &p, &flag);
    if (rc != MPI_SUCCESS) {
        FAIL("MPI_Comm_get_attr(%s) returned %d: %s", name, rc, wtest_string(rc));
        return 0;
    }
    if (flag != 1 || p == NULL) {
        FAIL("MPI_Comm_get_attr(%s): flag %d, pointer %p", name, flag, (void *)p);
        return 0;
    }
    *value = *p;
    return 1;
}

int main(int argc, char **argv)
{
    int size = -1, rank = -1, v = 0, w = 0, cls = -1;
    int np = wtest_env_int("WTEST_NP", 1);
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK_INT(size, np);

    for (int c = 0; c < 2; c++) {
        MPI_Comm comm = comms[c];
        if (get(comm, MPI_TAG_UB, "MPI_TAG_UB", &v))
            CHECK(v >= 32767, "MPI_TAG_UB = %d", v);
        if (get(comm, MPI_HOST, "MPI_HOST", &v))
            CHECK_INT(v, MPI_PROC_NULL);
        if (get(comm, MPI_IO, "MPI_IO", &v))
            CHECK(v == MPI_ANY_SOURCE || v == MPI_PROC_NULL || (v >= 0 && v < size),
                  "MPI_IO = %d", v);
        if (get(comm, MPI_WTIME_IS_GLOBAL, "MPI_WTIME_IS_GLOBAL", &v))
            CHECK(v == 0 || v == 1, "MPI_WTIME_IS_GLOBAL = %d", v);
        if (get(comm, MPI_APPNUM, "MPI_APPNUM", &v))
            CHECK_INT(v, 0);
        if (get(comm, MPI_UNIVERSE_SIZE, "MPI_UNIVERSE_SIZE", &v))
            CHECK(v >= size, "MPI_UNIVERSE_SIZE = %d < size %d", v, size);
        if (get(comm, MPI_LASTUSEDCODE, "MPI_LASTUSEDCODE", &v))
            CHECK(v >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE = %d", v);
    }
    /* The value is the same on every call. */
    if (get(MPI_COMM_WORLD, MPI_TAG_UB, "MPI_TAG_UB", &v) && get(MPI_COMM_WORLD, MPI_TAG_UB, "MPI_TAG_UB", &w))
        CHECK_INT(v, w);

    /* MPI_LASTUSEDCODE follows MPI_Add_error_class/code. */
    EXPECT_OK(MPI_Add_error_class(&cls));
    if (get(MPI_COMM_WORLD, MPI_LASTUSEDCODE, "MPI_LASTUSEDCODE", &v))
        CHECK(v >= cls, "MPI_LASTUSEDCODE = %d < new class %d", v, cls);
    {
        int code = -1;
        EXPECT_OK(MPI_Add_error_code(cls, &code));
        if (get(MPI_COMM_WORLD, MPI_LASTUSEDCODE, "MPI_LASTUSEDCODE", &v))
            CHECK(v >= code, "MPI_LASTUSEDCODE = %d < new code %d", v, code);
    }

    /* A keyval that is no attribute. */
    {
        int *p = (int *)&v, flag = 5;
        EXPECT_ERR(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &p, &flag), MPI_ERR_KEYVAL,
                   "MPI_Comm_get_attr", NULL);
        CHECK(p == (int *)&v && flag == 5, "outputs written on failure");
        EXPECT_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, 123456, &p, &flag), MPI_ERR_KEYVAL);
        /* A window attribute key is no communicator attribute. */
        EXPECT_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WIN_BASE, &p, &flag), MPI_ERR_KEYVAL);
    }
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
