/* Weft's Fortran library, the part that is not generated: the sentinels of mpif.h, string and
 * array helpers for the generated bindings (mpi_f77.c), MPI_INIT / MPI_INIT_THREAD (whose C forms
 * take argc/argv), and the C-side handle and status conversions. */
#define WEFT_FORTRAN_INTERNAL 1
#include <stdlib.h>
#include <string.h>
#include "weft_fortran.h"
#include "sentinels.h"

void *weft_f_buffer(const void *buf)
{
    if (buf == (const void *)mpi_fortran_bottom_)
        return MPI_BOTTOM;
    if (buf == (const void *)mpi_fortran_in_place_)
        return MPI_IN_PLACE;
    if (buf == (const void *)mpi_fortran_buffer_auto_)
        return MPI_BUFFER_AUTOMATIC;
    return (void *)buf;
}

MPI_Status *weft_f_status(MPI_Fint *status)
{
    return status == mpi_fortran_st_ignore_ ? MPI_STATUS_IGNORE : (MPI_Status *)status;
}

MPI_Status *weft_f_statuses(MPI_Fint *statuses)
{
    return statuses == mpi_fortran_sts_ignore_ ? MPI_STATUSES_IGNORE : (MPI_Status *)statuses;
}

int *weft_f_ints(const MPI_Fint *ints)
{
    if (ints == mpi_fortran_errcodes_ign_)
        return MPI_ERRCODES_IGNORE;
    if (ints == mpi_fortran_unweighted_)
        return MPI_UNWEIGHTED;
    if (ints == mpi_fortran_weights_empty_)
        return MPI_WEIGHTS_EMPTY;
    return (int *)ints;
}

/* A Fortran string argument as a C string: trailing blanks dropped (leading ones too, as the
 * standard asks for keys and names). */
char *weft_f_cstring(const char *s, size_t len)
{
    size_t start = 0;
    while (len > 0 && s[len - 1] == ' ')
        len--;
    while (start < len && s[start] == ' ')
        start++;
    char *c = malloc(len - start + 1);
    if (c == NULL)
        return NULL;
    memcpy(c, s + start, len - start);
    c[len - start] = '\0';
    return c;
}

/* Room for any string the C library writes (the largest MPI_MAX_* is 8192 with its NUL). */
char *weft_f_string_buffer(size_t len)
{
    size_t room = len + 1 > MPI_MAX_LIBRARY_VERSION_STRING ? len + 1 : MPI_MAX_LIBRARY_VERSION_STRING;
    char *c = calloc(room, 1);
    return c;
}

/* A C result into a Fortran string: truncated to its length, blank-padded. Frees c. */
void weft_f_string_out(char *c, char *f, size_t len)
{
    if (c == NULL)
        return;
    size_t n = strlen(c);
    if (n > len)
        n = len;
    memcpy(f, c, n);
    memset(f + n, ' ', len - n);
    free(c);
}

void *weft_f_alloc(int n, size_t size)
{
    return malloc((n > 0 ? (size_t)n : 1) * size);
}

/* How many datatypes an alltoallw-style call reads: the peers of the communicator ("all": the
 * group, or the remote group of an intercommunicator; "neighbor": the topology's in-degree, which
 * for the Cartesian and graph topologies the C library reports through the same calls). */
int weft_f_peer_count(MPI_Comm comm, const char *kind)
{
    int n = 0, flag = 0;
    if (strcmp(kind, "neighbor") == 0) {
        int topo = MPI_UNDEFINED, indeg = 0, outdeg = 0, weighted = 0;
        if (MPI_Topo_test(comm, &topo) != MPI_SUCCESS)
            return 0;
        if (topo == MPI_DIST_GRAPH) {
            MPI_Dist_graph_neighbors_count(comm, &indeg, &outdeg, &weighted);
            return indeg > outdeg ? indeg : outdeg;
        }
        if (topo == MPI_CART) {
            MPI_Cartdim_get(comm, &n);
            return 2 * n;
        }
        if (topo == MPI_GRAPH) {
            int rank = 0;
            MPI_Comm_rank(comm, &rank);
            MPI_Graph_neighbors_count(comm, rank, &n);
        }
        return n;
    }
    if (MPI_Comm_test_inter(comm, &flag) != MPI_SUCCESS)
        return 0;
    if (flag)
        MPI_Comm_remote_size(comm, &n);
    else
        MPI_Comm_size(comm, &n);
    return n;
}

