/* The C half of attr_cells.f90: a C keyval whose copy callback passes the pointer on
 * (MPI_COMM_DUP_FN) and whose delete callback reads the value through it, reads and deletes
 * from C, and the process's resident memory. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

static MPI_Aint last_deleted = -1;
static int deletes = 0;

static int c_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    last_deleted = *(MPI_Aint *)value; /* the cell must still be there */
    deletes++;
    return MPI_SUCCESS;
}

void cell_keyval_(MPI_Fint *keyval)
{
    int k = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, c_delete, &k, NULL);
    *keyval = k;
}

void c_value_(MPI_Fint *fcomm, MPI_Fint *keyval, MPI_Fint *found, MPI_Aint *value)
{
    MPI_Aint *p = NULL;
    int flag = 0;
    *found = 0;
    if (MPI_Comm_get_attr(MPI_Comm_f2c(*fcomm), *keyval, &p, &flag) == MPI_SUCCESS && flag) {
        *found = 1;
        *value = *p;
    }
}

void c_delete_attr_(MPI_Fint *fcomm, MPI_Fint *keyval, MPI_Fint *ierr)
{
    *ierr = MPI_Comm_delete_attr(MPI_Comm_f2c(*fcomm), *keyval);
}

void c_last_deleted_(MPI_Aint *value, MPI_Fint *count)
{
    *value = last_deleted;
    *count = deletes;
}

/* Resident memory in KiB (/proc/self/statm), -1 where it cannot be read. */
void c_resident_kib_(MPI_Fint *kib)
{
    long pages = -1, resident = -1;
    FILE *f = fopen("/proc/self/statm", "r");
    *kib = -1;
    if (f == NULL)
        return;
    if (fscanf(f, "%ld %ld", &pages, &resident) == 2)
        *kib = (MPI_Fint)(resident * (sysconf(_SC_PAGESIZE) / 1024));
    fclose(f);
}
