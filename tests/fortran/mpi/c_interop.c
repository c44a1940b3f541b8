/* The C half of c_interop.f90: compiled with plain `#include <mpi.h>`, which declares
 * MPI_Fint, the handle and status conversions and MPI_F08_status when Weft has its Fortran
 * library (MPICH's f77/ext/c2f2cf and f08/misc/statusconv are built this way). */
#include <mpi.h>

/* Checks the Fortran handles it is given name the objects the C side sees; returns a
 * communicator created here (as a Fortran handle) and the number of failed checks. */
void c_side_(MPI_Fint *fcomm, MPI_Fint *ftype, MPI_Fint *fstatus, MPI_Fint *newcomm, MPI_Fint *errs)
{
    MPI_Comm comm = MPI_Comm_f2c(*fcomm);
    MPI_Datatype type = MPI_Type_f2c(*ftype);
    MPI_Status status;
    MPI_F08_status f08;
    MPI_Fint back[8];
    int size = -1, wsize = -1, result = -1;
    MPI_Count tsize = -1;

    *errs = 0;
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || MPI_Comm_size(MPI_COMM_WORLD, &wsize) != MPI_SUCCESS ||
        size != wsize)
        ++*errs;
    if (MPI_Comm_compare(comm, MPI_COMM_WORLD, &result) != MPI_SUCCESS || result != MPI_CONGRUENT)
        ++*errs;
    if (MPI_Type_size_c(type, &tsize) != MPI_SUCCESS || tsize != 12)
        ++*errs;
    if (MPI_Comm_c2f(comm) != *fcomm || MPI_Type_c2f(type) != *ftype)
        ++*errs;
    if (MPI_Comm_c2f(MPI_COMM_WORLD) != MPI_Comm_c2f(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD))))
        ++*errs;
    /* The Fortran status (MPI_SOURCE, MPI_TAG, MPI_ERROR set by the program) through C and
     * the mpi_f08 form and back. */
    if (MPI_Status_f2c(fstatus, &status) != MPI_SUCCESS || status.MPI_SOURCE != 3 || status.MPI_TAG != 7 ||
        status.MPI_ERROR != MPI_ERR_TAG)
        ++*errs;
    status.MPI_TAG += 1;
    if (MPI_Status_c2f08(&status, &f08) != MPI_SUCCESS || f08.MPI_TAG != 8 || f08.MPI_SOURCE != 3)
        ++*errs;
    f08.MPI_SOURCE += 1;
    if (MPI_Status_f082f(&f08, back) != MPI_SUCCESS || back[0] != 4 || back[1] != 8 || back[2] != MPI_ERR_TAG)
        ++*errs;
    if (MPI_Status_c2f(&status, fstatus) != MPI_SUCCESS)
        ++*errs;

    MPI_Comm dup = MPI_COMM_NULL;
    if (MPI_Comm_dup(MPI_COMM_SELF, &dup) != MPI_SUCCESS)
        ++*errs;
    *newcomm = MPI_Comm_c2f(dup);
}