void pmpi_init_(MPI_Fint *ierror)
{
    *ierror = MPI_Init(NULL, NULL);
}
WEFT_F_WEAK(mpi_init_)

void pmpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    *ierror = MPI_Init_thread(NULL, NULL, *required, provided);
}
WEFT_F_WEAK(mpi_init_thread_)

/* MPI_INFO_CREATE_ENV(INFO, IERROR): the C library reads the process's arguments itself when
 * argv is NULL. */
void pmpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierror)
{
    MPI_Info c_info = MPI_INFO_NULL;
    *ierror = MPI_Info_create_env(0, NULL, &c_info);
    if (*ierror == MPI_SUCCESS)
        *info = MPI_Info_c2f(c_info);
}
WEFT_F_WEAK(mpi_info_create_env_)

/* The argv of a Fortran MPI_COMM_SPAWN as C wants it: entries of `len` characters, each
 * `stride` entries after the one before (1 for MPI_COMM_SPAWN; for MPI_COMM_SPAWN_MULTIPLE's
 * ARRAY_OF_ARGV(COUNT, *), stored by columns, COUNT), up to the first blank one, each without
 * its trailing blanks, then NULL. *rc is MPI_ERR_NO_MEM where memory runs out. Freed by
 * argv_free. */
static char **argv_from_fortran(const char *argv, size_t len, size_t stride, int *rc)
{
    size_t n = 0;
    for (;; n++) {
        const char *e = argv + n * stride * len;
        size_t k = 0;
        while (k < len && e[k] == ' ')
            k++;
        if (k == len)
            break;
    }
    char **c = calloc(n + 1, sizeof *c);
    if (c == NULL) {
        *rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *e = argv + i * stride * len;
        size_t k = len;
        while (k > 0 && e[k - 1] == ' ')
            k--;
        c[i] = malloc(k + 1);
        if (c[i] == NULL) {
            *rc = MPI_ERR_NO_MEM;
            break;
        }
        memcpy(c[i], e, k);
        c[i][k] = '\0';
    }
    return c;
}

static void argv_free(char **argv)
{
    if (argv == NULL)
        return;
    for (char **a = argv; *a != NULL; a++)
        free(*a);
    free(argv);
}

/* MPI_COMM_SPAWN for both Fortran bindings: command and argv are read at the root only (they
 * are significant there alone, and another rank's argv need not end with a blank entry). */
