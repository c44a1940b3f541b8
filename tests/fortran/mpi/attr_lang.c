/* The C half of attr_lang.f90: attributes cross between C and Fortran as the standard says
 * (MPI 5.0 §19.3.7): a value set from Fortran reads in C through the pointer C gets, a pointer
 * set from C reads in Fortran as its address. */
#include <mpi.h>

static MPI_Aint c_value = 77;
static int c_deletes = 0;

static int c_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    c_deletes++;
    return MPI_SUCCESS;
}

/* A keyval created in C, for the Fortran side to use. */
void c_keyval_(MPI_Fint *keyval)
{
    int k = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, c_delete, &k, NULL);
    *keyval = k;
}

/* Reads keyval's attribute on comm (set from Fortran): *found, and the value it points at. */
void c_read_(MPI_Fint *fcomm, MPI_Fint *keyval, MPI_Fint *found, MPI_Aint *value)
{
    MPI_Aint *p = NULL;
    int flag = 0;
    *found = 0;
    if (MPI_Comm_get_attr(MPI_Comm_f2c(*fcomm), *keyval, &p, &flag) == MPI_SUCCESS && flag) {
        *found = 1;
        *value = *p;
    }
}

/* Sets keyval's attribute on comm from C to &c_value; returns that address. */
void c_set_(MPI_Fint *fcomm, MPI_Fint *keyval, MPI_Aint *address)
{
    MPI_Comm_set_attr(MPI_Comm_f2c(*fcomm), *keyval, &c_value);
    *address = (MPI_Aint)&c_value;
}

void c_deletes_(MPI_Fint *n) { *n = c_deletes; }
