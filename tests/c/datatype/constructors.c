/* Datatype constructors and queries: size, extent, true extent, envelope/contents, names,
 * match_size, f90 types, pair types with gaps, resized bounds, Get_address. */
#include <string.h>
#include "wtest.h"

static int deleted = 0;
static int count_delete(MPI_Datatype t, int key, void *val, void *extra)
{
    (void)t; (void)key; (void)val; (void)extra;
    deleted++;
    return MPI_SUCCESS;
}

static void extent_is(MPI_Datatype t, MPI_Aint size, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb, MPI_Aint text)
{
    int s = -1;
    MPI_Aint l, e, tl, te;
    MPI_Count sc, lc, ec;
    EXPECT_OK(MPI_Type_size(t, &s));
    CHECK_INT(s, size);
    EXPECT_OK(MPI_Type_get_extent(t, &l, &e));
    CHECK_INT(l, lb);
    CHECK_INT(e, ext);
    EXPECT_OK(MPI_Type_get_true_extent(t, &tl, &te));
    CHECK_INT(tl, tlb);
    CHECK_INT(te, text);
    EXPECT_OK(MPI_Type_size_c(t, &sc));
    CHECK_INT(sc, size);
    EXPECT_OK(MPI_Type_get_extent_x(t, &lc, &ec));
    CHECK_INT(ec, ext);
}