int weft_f_comm_spawn(const char *command, size_t command_len, const char *argv, size_t argv_len,
                      MPI_Fint maxprocs, MPI_Fint info, MPI_Fint root, MPI_Fint comm,
                      MPI_Fint *intercomm, MPI_Fint *array_of_errcodes)
{
    MPI_Comm comm_c = MPI_Comm_fromint(comm), intercomm_c = MPI_COMM_NULL;
    int me = -1, rc = MPI_SUCCESS;
    char *command_c = NULL, **argv_c = NULL;
    if (MPI_Comm_rank(comm_c, &me) == MPI_SUCCESS && me == root) {
        command_c = weft_f_cstring(command, command_len);
        if (argv != mpi_fortran_argv_null_)
            argv_c = argv_from_fortran(argv, argv_len, 1, &rc);
        if (command_c == NULL)
            rc = MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_spawn(command_c != NULL ? command_c : "", argv_c, maxprocs, MPI_Info_fromint(info),
                            root, comm_c, &intercomm_c, weft_f_ints(array_of_errcodes));
    free(command_c);
    argv_free(argv_c);
    *intercomm = MPI_Comm_toint(intercomm_c);
    return rc;
}

/* MPI_COMM_SPAWN(COMMAND, ARGV, MAXPROCS, INFO, ROOT, COMM, INTERCOMM, ARRAY_OF_ERRCODES,
 * IERROR) */
void pmpi_comm_spawn_(char *command, char *argv, MPI_Fint *maxprocs, MPI_Fint *info, MPI_Fint *root,
                      MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *array_of_errcodes, MPI_Fint *ierror,
                      size_t command_len, size_t argv_len)
{
    *ierror = weft_f_comm_spawn(command, command_len, argv, argv_len, *maxprocs, *info, *root, *comm,
                                intercomm, array_of_errcodes);
}
WEFT_F_WEAK(mpi_comm_spawn_)

/* MPI_COMM_SPAWN_MULTIPLE for both Fortran bindings: the arrays are read at the root only.
 * Command i's arguments are row i of ARRAY_OF_ARGV(COUNT, *), each row ending at its first
 * blank entry; MPI_ARGVS_NULL gives none to any command. */
int weft_f_comm_spawn_multiple(MPI_Fint count, const char *commands, size_t commands_len, const char *argvs,
                               size_t argvs_len, const MPI_Fint *maxprocs, const MPI_Fint *infos, MPI_Fint root,
                               MPI_Fint comm, MPI_Fint *intercomm, MPI_Fint *array_of_errcodes)
{
    MPI_Comm comm_c = MPI_Comm_fromint(comm), intercomm_c = MPI_COMM_NULL;
    int me = -1, rc = MPI_SUCCESS, n = 0;
    char **commands_c = NULL, ***argvs_c = NULL;
    MPI_Info *infos_c = NULL;
    if (MPI_Comm_rank(comm_c, &me) == MPI_SUCCESS && me == root && count > 0) {
        n = count;
        commands_c = calloc(n, sizeof *commands_c);
        infos_c = calloc(n, sizeof *infos_c);
        if (argvs != mpi_fortran_argvs_null_)
            argvs_c = calloc(n, sizeof *argvs_c);
        if (commands_c == NULL || infos_c == NULL || (argvs != mpi_fortran_argvs_null_ && argvs_c == NULL))
            rc = MPI_ERR_NO_MEM;
        for (int i = 0; rc == MPI_SUCCESS && i < n; i++) {
            commands_c[i] = weft_f_cstring(commands + (size_t)i * commands_len, commands_len);
            if (commands_c[i] == NULL)
                rc = MPI_ERR_NO_MEM;
            infos_c[i] = MPI_Info_fromint(infos[i]);
            if (argvs_c != NULL)
                argvs_c[i] = argv_from_fortran(argvs + (size_t)i * argvs_len, argvs_len, (size_t)n, &rc);
        }
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_spawn_multiple(count, commands_c, argvs_c, weft_f_ints(maxprocs), infos_c, root, comm_c,
                                     &intercomm_c, weft_f_ints(array_of_errcodes));
    for (int i = 0; i < n; i++) {
        if (commands_c != NULL)
            free(commands_c[i]);
        if (argvs_c != NULL)
            argv_free(argvs_c[i]);
    }
    free(commands_c);
    free(argvs_c);
    free(infos_c);
    *intercomm = MPI_Comm_toint(intercomm_c);
    return rc;
}

/* MPI_COMM_SPAWN_MULTIPLE(COUNT, ARRAY_OF_COMMANDS, ARRAY_OF_ARGV, ARRAY_OF_MAXPROCS,
 * ARRAY_OF_INFO, ROOT, COMM, INTERCOMM, ARRAY_OF_ERRCODES, IERROR) */
void pmpi_comm_spawn_multiple_(MPI_Fint *count, char *commands, char *argvs, MPI_Fint *maxprocs, MPI_Fint *infos,
                               MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *array_of_errcodes,
                               MPI_Fint *ierror, size_t commands_len, size_t argvs_len)
{
    *ierror = weft_f_comm_spawn_multiple(*count, commands, commands_len, argvs, argvs_len, maxprocs, infos, *root,
                                         *comm, intercomm, array_of_errcodes);
}
WEFT_F_WEAK(mpi_comm_spawn_multiple_)

#define WEFT_F_HANDLE(T, X)                                  \
    MPI_Fint MPI_##X##_c2f(T handle) { return MPI_##X##_toint(handle); } \
    T MPI_##X##_f2c(MPI_Fint handle) { return MPI_##X##_fromint(handle); }
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

/* The status conversions (and their PMPI_ names): every form has the C status's 8 ints. A
 * status the standard says not to convert (MPI_STATUS_IGNORE, MPI_F_STATUS_IGNORE and
 * MPI_F08_STATUS_IGNORE, which are the same common block) or NULL is MPI_ERR_ARG. */
static int status_copy(const void *from, const void *from_ignore, void *to, const void *to_ignore)
{
    if (from == NULL || from == from_ignore || to == NULL || to == to_ignore)
        return MPI_ERR_ARG;
    memcpy(to, from, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    return status_copy(c_status, MPI_STATUS_IGNORE, f_status, MPI_F_STATUS_IGNORE);
}

int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    return status_copy(f_status, MPI_F_STATUS_IGNORE, c_status, MPI_STATUS_IGNORE);
}

int PMPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    return status_copy(c_status, MPI_STATUS_IGNORE, f08_status, MPI_F08_STATUS_IGNORE);
}

int PMPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    return status_copy(f08_status, MPI_F08_STATUS_IGNORE, c_status, MPI_STATUS_IGNORE);
}

int PMPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status)
{
    return status_copy(f_status, MPI_F_STATUS_IGNORE, f08_status, MPI_F08_STATUS_IGNORE);
}

int PMPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status)
{
    return status_copy(f08_status, MPI_F08_STATUS_IGNORE, f_status, MPI_F_STATUS_IGNORE);
}

#pragma weak MPI_Status_c2f = PMPI_Status_c2f
#pragma weak MPI_Status_f2c = PMPI_Status_f2c
#pragma weak MPI_Status_c2f08 = PMPI_Status_c2f08
#pragma weak MPI_Status_f082c = PMPI_Status_f082c
#pragma weak MPI_Status_f2f08 = PMPI_Status_f2f08
#pragma weak MPI_Status_f082f = PMPI_Status_f082f

/* MPI_STATUS_F2F08 / MPI_STATUS_F082F from Fortran (mpif.h's, and mpi_f08's with an optional
 * ierror). */
void pmpi_status_f2f08_(const MPI_Fint *f_status, MPI_Fint *f08_status, MPI_Fint *ierror)
{
    *ierror = PMPI_Status_f2f08(f_status, (MPI_F08_status *)f08_status);
}
WEFT_F_WEAK(mpi_status_f2f08_)

void pmpi_status_f082f_(const MPI_Fint *f08_status, MPI_Fint *f_status, MPI_Fint *ierror)
{
    *ierror = PMPI_Status_f082f((const MPI_F08_status *)f08_status, f_status);
}
WEFT_F_WEAK(mpi_status_f082f_)

void weft_f08_mpi_status_f2f08(const MPI_Fint *f_status, MPI_Fint *f08_status, MPI_Fint *ierror)
{
    int rc = PMPI_Status_f2f08(f_status, (MPI_F08_status *)f08_status);
    if (ierror != NULL)
        *ierror = rc;
}

void weft_f08_mpi_status_f082f(const MPI_Fint *f08_status, MPI_Fint *f_status, MPI_Fint *ierror)
{
    int rc = PMPI_Status_f082f((const MPI_F08_status *)f08_status, f_status);
    if (ierror != NULL)
        *ierror = rc;
}

/* Indices from C (counting from 0) to Fortran (from 1); MPI_UNDEFINED stays. */
void weft_f_indices(int rc, int n, MPI_Fint *indices)
{
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)
        return;
    if (n == MPI_UNDEFINED)
        return;
    for (int i = 0; i < n; i++)
        if (indices[i] != MPI_UNDEFINED)
            indices[i]++;
}

/* An attribute value read for Fortran: the predefined attributes are pointers to their value
 * in C and the value itself in Fortran; a value set from Fortran is its cell's (attr_cells.c);
 * a pointer set from C is its address. */
MPI_Aint weft_f_attr_get(int keyval, void *value, const char *object)
{
    if (strcmp(object, "comm") == 0 || strcmp(object, "attr") == 0) {
        if (keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO || keyval == MPI_WTIME_IS_GLOBAL ||
            keyval == MPI_APPNUM || keyval == MPI_UNIVERSE_SIZE || keyval == MPI_LASTUSEDCODE)
            return *(int *)value;
    } else if (strcmp(object, "win") == 0) {
        if (keyval == MPI_WIN_SIZE)
            return *(MPI_Aint *)value;
        if (keyval == MPI_WIN_DISP_UNIT || keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL)
            return *(int *)value;
    }
    return weft_f_attr_value(value);
}
