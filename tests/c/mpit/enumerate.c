/* An MPI_T client that enumerates every control variable, performance variable, category,
 * enumeration, event and source and reads each; the values of a few are known (the manifest
 * sets WEFT_NUM_VCIS=3 and WEFT_COLL_REDUCE=linear), and the categories cover every
 * variable exactly once. MPI_T starts before MPI_Init and ends after MPI_Finalize. */
#include "wtest.h"

static int find_cvar(const char *name)
{
    int i = -1;
    EXPECT_OK(MPI_T_cvar_get_index(name, &i));
    return i;
}

int main(int argc, char **argv)
{
    int provided = -1;
    EXPECT_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    CHECK_INT(provided, MPI_THREAD_MULTIPLE);

    /* Before MPI_Init: variables not bound to an object can be read. */
    int ncvar = 0;
    EXPECT_OK(MPI_T_cvar_get_num(&ncvar));
    CHECK(ncvar >= 20, "%d control variables", ncvar);
    MPI_T_cvar_handle h;
    int count = 0, v = -1;
    EXPECT_OK(MPI_T_cvar_handle_alloc(find_cvar("WEFT_NUM_VCIS"), NULL, &h, &count));
    CHECK_INT(count, 1);
    EXPECT_OK(MPI_T_cvar_read(h, &v));
    CHECK_INT(v, 3);
    EXPECT_OK(MPI_T_cvar_handle_free(&h));
    CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle reset");

    MPI_Init(&argc, &argv);
    wtest_errors_return();

    int seen_bound = 0;
    for (int i = 0; i < ncvar; i++) {
        char name[128], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum et;
        EXPECT_OK(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &et, desc, &desc_len,
                                      &bind, &scope));
        CHECK_INT(name_len, (int)strlen(name) + 1);
        CHECK(strncmp(name, "WEFT_", 5) == 0, "cvar %d is %s", i, name);
        CHECK(desc_len > 10, "%s has a description", name);
        CHECK(dt == MPI_INT, "%s is an int", name);
        int idx = -1;
        EXPECT_OK(MPI_T_cvar_get_index(name, &idx));
        CHECK_INT(idx, i);
        /* The length alone. */
        int need = 0;
        EXPECT_OK(MPI_T_cvar_get_info(i, NULL, &need, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        CHECK_INT(need, (int)strlen(name) + 1);
        MPI_Comm comm = MPI_COMM_WORLD;
        void *obj = NULL;
        if (bind == MPI_T_BIND_MPI_COMM) {
            obj = &comm;
            seen_bound++;
            CHECK_INT(scope, MPI_T_SCOPE_GROUP_EQ);
        } else {
            CHECK_INT(bind, MPI_T_BIND_NO_OBJECT);
        }
        EXPECT_OK(MPI_T_cvar_handle_alloc(i, obj, &h, &count));
        CHECK_INT(count, 1);
        v = -12345;
        EXPECT_OK(MPI_T_cvar_read(h, &v));
        CHECK(v != -12345, "%s was read", name);
        if (et != MPI_T_ENUM_NULL) {
            int num = 0;
            char ename[128];
            int elen = sizeof ename;
            EXPECT_OK(MPI_T_enum_get_info(et, &num, ename, &elen));
            CHECK_STR(ename, name);
            CHECK(num >= 2, "%s has %d choices", name, num);
            CHECK(v >= 0 && v < num, "%s = %d is one of its %d choices", name, v, num);
            for (int k = 0; k < num; k++) {
                int value = -1;
                char item[64];
                int ilen = sizeof item;
                EXPECT_OK(MPI_T_enum_get_item(et, k, &value, item, &ilen));
                CHECK_INT(value, k);
                CHECK(ilen > 1, "item %d of %s named", k, name);
            }
        }
        if (!strcmp(name, "WEFT_COLL_REDUCE")) {
            desc_len = sizeof desc;
            EXPECT_OK(MPI_T_enum_get_item(et, v, &count, desc, &desc_len));
            CHECK_STR(desc, "linear");
        }
        if (!strcmp(name, "WEFT_SHM_CELL_SIZE"))
            CHECK_INT(v, 16384);
        if (!strcmp(name, "WEFT_EAGER_MAX"))
            CHECK_INT(v, 16384 - 40);
        EXPECT_OK(MPI_T_cvar_handle_free(&h));
    }
    CHECK_INT(seen_bound, 9);

    /* Performance variables: every one allocated and read in one session. */
    int npvar = 0;
    EXPECT_OK(MPI_T_pvar_get_num(&npvar));
    CHECK(npvar >= 36, "%d performance variables", npvar);
    MPI_T_pvar_session s;
    EXPECT_OK(MPI_T_pvar_session_create(&s));
    for (int i = 0; i < npvar; i++) {
        char name[128], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, cls, bind, ro, cont, at;
        MPI_Datatype dt;
        MPI_T_enum et;
        EXPECT_OK(MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &cls, &dt, &et, desc,
                                      &desc_len, &bind, &ro, &cont, &at));
        CHECK(dt == MPI_UNSIGNED_LONG_LONG, "%s type", name);
        CHECK(strncmp(name, "weft_", 5) == 0, "pvar %d is %s", i, name);
        int idx = -1;
        EXPECT_OK(MPI_T_pvar_get_index(name, cls, &idx));
        CHECK_INT(idx, i);
        MPI_Comm comm = MPI_COMM_WORLD;
        MPI_T_pvar_handle ph;
        EXPECT_OK(MPI_T_pvar_handle_alloc(s, i, bind == MPI_T_BIND_MPI_COMM ? &comm : NULL, &ph,
                                          &count));
        int per_vci = strstr(name, "_per_vci") != NULL;
        /* 3 implicit VCIs and the 64 of streams */
        CHECK_INT(count, per_vci ? 3 + 64 : 1);
        unsigned long long vals[256];
        if (!cont)
            EXPECT_OK(MPI_T_pvar_start(s, ph));
        EXPECT_OK(MPI_T_pvar_read(s, ph, vals));
        if (!cont)
            EXPECT_OK(MPI_T_pvar_stop(s, ph));
        if (!strcmp(name, "weft_progress_polls"))
            ; /* any value */
        EXPECT_OK(MPI_T_pvar_handle_free(s, &ph));
        CHECK(ph == MPI_T_PVAR_HANDLE_NULL, "handle reset");
    }
    EXPECT_OK(MPI_T_pvar_session_free(&s));

    /* Categories: each variable in exactly one of the subcategories of "weft". */
    int ncat = 0, total_c = 0, total_p = 0, total_e = 0;
    EXPECT_OK(MPI_T_category_get_num(&ncat));
    CHECK(ncat >= 2, "%d categories", ncat);
    for (int c = 0; c < ncat; c++) {
        char name[128];
        int name_len = sizeof name, nc, np, nsub, ne;
        EXPECT_OK(MPI_T_category_get_info(c, name, &name_len, NULL, NULL, &nc, &np, &nsub));
        EXPECT_OK(MPI_T_category_get_num_events(c, &ne));
        int idx = -1;
        EXPECT_OK(MPI_T_category_get_index(name, &idx));
        CHECK_INT(idx, c);
        int ids[512];
        EXPECT_OK(MPI_T_category_get_cvars(c, nc, ids));
        for (int k = 0; k < nc; k++)
            CHECK(ids[k] >= 0 && ids[k] < ncvar, "cvar index %d", ids[k]);
        EXPECT_OK(MPI_T_category_get_pvars(c, np, ids));
        for (int k = 0; k < np; k++)
            CHECK(ids[k] >= 0 && ids[k] < npvar, "pvar index %d", ids[k]);
        EXPECT_OK(MPI_T_category_get_categories(c, nsub, ids));
        for (int k = 0; k < nsub; k++)
            CHECK(ids[k] > c && ids[k] < ncat, "subcategory %d", ids[k]);
        EXPECT_OK(MPI_T_category_get_events(c, ne, ids));
        total_c += nc, total_p += np, total_e += ne;
    }
    CHECK_INT(total_c, ncvar);
    CHECK_INT(total_p, npvar);
    int nev = 0;
    EXPECT_OK(MPI_T_event_get_num(&nev));
    CHECK_INT(nev, 2);
    CHECK_INT(total_e, nev);
    int upd = -1;
    EXPECT_OK(MPI_T_category_changed(&upd));
    CHECK_INT(upd, 0);

    /* Events and the source. */
    for (int e = 0; e < nev; e++) {
        char name[128];
        int name_len = sizeof name, n = 8;
        MPI_Datatype types[8];
        MPI_Aint disps[8];
        MPI_Info info = MPI_INFO_NULL;
        EXPECT_OK(MPI_T_event_get_info(e, name, &name_len, NULL, types, disps, &n, NULL, &info,
                                       NULL, NULL, NULL));
        CHECK_INT(n, 4);
        CHECK(types[3] == MPI_INT64_T && disps[3] == 24, "element 3");
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
    }
    int nsrc = 0;
    EXPECT_OK(MPI_T_source_get_num(&nsrc));
    CHECK_INT(nsrc, 1);
    MPI_Count tps = 0, maxt = 0, t1 = 0, t2 = 0;
    MPI_T_source_order order;
    EXPECT_OK(MPI_T_source_get_info(0, NULL, NULL, NULL, NULL, &order, &tps, &maxt, NULL));
    CHECK_INT(tps, 1000000000);
    EXPECT_OK(MPI_T_source_get_timestamp(0, &t1));
    double w = MPI_Wtime();
    while (MPI_Wtime() - w < 0.001)
        ;
    EXPECT_OK(MPI_T_source_get_timestamp(0, &t2));
    CHECK(t2 - t1 >= 1000000 && t2 - t1 < 1000000000, "1 ms is %lld ticks", (long long)(t2 - t1));

    int rc = wtest_finish();
    MPI_Finalize();
    /* Still usable after MPI_Finalize, until the last MPI_T_finalize. */
    EXPECT_OK(MPI_T_cvar_get_num(&ncvar));
    EXPECT_OK(MPI_T_finalize());
    CHECK_INT(MPI_T_cvar_get_num(&ncvar), MPI_T_ERR_NOT_INITIALIZED);
    return rc || wtest_errs;
}