int main(int argc, char **argv)
{
    MPI_Datatype t, u, v;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    /* Predefined, including pair types with gaps. */
    extent_is(MPI_INT, 4, 0, 4, 0, 4);
    extent_is(MPI_DOUBLE_INT, 12, 0, 16, 0, 12);
    extent_is(MPI_SHORT_INT, 6, 0, 8, 0, 8);
    extent_is(MPI_LONG_DOUBLE_INT, 20, 0, 32, 0, 20);
    extent_is(MPI_PACKED, 1, 0, 1, 0, 1);

    EXPECT_OK(MPI_Type_contiguous(3, MPI_DOUBLE, &t));
    extent_is(t, 24, 0, 24, 0, 24);
    MPI_Type_free(&t);
    CHECK(t == MPI_DATATYPE_NULL, "freed handle is MPI_DATATYPE_NULL");

    EXPECT_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &t));
    extent_is(t, 24, 0, 40, 0, 40);
    EXPECT_OK(MPI_Type_vector(2, 1, -3, MPI_INT, &u));
    extent_is(u, 8, -12, 16, -12, 16);
    MPI_Type_free(&u);
    EXPECT_OK(MPI_Type_create_hvector(2, 1, 100, t, &u));
    extent_is(u, 48, 0, 140, 0, 140);
    MPI_Type_free(&u);

    int bl[3] = {1, 2, 1}, di[3] = {4, 0, -2};
    EXPECT_OK(MPI_Type_indexed(3, bl, di, MPI_INT, &u));
    extent_is(u, 16, -8, 28, -8, 28);
    MPI_Type_free(&u);
    MPI_Aint hd[2] = {8, -8};
    EXPECT_OK(MPI_Type_create_hindexed_block(2, 1, hd, MPI_DOUBLE, &u));
    extent_is(u, 16, -8, 24, -8, 24);
    MPI_Type_free(&u);

    /* struct {double; char} is padded to 16. */
    int sbl[2] = {1, 1};
    MPI_Aint sd[2] = {0, 8};
    MPI_Datatype st[2] = {MPI_DOUBLE, MPI_CHAR};
    EXPECT_OK(MPI_Type_create_struct(2, sbl, sd, st, &u));
    extent_is(u, 9, 0, 16, 0, 9);

    /* Resized: explicit lb/ub markers stick through further constructors. */
    EXPECT_OK(MPI_Type_create_resized(MPI_INT, -4, 12, &v));
    extent_is(v, 4, -4, 12, 0, 4);
    MPI_Datatype w;
    EXPECT_OK(MPI_Type_contiguous(2, v, &w));
    extent_is(w, 8, -4, 24, 0, 16);
    MPI_Type_free(&w);

    /* Envelope and contents. */
    int ni, na, nd, comb;
    EXPECT_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK_INT(comb, MPI_COMBINER_VECTOR);
    CHECK_INT(ni, 3);
    CHECK_INT(na, 0);
    CHECK_INT(nd, 1);
    int ints[3];
    MPI_Aint addrs[1];
    MPI_Datatype types[1];
    EXPECT_OK(MPI_Type_get_contents(t, 3, 0, 1, ints, addrs, types));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4, "vector contents %d %d %d", ints[0], ints[1], ints[2]);
    CHECK(types[0] == MPI_INT, "vector oldtype is MPI_INT");
    EXPECT_OK(MPI_Type_get_envelope(u, &ni, &na, &nd, &comb));
    CHECK_INT(comb, MPI_COMBINER_STRUCT);
    CHECK(ni == 3 && na == 2 && nd == 2, "struct envelope %d %d %d", ni, na, nd);
    EXPECT_OK(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
    CHECK_INT(comb, MPI_COMBINER_NAMED);
    EXPECT_ERR(MPI_Type_get_contents(MPI_INT, 0, 0, 0, ints, addrs, types), MPI_ERR_TYPE,
               "MPI_Type_get_contents", "datatype");
    /* A derived component comes back as a new handle to free. */
    MPI_Datatype outer;
    EXPECT_OK(MPI_Type_contiguous(2, t, &outer));
    EXPECT_OK(MPI_Type_get_contents(outer, 1, 0, 1, ints, addrs, types));
    int s1, s2;
    MPI_Type_size(types[0], &s1);
    MPI_Type_size(t, &s2);
    CHECK_INT(s1, s2);
    MPI_Type_free(&types[0]);
    MPI_Type_free(&outer);
    /* _c constructor contents are large counts. */
    MPI_Count c3[3] = {2, 1, 5}, nic, nac, nlc, ndc;
    EXPECT_OK(MPI_Type_vector_c(2, 1, 5, MPI_INT, &outer));
    EXPECT_OK(MPI_Type_get_envelope_c(outer, &nic, &nac, &nlc, &ndc, &comb));
    CHECK(nic == 0 && nac == 0 && nlc == 3 && ndc == 1, "vector_c envelope");
    MPI_Count lc[3];
    EXPECT_OK(MPI_Type_get_contents_c(outer, 0, 0, 3, 1, ints, addrs, lc, types));
    CHECK(lc[0] == c3[0] && lc[1] == c3[1] && lc[2] == c3[2], "vector_c contents");
    EXPECT_CLASS(MPI_Type_get_envelope(outer, &ni, &na, &nd, &comb), MPI_ERR_TYPE);
    MPI_Type_free(&outer);

    /* Subarray and darray. */
    int sizes[2] = {4, 6}, subs[2] = {2, 3}, starts[2] = {1, 2};
    EXPECT_OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &w));
    extent_is(w, 24, 0, 96, 32, 36);
    MPI_Type_free(&w);
    EXPECT_OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &w));
    extent_is(w, 24, 0, 96, (1 + 2 * 4) * 4, ((2 + 4 * 4) - (1 + 2 * 4) + 1) * 4);
    MPI_Type_free(&w);
    int gs[2] = {8, 8}, ds[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        da[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 2};
    EXPECT_OK(MPI_Type_create_darray(4, 3, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &w));
    /* rank 3 = coords (1,1): rows 4..7, columns {2,3,6,7}. */
    extent_is(w, 16 * 4, 0, 64 * 4, (4 * 8 + 2) * 4, ((7 * 8 + 7) - (4 * 8 + 2) + 1) * 4);
    EXPECT_OK(MPI_Type_get_envelope(w, &ni, &na, &nd, &comb));
    CHECK_INT(comb, MPI_COMBINER_DARRAY);
    MPI_Type_free(&w);

    /* Names. */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    EXPECT_OK(MPI_Type_get_name(MPI_DOUBLE, name, &len));
    CHECK_STR(name, "MPI_DOUBLE");
    /* MPI_C_FLOAT_COMPLEX is the standard's synonym of MPI_C_COMPLEX (one handle): the
     * predefined name is the primary one, as MPICH gives and its allctypes tests expect. */
    EXPECT_OK(MPI_Type_get_name(MPI_C_COMPLEX, name, &len));
    CHECK_STR(name, "MPI_C_COMPLEX");
    CHECK_INT(len, 13);
    EXPECT_OK(MPI_Type_get_name(t, name, &len));
    CHECK_INT(len, 0);
    EXPECT_OK(MPI_Type_set_name(t, "my vector"));
    EXPECT_OK(MPI_Type_get_name(t, name, &len));
    CHECK_STR(name, "my vector");

    /* match_size, f90, value_index. */
    MPI_Datatype m, m2;
    EXPECT_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    MPI_Type_size(m, &s1);
    CHECK_INT(s1, 8);
    EXPECT_CLASS(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &m), MPI_ERR_ARG);
    EXPECT_OK(MPI_Type_create_f90_real(10, MPI_UNDEFINED, &m));
    EXPECT_OK(MPI_Type_create_f90_real(10, MPI_UNDEFINED, &m2));
    CHECK(m == m2, "f90 types are cached");
    MPI_Type_size(m, &s1);
    CHECK_INT(s1, 8);
    EXPECT_OK(MPI_Type_get_envelope(m, &ni, &na, &nd, &comb));
    CHECK_INT(comb, MPI_COMBINER_F90_REAL);
    EXPECT_CLASS(MPI_Type_free(&m), MPI_ERR_TYPE);
    EXPECT_OK(MPI_Type_create_f90_integer(9, &m));
    MPI_Type_size(m, &s1);
    CHECK_INT(s1, 4);
    EXPECT_OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &m));
    CHECK(m == MPI_DOUBLE_INT, "value_index double/int");

    /* Get_address and Aint arithmetic. */
    double arr[4];
    MPI_Aint a0, a2;
    EXPECT_OK(MPI_Get_address(&arr[0], &a0));
    EXPECT_OK(MPI_Get_address(&arr[2], &a2));
    CHECK_INT(MPI_Aint_diff(a2, a0), 16);
    CHECK(MPI_Aint_add(a0, 16) == a2, "Aint_add");

    /* Bad input. */
    EXPECT_ERR(MPI_Type_contiguous(-1, MPI_INT, &w), MPI_ERR_COUNT, "MPI_Type_contiguous", "count");
    EXPECT_ERR(MPI_Type_vector(2, -1, 1, MPI_INT, &w), MPI_ERR_ARG, "MPI_Type_vector", "blocklength");
    EXPECT_ERR(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &w), MPI_ERR_TYPE, "MPI_Type_contiguous", "oldtype");
    EXPECT_ERR(MPI_Type_contiguous(2, (MPI_Datatype)WTEST_GARBAGE, &w), MPI_ERR_TYPE, "MPI_Type_contiguous", "oldtype");
    EXPECT_OK(MPI_Type_contiguous(1 << 30, MPI_DOUBLE, &w));
    EXPECT_OK(MPI_Type_size(w, &s1));
    CHECK_INT(s1, MPI_UNDEFINED);
    EXPECT_OK(MPI_Type_contiguous(1 << 20, w, &m));
    EXPECT_CLASS(MPI_Type_contiguous(1 << 30, m, &m2), MPI_ERR_COUNT);
    MPI_Type_free(&m);
    MPI_Type_free(&w);
    MPI_Datatype stale = u;
    MPI_Type_free(&u);
    EXPECT_ERR(MPI_Type_commit(&stale), MPI_ERR_TYPE, "MPI_Type_commit", "datatype");
    EXPECT_ERR(MPI_Type_free(&stale), MPI_ERR_TYPE, "MPI_Type_free", "datatype");
    MPI_Datatype pre = MPI_INT;
    EXPECT_CLASS(MPI_Type_free(&pre), MPI_ERR_TYPE);
    EXPECT_ERR(MPI_Type_create_subarray(1, sizes, sizes, starts, MPI_ORDER_C, MPI_INT, &w), MPI_ERR_ARG,
               "MPI_Type_create_subarray", "dimension 0");

    /* Attributes: copied by MPI_Type_dup, deleted by MPI_Type_free. */
    int key, flag = 0;
    void *val = NULL;
    EXPECT_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_delete, &key, NULL));
    EXPECT_OK(MPI_Type_set_attr(t, key, (void *)42));
    MPI_Datatype td;
    EXPECT_OK(MPI_Type_dup(t, &td));
    EXPECT_OK(MPI_Type_get_attr(td, key, &val, &flag));
    CHECK(flag && val == (void *)42, "dup copies the attribute");
    MPI_Type_free(&td);
    CHECK_INT(deleted, 1);

    MPI_Type_free(&t);
    CHECK_INT(deleted, 2);
    MPI_Type_free_keyval(&key);
    MPI_Type_free(&v);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
