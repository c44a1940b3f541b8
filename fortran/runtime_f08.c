/* The `use mpi_f08` bindings' hand-written part: buffers from Fortran 2018 descriptors, and
 * MPI_Init / MPI_Init_thread / MPI_Info_create_env (whose C forms take argc/argv), and
 * MPI_Comm_spawn / MPI_Comm_spawn_multiple (argv arrays; fortran/runtime.c converts them). */
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

/* A choice buffer with its own count and datatype, which may be a non-contiguous array
 * section: when the datatype is one element of the array (size and extent the element's
 * length, lower bound 0) and count covers the whole section, the section is described by a
 * datatype made here (nested hvectors of the element over the descriptor's strides) and the
 * call sends or receives one of it, in place; no copy, so nonblocking calls work too. *made
 * is that datatype (the caller frees it after the call: a pending operation keeps its own
 * reference). Any other non-contiguous section sets *noncontiguous. */
void *weft_f08_section(const CFI_cdesc_t *desc, MPI_Count *count, MPI_Datatype *datatype, MPI_Datatype *made,
                       int *noncontiguous)
{
    if (desc->base_addr == NULL || desc->rank == 0 || CFI_is_contiguous(desc))
        return weft_f_buffer(desc->base_addr);
    MPI_Count size = -1, lb = -1, extent = -1, elems = 1;
    for (int i = 0; i < desc->rank; i++)
        elems *= desc->dim[i].extent;
    if (MPI_Type_size_c(*datatype, &size) != MPI_SUCCESS || MPI_Type_get_extent_c(*datatype, &lb, &extent) != MPI_SUCCESS ||
        size != (MPI_Count)desc->elem_len || extent != size || lb != 0 || *count != elems) {
        *noncontiguous = 1;
        return NULL;
    }
    MPI_Datatype t = *datatype;
    for (int i = 0; i < desc->rank; i++) {
        MPI_Datatype next = MPI_DATATYPE_NULL;
        int rc = MPI_Type_create_hvector_c(desc->dim[i].extent, 1, desc->dim[i].sm, t, &next);
        if (i > 0)
            MPI_Type_free(&t);
        if (rc != MPI_SUCCESS) {
            *noncontiguous = 1;
            return NULL;
        }
        t = next;
    }
    MPI_Type_commit(&t);
    *made = t;
    *datatype = t;
    *count = 1;
    return desc->base_addr;
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

/* MPI_Comm_spawn: command and argv arrive as descriptors (argv an assumed-size array). */
void weft_f08_mpi_comm_spawn(CFI_cdesc_t *command_d, CFI_cdesc_t *argv_d, MPI_Fint *maxprocs, MPI_Fint *info,
                             MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *array_of_errcodes,
                             MPI_Fint *ierror)
{
    int rc = weft_f_comm_spawn(command_d->base_addr, command_d->elem_len, argv_d->base_addr, argv_d->elem_len,
                               *maxprocs, *info, *root, *comm, intercomm, array_of_errcodes);
    if (ierror != NULL)
        *ierror = rc;
}

/* MPI_Comm_spawn_multiple: the command and argv arrays arrive as descriptors (the argv one
 * of rank 2, ARRAY_OF_ARGV(COUNT, *), contiguous as an assumed-size array is). */
void weft_f08_mpi_comm_spawn_multiple(MPI_Fint *count, CFI_cdesc_t *commands_d, CFI_cdesc_t *argvs_d,
                                      MPI_Fint *maxprocs, MPI_Fint *infos, MPI_Fint *root, MPI_Fint *comm,
                                      MPI_Fint *intercomm, MPI_Fint *array_of_errcodes, MPI_Fint *ierror)
{
    int rc = weft_f_comm_spawn_multiple(*count, commands_d->base_addr, commands_d->elem_len, argvs_d->base_addr,
                                        argvs_d->elem_len, maxprocs, infos, *root, *comm, intercomm,
                                        array_of_errcodes);
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
