/* weft_fortran.h: what Weft's Fortran library (libmpifort) adds to the standard-ABI C
 * library: the Fortran INTEGER type, the handle and status conversions between C and Fortran,
 * and (for the generated bindings in mpi_f77.c) the helpers that recognise mpif.h's sentinels. */
#ifndef WEFT_FORTRAN_H_INCLUDED
#define WEFT_FORTRAN_H_INCLUDED

#include <stddef.h>
#include "mpi.h"

#if defined(__cplusplus)
extern "C" {
#endif

/* gfortran's default INTEGER. */
typedef int MPI_Fint;

/* MPI_F_STATUS_IGNORE / MPI_F_STATUSES_IGNORE: mpif.h's MPI_STATUS_IGNORE by address. */
extern MPI_Fint mpi_fortran_st_ignore_[];
extern MPI_Fint mpi_fortran_sts_ignore_[];
#define MPI_F_STATUS_IGNORE   ((MPI_Fint *)mpi_fortran_st_ignore_)
#define MPI_F_STATUSES_IGNORE ((MPI_Fint *)mpi_fortran_sts_ignore_)

/* Handle conversions (the standard's MPI_X_c2f / MPI_X_f2c, on MPI_X_toint / MPI_X_fromint). */
#define WEFT_F_HANDLE(T, X)          \
    MPI_Fint MPI_##X##_c2f(T handle); \
    T MPI_##X##_f2c(MPI_Fint handle);
WEFT_F_HANDLE(MPI_Comm, Comm)
WEFT_F_HANDLE(MPI_Datatype, Type)
WEFT_F_HANDLE(MPI_Errhandler, Errhandler)
WEFT_F_HANDLE(MPI_File, File)
WEFT_F_HANDLE(MPI_Group, Group)
WEFT_F_HANDLE(MPI_Info, Info)
WEFT_F_HANDLE(MPI_Message, Message)
WEFT_F_HANDLE(MPI_Op, Op)
WEFT_F_HANDLE(MPI_Request, Request)
WEFT_F_HANDLE(MPI_Session, Session)
WEFT_F_HANDLE(MPI_Win, Win)
#undef WEFT_F_HANDLE

/* Status conversions: a Fortran INTEGER status and mpi_f08's TYPE(MPI_Status) have the C
 * status's layout (8 ints). */
typedef struct {
    MPI_Fint MPI_SOURCE;
    MPI_Fint MPI_TAG;
    MPI_Fint MPI_ERROR;
    MPI_Fint internal[5];
} MPI_F08_status;

/* MPI_F08_STATUS_IGNORE / MPI_F08_STATUSES_IGNORE: mpi_f08's, the same common blocks. */
#define MPI_F08_STATUS_IGNORE   ((MPI_F08_status *)mpi_fortran_st_ignore_)
#define MPI_F08_STATUSES_IGNORE ((MPI_F08_status *)mpi_fortran_sts_ignore_)

int MPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status);
int MPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status);
int MPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status);
int MPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status);
int MPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status);
int MPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status);
int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status);
int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status);
int PMPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status);
int PMPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status);
int PMPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status);
int PMPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status);

#ifdef WEFT_FORTRAN_INTERNAL
/* An mpif.h procedure is defined as pmpi_x_; WEFT_F_WEAK(mpi_x_) makes mpi_x_ a weak alias a
 * profiling library may replace. */
#define WEFT_F_STR(x) #x
#define WEFT_F_WEAK(name) _Pragma(WEFT_F_STR(weak name = p##name))

/* Helpers of the generated bindings (fortran/runtime.c). */
void *weft_f_buffer(const void *buf);
MPI_Status *weft_f_status(MPI_Fint *status);
MPI_Status *weft_f_statuses(MPI_Fint *statuses);
int *weft_f_ints(const MPI_Fint *ints);
char *weft_f_cstring(const char *s, size_t len);
char *weft_f_string_buffer(size_t len);
void weft_f_string_out(char *c, char *f, size_t len);
void *weft_f_alloc(int n, size_t size);
int weft_f_peer_count(MPI_Comm comm, const char *kind);
int weft_f_comm_spawn(const char *command, size_t command_len, const char *argv, size_t argv_len,
                      MPI_Fint maxprocs, MPI_Fint info, MPI_Fint root, MPI_Fint comm,
                      MPI_Fint *intercomm, MPI_Fint *array_of_errcodes);
int weft_f_comm_spawn_multiple(MPI_Fint count, const char *commands, size_t commands_len, const char *argvs,
                               size_t argvs_len, const MPI_Fint *maxprocs, const MPI_Fint *infos, MPI_Fint root,
                               MPI_Fint comm, MPI_Fint *intercomm, MPI_Fint *array_of_errcodes);
void weft_f_indices(int rc, int n, MPI_Fint *indices);
MPI_Aint weft_f_attr_get(int keyval, void *value, const char *object);
/* Attribute values set from Fortran (attr_cells.c): a cell holding the value, its value if p
 * is one (weft_f_attr_value: else p's address), dropping one the library did not store. */
void *weft_f_attr_cell(MPI_Aint value);
int weft_f_attr_cell_value(const void *p, MPI_Aint *value);
MPI_Aint weft_f_attr_value(const void *p);
void weft_f_attr_cell_free(const void *p);
#ifdef CFI_VERSION
void *weft_f08_buffer(const CFI_cdesc_t *desc, int *noncontiguous);
void *weft_f08_section(const CFI_cdesc_t *desc, MPI_Count *count, MPI_Datatype *datatype, MPI_Datatype *made,
                       int *noncontiguous);
int weft_f08_noncontiguous(const char *func, const MPI_Fint *ierror);
#endif
#endif

#if defined(__cplusplus)
}
#endif

#endif /* WEFT_FORTRAN_H_INCLUDED */
