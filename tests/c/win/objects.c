/* Window objects: the three flavors' predefined attributes (base, size, displacement unit,
 * flavor, model), the window's group, names, info hints (defaults, creation, set_info,
 * ignored ones), MPI_Win_free nulling the handle, handle ints, dynamic attach/detach, and RMA
 * calls that are not implemented yet saying so instead of pretending to work. */
#include "wtest.h"

static void check_attrs(MPI_Win win, void *base, MPI_Aint size, int disp_unit, int flavor)
{
    void *b = (void *)1;
    MPI_Aint *s = NULL;
    int *d = NULL, *f = NULL, *m = NULL, flag = -1;
    EXPECT_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
    CHECK_INT(flag, 1);
    CHECK(b == base, "MPI_WIN_BASE %p, expected %p", b, base);
    EXPECT_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &s, &flag));
    CHECK_INT(flag, 1);
    if (s)
        CHECK_INT(*s, size);
    EXPECT_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &d, &flag));
    CHECK_INT(flag, 1);
    if (d)
        CHECK_INT(*d, disp_unit);
    EXPECT_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &f, &flag));
    CHECK_INT(flag, 1);
    if (f)
        CHECK_INT(*f, flavor);
    EXPECT_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &m, &flag));
    CHECK_INT(flag, 1);
    if (m)
        CHECK_INT(*m, MPI_WIN_UNIFIED);
}

/* The value of `key` in the window's info, or "" when absent. */
static const char *hint(MPI_Win win, const char *key)
{
    static char v[MPI_MAX_INFO_VAL + 1];
    MPI_Info info = MPI_INFO_NULL;
    int flag = 0;
    v[0] = 0;
    EXPECT_OK(MPI_Win_get_info(win, &info));
    EXPECT_OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    if (!flag)
        v[0] = 0;
    EXPECT_OK(MPI_Info_free(&info));
    return v;
}

static int nkeys(MPI_Win win)
{
    MPI_Info info = MPI_INFO_NULL;
    int n = -1;
    EXPECT_OK(MPI_Win_get_info(win, &info));
    EXPECT_OK(MPI_Info_get_nkeys(info, &n));
    EXPECT_OK(MPI_Info_free(&info));
    return n;
}

