/* Fortran procedures that take user callbacks (mpif.h / `use mpi` and `use mpi_f08`), and the
 * predefined callbacks MPI_COMM_DUP_FN etc. as Fortran procedures. A Fortran callback takes
 * every argument by reference, handles as INTEGERs (TYPE(MPI_Comm) etc. in mpi_f08, the same
 * bits), attribute values and extra states as INTEGER(KIND=MPI_ADDRESS_KIND) (INTEGER in the
 * MPI-1 MPI_KEYVAL_CREATE) and returns its error code through a last IERROR argument. The C
 * library calls the C trampolines here; they reach the Fortran procedure through the extra
 * state of MPICH's _x extensions (MPIX_Op_create_x, MPIX_*_create_errhandler_x,
 * MPIX_*_create_keyval_x), whose destructor frees what was allocated, or through the extra
 * state the standard's call already has (MPI_Grequest_start, MPI_Register_datarep).
 *
 * The mpif.h forms are defined as pmpi_x_ with mpi_x_ a weak alias (profiling libraries).
 * The mpi_f08 forms are the same C functions: their specifics (MPI_Op_create_f08 ...) are
 * external procedures, not BIND(C) (a BIND(C) interface cannot take a Fortran procedure), so
 * gfortran calls them by their lower-case names with a trailing underscore; an absent
 * OPTIONAL ierror arrives as NULL. */
#define WEFT_FORTRAN_INTERNAL 1
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "weft_fortran.h"

#define SET_IERROR(ierror, rc)    \
    do {                          \
        if ((ierror) != NULL)     \
            *(ierror) = (rc);     \
    } while (0)

/* gfortran's LOGICAL: nonzero is .TRUE. (MPI_Abi_get_fortran_booleans: 1 and 0). */
#define F_TRUE 1
#define F_FALSE 0

/* ------------------------------------------------------------------ predefined callbacks */

/* MPI_COMM_NULL_COPY_FN, MPI_TYPE_NULL_COPY_FN, MPI_WIN_NULL_COPY_FN (handle as INTEGER). */
static void f_null_copy(MPI_Fint *old, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out,
                        MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)old, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = F_FALSE;
    *ierror = MPI_SUCCESS;
}

static void f_dup(MPI_Fint *old, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out,
                  MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)old, (void)keyval, (void)extra;
    *out = *in;
    *flag = F_TRUE;
    *ierror = MPI_SUCCESS;
}

static void f_null_delete(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *value, MPI_Aint *extra, MPI_Fint *ierror)
{
    (void)obj, (void)keyval, (void)value, (void)extra;
    *ierror = MPI_SUCCESS;
}

#define F_PREDEFINED(NAME, IMPL, PARAMS, ARGS) \
    void NAME PARAMS { IMPL ARGS; }
#define COPY_PARAMS (MPI_Fint *o, MPI_Fint *k, MPI_Aint *e, MPI_Aint *i, MPI_Aint *v, MPI_Fint *f, MPI_Fint *r)
#define COPY_ARGS (o, k, e, i, v, f, r)
#define DELETE_PARAMS (MPI_Fint *o, MPI_Fint *k, MPI_Aint *v, MPI_Aint *e, MPI_Fint *r)
#define DELETE_ARGS (o, k, v, e, r)
F_PREDEFINED(mpi_comm_null_copy_fn_, f_null_copy, COPY_PARAMS, COPY_ARGS)
F_PREDEFINED(mpi_comm_dup_fn_, f_dup, COPY_PARAMS, COPY_ARGS)
F_PREDEFINED(mpi_comm_null_delete_fn_, f_null_delete, DELETE_PARAMS, DELETE_ARGS)
F_PREDEFINED(mpi_type_null_copy_fn_, f_null_copy, COPY_PARAMS, COPY_ARGS)
F_PREDEFINED(mpi_type_dup_fn_, f_dup, COPY_PARAMS, COPY_ARGS)
F_PREDEFINED(mpi_type_null_delete_fn_, f_null_delete, DELETE_PARAMS, DELETE_ARGS)
F_PREDEFINED(mpi_win_null_copy_fn_, f_null_copy, COPY_PARAMS, COPY_ARGS)
F_PREDEFINED(mpi_win_dup_fn_, f_dup, COPY_PARAMS, COPY_ARGS)
F_PREDEFINED(mpi_win_null_delete_fn_, f_null_delete, DELETE_PARAMS, DELETE_ARGS)

