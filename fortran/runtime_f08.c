/* The `use mpi_f08` bindings' hand-written part: buffers from Fortran 2018 descriptors, and
 * MPI_Init / MPI_Init_thread / MPI_Info_create_env (whose C forms take argc/argv). */
#define WEFT_FORTRAN_INTERNAL 1
#include <stdio.h>
#include <ISO_Fortran_binding.h>
#include "weft_fortran.h"

/* The address of a choice buffer. MPI_SUBARRAYS_SUPPORTED is .FALSE.: a non-contiguous array
 * section sets *noncontiguous (the call is not made). The sentinels (MPI_BOTTOM, MPI_IN_PLACE)
 * are the common blocks mpif.h uses, so they are recognised by address as there. */
void *weft_f08_buffer(const CFI_cdesc_t *desc, int *noncontiguous)
{
    if (desc->base_addr != NULL && desc->rank > 0 && !CFI_is_contiguous(desc))
        *noncontiguous = 1;
    return weft_f_buffer(desc->base_addr);
}

/* The error for a non-contiguous buffer: returned through ierror when it is present; without
 * ierror nothing could report it, so the job is aborted with a message naming the call. */
int weft_f08_noncontiguous(const char *func, const MPI_Fint *ierror)
{
    if (ierror == NULL) {
        fprintf(stderr, "Weft: %s: buffer is a non-contiguous array section (MPI_SUBARRAYS_SUPPORTED is .FALSE.)\n", func);
        MPI_Abort(MPI_COMM_WORLD, MPI_ERR_BUFFER);
    }
    return MPI_ERR_BUFFER;
}

void weft_f08_mpi_init(MPI_Fint *ierror)
{
    int rc = MPI_Init(NULL, NULL);
    if (ierror != NULL)
        *ierror = rc;
}

void weft_f08_mpi_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    int rc = MPI_Init_thread(NULL, NULL, *required, provided);
    if (ierror != NULL)
        *ierror = rc;
}

void weft_f08_mpi_info_create_env(MPI_Fint *info, MPI_Fint *ierror)
{
    MPI_Info c_info = MPI_INFO_NULL;
    int rc = MPI_Info_create_env(0, NULL, &c_info);
    if (rc == MPI_SUCCESS)
        *info = MPI_Info_c2f(c_info);
    if (ierror != NULL)
        *ierror = rc;
}