int main(int argc, char **argv)
{
    int rank, size, res = -1, len = -1;
    int buf[16];
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Win win = MPI_WIN_NULL, copy;
    MPI_Group wg, cg;
    MPI_Info info;
    MPI_Comm half;

    EXPECT_OK(MPI_Init(&argc, &argv));
    rank = wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* MPI_Win_create: the local values, per rank (each rank exposes a different size). */
    EXPECT_OK(MPI_Win_create(buf, (rank + 1) * 4, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK(win != MPI_WIN_NULL, "no window");
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    check_attrs(win, buf, (rank + 1) * 4, 4, MPI_WIN_FLAVOR_CREATE);

    /* The group is the communicator's. */
    EXPECT_OK(MPI_Win_get_group(win, &wg));
    EXPECT_OK(MPI_Comm_group(MPI_COMM_WORLD, &cg));
    EXPECT_OK(MPI_Group_compare(wg, cg, &res));
    CHECK_INT(res, MPI_IDENT);
    EXPECT_OK(MPI_Group_free(&wg));
    EXPECT_OK(MPI_Group_free(&cg));

    /* Names: empty until set, then what was set; the null handle is named. */
    EXPECT_OK(MPI_Win_get_name(win, name, &len));
    CHECK_STR(name, "");
    CHECK_INT(len, 0);
    EXPECT_OK(MPI_Win_set_name(win, "my window"));
    EXPECT_OK(MPI_Win_get_name(win, name, &len));
    CHECK_STR(name, "my window");
    CHECK_INT(len, 9);
    EXPECT_OK(MPI_Win_get_name(MPI_WIN_NULL, name, &len));
    CHECK_STR(name, "MPI_WIN_NULL");

    /* Info: the standard's defaults are reported; set_info changes what it names, ignores
     * values that mean nothing and keys Weft does not know. */
    CHECK_STR(hint(win, "no_locks"), "false");
    CHECK_STR(hint(win, "accumulate_ordering"), "rar,raw,war,waw");
    CHECK_STR(hint(win, "accumulate_ops"), "same_op_no_op");
    CHECK_STR(hint(win, "same_size"), "false");
    CHECK_STR(hint(win, "same_disp_unit"), "false");
    /* Seed 004's keys (issue 18), with their defaults. */
    CHECK_STR(hint(win, "mpi_win_scope"), "process");
    CHECK_STR(hint(win, "mpi_win_order"), "false");
    CHECK_STR(hint(win, "mpi_assert_accumulate_intrinsic"), "false");
    CHECK_INT(nkeys(win), 8);
    EXPECT_OK(MPI_Info_create(&info));
    EXPECT_OK(MPI_Info_set(info, "no_locks", "true"));
    EXPECT_OK(MPI_Info_set(info, "accumulate_ops", "sometimes"));
    EXPECT_OK(MPI_Info_set(info, "weft_no_such_hint", "1"));
    EXPECT_OK(MPI_Win_set_info(win, info));
    EXPECT_OK(MPI_Info_free(&info));
    CHECK_STR(hint(win, "no_locks"), "true");
    CHECK_STR(hint(win, "accumulate_ops"), "same_op_no_op");
    CHECK_STR(hint(win, "weft_no_such_hint"), "");
    CHECK_INT(nkeys(win), 8);

    /* Free: collective, nulls the handle; the old value is a freed window. */
    copy = win;
    EXPECT_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free left %p", (void *)win);
    EXPECT_ERR(MPI_Win_get_name(copy, name, &len), MPI_ERR_WIN, "MPI_Win_get_name", "win");
    EXPECT_ERR(MPI_Win_free(&copy), MPI_ERR_WIN, "MPI_Win_free", "win");

    /* Hints given at creation; a window on a smaller communicator has that group. */
    EXPECT_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
    EXPECT_OK(MPI_Info_create(&info));
    EXPECT_OK(MPI_Info_set(info, "accumulate_ordering", "none"));
    EXPECT_OK(MPI_Info_set(info, "same_disp_unit", "true"));
    EXPECT_OK(MPI_Info_set(info, "mpi_accumulate_granularity", "8"));
    EXPECT_OK(MPI_Win_create(buf, 0, 1, info, half, &win));
    EXPECT_OK(MPI_Info_free(&info));
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_STR(hint(win, "accumulate_ordering"), "none");
    CHECK_STR(hint(win, "same_disp_unit"), "true");
    CHECK_STR(hint(win, "mpi_accumulate_granularity"), "8");
    CHECK_INT(nkeys(win), 9);
    check_attrs(win, buf, 0, 1, MPI_WIN_FLAVOR_CREATE);
    EXPECT_OK(MPI_Win_get_group(win, &wg));
    EXPECT_OK(MPI_Comm_group(half, &cg));
    EXPECT_OK(MPI_Group_compare(wg, cg, &res));
    CHECK_INT(res, MPI_IDENT);
    {
        /* Ranks are the split's: key -rank reverses the order. */
        int wsize = -1, wrank = -1, hsize = -1, hrank = -1;
        MPI_Group_size(wg, &wsize);
        MPI_Group_rank(wg, &wrank);
        MPI_Comm_size(half, &hsize);
        MPI_Comm_rank(half, &hrank);
        CHECK_INT(wsize, hsize);
        CHECK_INT(wrank, hrank);
        CHECK_INT(wsize, (size + 1 - rank % 2) / 2);
    }
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
    /* The window does not depend on the communicator it was created on. */
    EXPECT_OK(MPI_Comm_free(&half));
    EXPECT_OK(MPI_Win_set_name(win, "outlives its comm"));
    EXPECT_OK(MPI_Win_free(&win));

    /* MPI_Win_allocate: the library's memory, aligned, writable, size 0 included; the
     * alignment hint is honoured and reported. */
    {
        double *mem = NULL;
        EXPECT_OK(MPI_Win_allocate(10 * sizeof(double), sizeof(double), MPI_INFO_NULL,
                                   MPI_COMM_WORLD, &mem, &win));
        CHECK(mem != NULL, "no memory");
        CHECK(((uintptr_t)mem % 64) == 0, "base %p not aligned to 64", (void *)mem);
        for (int i = 0; mem && i < 10; i++)
            mem[i] = i + rank;
        check_attrs(win, mem, 10 * sizeof(double), sizeof(double), MPI_WIN_FLAVOR_ALLOCATE);
        EXPECT_OK(MPI_Win_free(&win));

        EXPECT_OK(MPI_Info_create(&info));
        EXPECT_OK(MPI_Info_set(info, "mpi_minimum_memory_alignment", "4096"));
        EXPECT_OK(MPI_Win_allocate(0, 1, info, MPI_COMM_WORLD, &mem, &win));
        EXPECT_OK(MPI_Info_free(&info));
        CHECK(((uintptr_t)mem % 4096) == 0, "base %p not aligned to 4096", (void *)mem);
        check_attrs(win, mem, 0, 1, MPI_WIN_FLAVOR_ALLOCATE);
        EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        CHECK_STR(hint(win, "mpi_minimum_memory_alignment"), "4096");
        EXPECT_OK(MPI_Win_free(&win));

        EXPECT_OK(MPI_Win_allocate_c(24, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        check_attrs(win, mem, 24, 8, MPI_WIN_FLAVOR_ALLOCATE);
        EXPECT_OK(MPI_Win_free(&win));
    }

    /* MPI_Win_create_c: the same as MPI_Win_create. */
    EXPECT_OK(MPI_Win_create_c(buf, sizeof buf, 2, MPI_INFO_NULL, MPI_COMM_SELF, &win));
    check_attrs(win, buf, sizeof buf, 2, MPI_WIN_FLAVOR_CREATE);
    EXPECT_OK(MPI_Win_get_group(win, &wg));
    EXPECT_OK(MPI_Group_size(wg, &res));
    CHECK_INT(res, 1);
    MPI_Group_free(&wg);
    /* Handles as ints round-trip while the window lives. */
    CHECK(MPI_Win_fromint(MPI_Win_toint(win)) == win, "toint/fromint changed the handle");
    CHECK(MPI_Win_fromint(MPI_Win_toint(MPI_WIN_NULL)) == MPI_WIN_NULL, "WIN_NULL changed");
    {
        int i = MPI_Win_toint(win);
        EXPECT_OK(MPI_Win_free(&win));
        /* A freed window's int names no window: using it is an error. */
        EXPECT_CLASS(MPI_Win_get_group(MPI_Win_fromint(i), &wg), MPI_ERR_WIN);
    }

    /* Dynamic windows: MPI_BOTTOM, no bytes, unit 1; regions attach and detach. */
    EXPECT_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    check_attrs(win, MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC);
    EXPECT_OK(MPI_Win_attach(win, buf, 4 * sizeof(int)));
    EXPECT_OK(MPI_Win_attach(win, buf + 4, 4 * sizeof(int)));
    EXPECT_ERR(MPI_Win_attach(win, buf + 6, sizeof(int)), MPI_ERR_RMA_ATTACH, "MPI_Win_attach", "base");
    EXPECT_ERR(MPI_Win_detach(win, buf + 1), MPI_ERR_RMA_ATTACH, "MPI_Win_detach", "base");
    EXPECT_OK(MPI_Win_detach(win, buf));
    EXPECT_ERR(MPI_Win_detach(win, buf), MPI_ERR_RMA_ATTACH, "MPI_Win_detach", "base");
    EXPECT_OK(MPI_Win_attach(win, buf, 2 * sizeof(int)));
    EXPECT_OK(MPI_Win_detach(win, buf));
    EXPECT_OK(MPI_Win_detach(win, buf + 4));
    EXPECT_ERR(MPI_Win_attach(win, buf, -1), MPI_ERR_SIZE, "MPI_Win_attach", "size");

    /* RMA outside an epoch is refused; inside one, an address nothing is mapped at is out of
     * range (on the window's errhandler), not a crash. */
    EXPECT_ERR(MPI_Put(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC, "MPI_Put", NULL);
    EXPECT_OK(MPI_Win_lock_all(0, win));
    EXPECT_ERR(MPI_Put(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Put", NULL);
    EXPECT_OK(MPI_Win_unlock_all(win));
    EXPECT_OK(MPI_Win_free(&win));

    /* A create window has no attached memory. */
    EXPECT_OK(MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    EXPECT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EXPECT_ERR(MPI_Win_attach(win, buf, 4), MPI_ERR_RMA_FLAVOR, "MPI_Win_attach", "win");
    EXPECT_ERR(MPI_Win_detach(win, buf), MPI_ERR_RMA_FLAVOR, "MPI_Win_detach", "win");
    EXPECT_OK(MPI_Win_free(&win));

    /* Many windows in a row do not run out of handles or context ids. */
    for (int i = 0; i < 300; i++) {
        EXPECT_OK(MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        EXPECT_OK(MPI_Win_free(&win));
    }

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