/* The MPI-1 forms (MPI_KEYVAL_CREATE): INTEGER extra state and attribute values. */
void mpi_null_copy_fn_(MPI_Fint *o, MPI_Fint *k, MPI_Fint *e, MPI_Fint *i, MPI_Fint *v, MPI_Fint *f, MPI_Fint *r)
{
    (void)o, (void)k, (void)e, (void)i, (void)v;
    *f = F_FALSE;
    *r = MPI_SUCCESS;
}

void mpi_dup_fn_(MPI_Fint *o, MPI_Fint *k, MPI_Fint *e, MPI_Fint *i, MPI_Fint *v, MPI_Fint *f, MPI_Fint *r)
{
    (void)o, (void)k, (void)e;
    *v = *i;
    *f = F_TRUE;
    *r = MPI_SUCCESS;
}

void mpi_null_delete_fn_(MPI_Fint *o, MPI_Fint *k, MPI_Fint *v, MPI_Fint *e, MPI_Fint *r)
{
    (void)o, (void)k, (void)v, (void)e;
    *r = MPI_SUCCESS;
}

/* MPI_CONVERSION_FN_NULL: recognised by address (the C library's NULL); never called. */
void mpi_conversion_fn_null_(void *u, MPI_Fint *d, MPI_Fint *c, void *f, MPI_Offset *p, MPI_Aint *e, MPI_Fint *r)
{
    (void)u, (void)d, (void)c, (void)f, (void)p, (void)e;
    *r = MPI_ERR_INTERN;
}

/* ------------------------------------------------------------------------ MPI_OP_CREATE */

typedef void (*f_user_function)(void *invec, void *inoutvec, MPI_Fint *len, MPI_Fint *datatype);
typedef void (*f_user_function_c)(void *invec, void *inoutvec, MPI_Count *len, MPI_Fint *datatype);

/* A Fortran function address travels as a data pointer (POSIX makes the two convertible). */
union f_proc {
    void *state;
    f_user_function op;
    f_user_function_c op_c;
    void (*errhandler)(MPI_Fint *handle, MPI_Fint *code);
};

/* An INTEGER-length function gets at most INT_MAX elements at a time. */
static void op_trampoline(void *in, void *inout, MPI_Count len, MPI_Datatype datatype, void *state)
{
    union f_proc f = {.state = state};
    MPI_Fint dt = MPI_Type_c2f(datatype);
    MPI_Aint lb = 0, extent = 0;
    if (len > INT_MAX)
        MPI_Type_get_extent(datatype, &lb, &extent);
    while (len > 0) {
        MPI_Fint n = len > INT_MAX ? INT_MAX : (MPI_Fint)len;
        f.op(in, inout, &n, &dt);
        len -= n;
        in = (char *)in + (MPI_Aint)n * extent;
        inout = (char *)inout + (MPI_Aint)n * extent;
    }
}

static void op_c_trampoline(void *in, void *inout, MPI_Count len, MPI_Datatype datatype, void *state)
{
    union f_proc f = {.state = state};
    MPI_Fint dt = MPI_Type_c2f(datatype);
    f.op_c(in, inout, &len, &dt);
}

static void op_create(MPIX_User_function_x *tramp, void *fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror)
{
    MPI_Op c_op = MPI_OP_NULL;
    int rc = MPIX_Op_create_x(fn != NULL ? tramp : NULL, NULL, *commute != F_FALSE, fn, &c_op);
    if (rc == MPI_SUCCESS)
        *op = MPI_Op_c2f(c_op);
    SET_IERROR(ierror, rc);
}

void pmpi_op_create_(f_user_function fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror)
{
    union f_proc f = {.op = fn};
    op_create(op_trampoline, f.state, commute, op, ierror);
}
WEFT_F_WEAK(mpi_op_create_)

void pmpi_op_create_f08_(f_user_function fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror)
{
    pmpi_op_create_(fn, commute, op, ierror);
}
WEFT_F_WEAK(mpi_op_create_f08_)

void pmpi_op_create_c_f08_(f_user_function_c fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror)
{
    union f_proc f = {.op_c = fn};
    op_create(op_c_trampoline, f.state, commute, op, ierror);
}
WEFT_F_WEAK(mpi_op_create_c_f08_)

/* ------------------------------------------------------------------ errhandlers */

#define F_ERRHANDLER(OBJ, T, X)                                                                   \
    static void OBJ##_eh_trampoline(T handle, int code, void *state)                             \
    {                                                                                             \
        union f_proc f = {.state = state};                                                        \
        MPI_Fint h = MPI_##X##_c2f(handle), c = code;                                             \
        f.errhandler(&h, &c);                                                                     \
    }                                                                                             \
    void pmpi_##OBJ##_create_errhandler_(void (*fn)(MPI_Fint *, MPI_Fint *), MPI_Fint *errhandler, \
                                         MPI_Fint *ierror)                                        \
    {                                                                                             \
        union f_proc f = {.errhandler = fn};                                                      \
        MPI_Errhandler eh = MPI_ERRHANDLER_NULL;                                                  \
        int rc = MPIX_##X##_create_errhandler_x(fn != NULL ? OBJ##_eh_trampoline : NULL, NULL,    \
                                                f.state, &eh);                                    \
        if (rc == MPI_SUCCESS)                                                                    \
            *errhandler = MPI_Errhandler_c2f(eh);                                                 \
        SET_IERROR(ierror, rc);                                                                   \
    }                                                                                             \
    WEFT_F_WEAK(mpi_##OBJ##_create_errhandler_)                                                   \
    void pmpi_##OBJ##_create_errhandler_f08_(void (*fn)(MPI_Fint *, MPI_Fint *), MPI_Fint *errhandler, \
                                             MPI_Fint *ierror)                                    \
    {                                                                                             \
        pmpi_##OBJ##_create_errhandler_(fn, errhandler, ierror);                                  \
    }                                                                                             \
    WEFT_F_WEAK(mpi_##OBJ##_create_errhandler_f08_)
F_ERRHANDLER(comm, MPI_Comm, Comm)
F_ERRHANDLER(win, MPI_Win, Win)
F_ERRHANDLER(file, MPI_File, File)
F_ERRHANDLER(session, MPI_Session, Session)

/* ------------------------------------------------------------------ keyvals */

typedef void (*f_copy_fn)(MPI_Fint *old, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out,
                          MPI_Fint *flag, MPI_Fint *ierror);
typedef void (*f_delete_fn)(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *value, MPI_Aint *extra, MPI_Fint *ierror);
typedef void (*f_copy1_fn)(MPI_Fint *old, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *in, MPI_Fint *out,
                           MPI_Fint *flag, MPI_Fint *ierror);
typedef void (*f_delete1_fn)(MPI_Fint *obj, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *extra, MPI_Fint *ierror);

/* A keyval's Fortran callbacks and extra state (freed by the keyval's destructor). */
struct f_keyval {
    f_copy_fn copy;
    f_delete_fn del;
    MPI_Aint extra;
    int mpi1; /* MPI_KEYVAL_CREATE: INTEGER values; copy/del are f_copy1_fn/f_delete1_fn */
};

static void keyval_destroy(void *state) { free(state); }

/* Handle of the object a callback runs for, as Fortran sees it. */
static MPI_Fint comm_int(uintptr_t h) { return MPI_Comm_c2f((MPI_Comm)h); }
static MPI_Fint type_int(uintptr_t h) { return MPI_Type_c2f((MPI_Datatype)h); }
static MPI_Fint win_int(uintptr_t h) { return MPI_Win_c2f((MPI_Win)h); }

/* The trampolines hand the Fortran procedure the value a Fortran program sees (a value set
 * from Fortran is its cell's, attr_cells.c) and keep a copied value in a new cell; the C
 * library releases a deleted attribute's cell after the delete callback. */
static int run_copy(const struct f_keyval *k, MPI_Fint old, int keyval, void *in, void *out, int *flag)
{
    MPI_Fint key = keyval, fflag = F_FALSE, ierror = MPI_SUCCESS;
    MPI_Aint value = 0;
    if (k->mpi1) {
        MPI_Fint extra = (MPI_Fint)k->extra, fin = (MPI_Fint)weft_f_attr_value(in), fout = 0;
        ((f_copy1_fn)(void (*)(void))k->copy)(&old, &key, &extra, &fin, &fout, &fflag, &ierror);
        value = fout;
    } else {
        MPI_Aint extra = k->extra, fin = weft_f_attr_value(in), fout = 0;
        k->copy(&old, &key, &extra, &fin, &fout, &fflag, &ierror);
        value = fout;
    }
    *flag = fflag != F_FALSE;
    if (*flag) {
        *(void **)out = weft_f_attr_cell(value);
        if (*(void **)out == NULL)
            return MPI_ERR_NO_MEM;
    }
    return ierror;
}

static int run_delete(const struct f_keyval *k, MPI_Fint obj, int keyval, void *value)
{
    MPI_Fint key = keyval, ierror = MPI_SUCCESS;
    if (k->mpi1) {
        MPI_Fint extra = (MPI_Fint)k->extra, v = (MPI_Fint)weft_f_attr_value(value);
        ((f_delete1_fn)(void (*)(void))k->del)(&obj, &key, &v, &extra, &ierror);
    } else {
        MPI_Aint extra = k->extra, v = weft_f_attr_value(value);
        k->del(&obj, &key, &v, &extra, &ierror);
    }
    return ierror; /* the library releases the value's cell (attr_cells.c) */
}

#define F_KEYVAL_TRAMPOLINES(OBJ, T)                                                          \
    static int OBJ##_copy_trampoline(T old, int keyval, void *state, void *in, void *out,      \
                                     int *flag)                                               \
    {                                                                                         \
        return run_copy(state, OBJ##_int((uintptr_t)old), keyval, in, out, flag);             \
    }                                                                                         \
    static int OBJ##_delete_trampoline(T obj, int keyval, void *value, void *state)           \
    {                                                                                         \
        return run_delete(state, OBJ##_int((uintptr_t)obj), keyval, value);                   \
    }
F_KEYVAL_TRAMPOLINES(comm, MPI_Comm)
F_KEYVAL_TRAMPOLINES(type, MPI_Datatype)
F_KEYVAL_TRAMPOLINES(win, MPI_Win)

/* MPI_COMM_CREATE_KEYVAL and its type, window and MPI-1 cousins: trampolines (for the
 * predefined procedures too: MPI_COMM_DUP_FN copies the value into a new cell) and a state the
 * keyval's destructor frees. */
#define F_KEYVAL(OBJ, X, NAME, COPY_T, DELETE_T, EXTRA_T, MPI1)                                   \
    void p##NAME(COPY_T copy, DELETE_T del, MPI_Fint *keyval, EXTRA_T *extra, MPI_Fint *ierror)    \
    {                                                                                              \
        struct f_keyval *k = malloc(sizeof *k);                                                    \
        int key = MPI_KEYVAL_INVALID, rc;                                                          \
        if (k == NULL) {                                                                           \
            SET_IERROR(ierror, MPI_ERR_NO_MEM);                                                    \
            return;                                                                                \
        }                                                                                          \
        k->copy = (f_copy_fn)(void (*)(void))copy;                                                 \
        k->del = (f_delete_fn)(void (*)(void))del;                                                 \
        k->extra = (MPI_Aint)*extra;                                                               \
        k->mpi1 = MPI1;                                                                            \
        rc = MPIX_##X##_create_keyval_x(copy != NULL ? OBJ##_copy_trampoline_of() : NULL,          \
                                        del != NULL ? OBJ##_delete_trampoline_of() : NULL,         \
                                        keyval_destroy, &key, k);                                  \
        if (rc == MPI_SUCCESS)                                                                     \
            *keyval = key;                                                                         \
        else                                                                                       \
            free(k);                                                                               \
        SET_IERROR(ierror, rc);                                                                    \
    }                                                                                              \
    WEFT_F_WEAK(NAME)

/* The trampolines as values (a macro argument cannot paste a function name with a suffix). */
static MPI_Comm_copy_attr_function *COMM_copy_trampoline_of(void) { return comm_copy_trampoline; }
static MPI_Comm_delete_attr_function *COMM_delete_trampoline_of(void) { return comm_delete_trampoline; }
static MPI_Type_copy_attr_function *TYPE_copy_trampoline_of(void) { return type_copy_trampoline; }
static MPI_Type_delete_attr_function *TYPE_delete_trampoline_of(void) { return type_delete_trampoline; }
static MPI_Win_copy_attr_function *WIN_copy_trampoline_of(void) { return win_copy_trampoline; }
static MPI_Win_delete_attr_function *WIN_delete_trampoline_of(void) { return win_delete_trampoline; }

F_KEYVAL(COMM, Comm, mpi_comm_create_keyval_, f_copy_fn, f_delete_fn, MPI_Aint, 0)
F_KEYVAL(TYPE, Type, mpi_type_create_keyval_, f_copy_fn, f_delete_fn, MPI_Aint, 0)
F_KEYVAL(WIN, Win, mpi_win_create_keyval_, f_copy_fn, f_delete_fn, MPI_Aint, 0)
F_KEYVAL(COMM, Comm, mpi_keyval_create_, f_copy1_fn, f_delete1_fn, MPI_Fint, 1)

void pmpi_comm_create_keyval_f08_(f_copy_fn copy, f_delete_fn del, MPI_Fint *keyval, MPI_Aint *extra, MPI_Fint *ierror)
{
    pmpi_comm_create_keyval_(copy, del, keyval, extra, ierror);
}
WEFT_F_WEAK(mpi_comm_create_keyval_f08_)

void pmpi_type_create_keyval_f08_(f_copy_fn copy, f_delete_fn del, MPI_Fint *keyval, MPI_Aint *extra, MPI_Fint *ierror)
{
    pmpi_type_create_keyval_(copy, del, keyval, extra, ierror);
}
WEFT_F_WEAK(mpi_type_create_keyval_f08_)

void pmpi_win_create_keyval_f08_(f_copy_fn copy, f_delete_fn del, MPI_Fint *keyval, MPI_Aint *extra, MPI_Fint *ierror)
{
    pmpi_win_create_keyval_(copy, del, keyval, extra, ierror);
}
WEFT_F_WEAK(mpi_win_create_keyval_f08_)

/* ------------------------------------------------------------------ generalized requests */

typedef void (*f_query_fn)(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierror);
typedef void (*f_free_fn)(MPI_Aint *extra, MPI_Fint *ierror);
typedef void (*f_cancel_fn)(MPI_Aint *extra, MPI_Fint *complete, MPI_Fint *ierror);

/* The callbacks receive the program's EXTRA_STATE variable itself (by reference, as MPICH
 * and Open MPI pass it: a free function may update it for the program to see). */
struct f_grequest {
    f_query_fn query;
    f_free_fn free;
    f_cancel_fn cancel;
    MPI_Aint *extra;
};

/* A Fortran status has the C status's layout (weft_fortran.h). */
static int grequest_query(void *state, MPI_Status *status)
{
    struct f_grequest *g = state;
    MPI_Fint ierror = MPI_SUCCESS;
    g->query(g->extra, (MPI_Fint *)status, &ierror);
    return ierror;
}

static int grequest_free(void *state)
{
    struct f_grequest *g = state;
    MPI_Fint ierror = MPI_SUCCESS;
    g->free(g->extra, &ierror);
    free(g);
    return ierror;
}

static int grequest_cancel(void *state, int complete)
{
    struct f_grequest *g = state;
    MPI_Fint ierror = MPI_SUCCESS, fcomplete = complete ? F_TRUE : F_FALSE;
    g->cancel(g->extra, &fcomplete, &ierror);
    return ierror;
}

void pmpi_grequest_start_(f_query_fn query, f_free_fn free_fn, f_cancel_fn cancel, MPI_Aint *extra,
                          MPI_Fint *request, MPI_Fint *ierror)
{
    struct f_grequest *g = malloc(sizeof *g);
    MPI_Request req = MPI_REQUEST_NULL;
    if (g == NULL) {
        SET_IERROR(ierror, MPI_ERR_NO_MEM);
        return;
    }
    *g = (struct f_grequest){query, free_fn, cancel, extra};
    int rc = MPI_Grequest_start(query ? grequest_query : NULL, free_fn ? grequest_free : NULL,
                                cancel ? grequest_cancel : NULL, g, &req);
    if (rc == MPI_SUCCESS)
        *request = MPI_Request_c2f(req);
    else
        free(g);
    SET_IERROR(ierror, rc);
}
WEFT_F_WEAK(mpi_grequest_start_)

void pmpi_grequest_start_f08_(f_query_fn query, f_free_fn free_fn, f_cancel_fn cancel, MPI_Aint *extra,
                             MPI_Fint *request, MPI_Fint *ierror)
{
    pmpi_grequest_start_(query, free_fn, cancel, extra, request, ierror);
}
WEFT_F_WEAK(mpi_grequest_start_f08_)

/* ------------------------------------------------------------------ MPI_REGISTER_DATAREP */

typedef void (*f_conversion_fn)(void *userbuf, MPI_Fint *datatype, MPI_Fint *count, void *filebuf,
                                MPI_Offset *position, MPI_Aint *extra, MPI_Fint *ierror);
typedef void (*f_conversion_c_fn)(void *userbuf, MPI_Fint *datatype, MPI_Count *count, void *filebuf,
                                  MPI_Offset *position, MPI_Aint *extra, MPI_Fint *ierror);
typedef void (*f_extent_fn)(MPI_Fint *datatype, MPI_Aint *extent, MPI_Aint *extra, MPI_Fint *ierror);

/* A data representation's Fortran functions: registered for the life of the program. */
struct f_datarep {
    void (*read)(void);
    void (*write)(void);
    f_extent_fn extent;
    MPI_Aint extra;
};

static int datarep_convert(void (*fn)(void), void *userbuf, MPI_Datatype datatype, MPI_Count count,
                           void *filebuf, MPI_Offset position, struct f_datarep *d, int large)
{
    MPI_Fint dt = MPI_Type_c2f(datatype), ierror = MPI_SUCCESS;
    if (large) {
        ((f_conversion_c_fn)fn)(userbuf, &dt, &count, filebuf, &position, &d->extra, &ierror);
    } else {
        MPI_Fint n = (MPI_Fint)count;
        ((f_conversion_fn)fn)(userbuf, &dt, &n, filebuf, &position, &d->extra, &ierror);
    }
    return ierror;
}

static int datarep_read(void *u, MPI_Datatype t, int n, void *f, MPI_Offset p, void *state)
{
    return datarep_convert(((struct f_datarep *)state)->read, u, t, n, f, p, state, 0);
}

static int datarep_write(void *u, MPI_Datatype t, int n, void *f, MPI_Offset p, void *state)
{
    return datarep_convert(((struct f_datarep *)state)->write, u, t, n, f, p, state, 0);
}

static int datarep_read_c(void *u, MPI_Datatype t, MPI_Count n, void *f, MPI_Offset p, void *state)
{
    return datarep_convert(((struct f_datarep *)state)->read, u, t, n, f, p, state, 1);
}

static int datarep_write_c(void *u, MPI_Datatype t, MPI_Count n, void *f, MPI_Offset p, void *state)
{
    return datarep_convert(((struct f_datarep *)state)->write, u, t, n, f, p, state, 1);
}

static int datarep_extent(MPI_Datatype datatype, MPI_Aint *extent, void *state)
{
    struct f_datarep *d = state;
    MPI_Fint dt = MPI_Type_c2f(datatype), ierror = MPI_SUCCESS;
    d->extent(&dt, extent, &d->extra, &ierror);
    return ierror;
}

static void register_datarep(const char *name, size_t name_len, void (*read)(void), void (*write)(void),
                             f_extent_fn extent, MPI_Aint *extra, MPI_Fint *ierror, int large)
{
    void (*null_fn)(void) = (void (*)(void))mpi_conversion_fn_null_;
    struct f_datarep *d = malloc(sizeof *d);
    char *c_name = weft_f_cstring(name, name_len);
    int rc;
    if (d == NULL || c_name == NULL) {
        free(d);
        free(c_name);
        SET_IERROR(ierror, MPI_ERR_NO_MEM);
        return;
    }
    *d = (struct f_datarep){read, write, extent, *extra};
    if (large)
        rc = MPI_Register_datarep_c(c_name, read == null_fn ? NULL : datarep_read_c,
                                    write == null_fn ? NULL : datarep_write_c,
                                    extent ? datarep_extent : NULL, d);
    else
        rc = MPI_Register_datarep(c_name, read == null_fn ? NULL : datarep_read,
                                  write == null_fn ? NULL : datarep_write, extent ? datarep_extent : NULL, d);
    if (rc != MPI_SUCCESS)
        free(d);
    free(c_name);
    SET_IERROR(ierror, rc);
}

void pmpi_register_datarep_(const char *name, void (*read)(void), void (*write)(void), f_extent_fn extent,
                            MPI_Aint *extra, MPI_Fint *ierror, size_t name_len)
{
    register_datarep(name, name_len, read, write, extent, extra, ierror, 0);
}
WEFT_F_WEAK(mpi_register_datarep_)

/* The mpi_f08 forms take the name as an assumed-length CHARACTER: gfortran passes its length
 * after the other arguments, as for mpif.h. */
void pmpi_register_datarep_f08_(const char *name, void (*read)(void), void (*write)(void), f_extent_fn extent,
                               MPI_Aint *extra, MPI_Fint *ierror, size_t name_len)
{
    register_datarep(name, name_len, read, write, extent, extra, ierror, 0);
}
WEFT_F_WEAK(mpi_register_datarep_f08_)

void pmpi_register_datarep_c_f08_(const char *name, void (*read)(void), void (*write)(void), f_extent_fn extent,
                                 MPI_Aint *extra, MPI_Fint *ierror, size_t name_len)
{
    register_datarep(name, name_len, read, write, extent, extra, ierror, 1);
}
WEFT_F_WEAK(mpi_register_datarep_c_f08_)
