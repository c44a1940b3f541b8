/* Weft's MPIX types (inserted verbatim into mpi.h by api/gen.py). */

/* One contiguous piece of a datatype: layout-compatible with struct iovec. */
typedef struct MPIX_Iov {
    void *iov_base;
    MPI_Aint iov_len;
} MPIX_Iov;

/* Generalized-request callbacks the progress engine drives (seed 002). */
typedef int (MPIX_Grequest_poll_function)(void *extra_state, MPI_Status *status);
typedef int (MPIX_Grequest_wait_function)(int count, void **array_of_states, double timeout, MPI_Status *status);

/* ROMIO's names for MPI-IO requests (MPI-2 made file requests ordinary requests), which
   programs written for MPICH still use. */
#define MPIO_USES_MPI_REQUEST 1
#define MPIO_Request MPI_Request
#define MPIO_REQUEST_NULL MPI_REQUEST_NULL
#define MPIO_Wait MPI_Wait
#define MPIO_Test MPI_Test
/* MPIX_Stream_enqueue_host_fn's function (Weft's; CUDA's cudaHostFn_t). */
typedef void (MPIX_Host_function)(void *data);

/* Callbacks with an extra state, and the destructor that receives it when the object goes
   (MPICH's _x extensions for language bindings: MPIX_Op_create_x, MPIX_*_create_errhandler_x,
   MPIX_*_create_keyval_x). */
typedef void (MPIX_User_function_x)(void *invec, void *inoutvec, MPI_Count len, MPI_Datatype datatype, void *extra_state);
typedef void (MPIX_Comm_errhandler_function_x)(MPI_Comm comm, int error_code, void *extra_state);
typedef void (MPIX_File_errhandler_function_x)(MPI_File file, int error_code, void *extra_state);
typedef void (MPIX_Win_errhandler_function_x)(MPI_Win win, int error_code, void *extra_state);
typedef void (MPIX_Session_errhandler_function_x)(MPI_Session session, int error_code, void *extra_state);
typedef void (MPIX_Destructor_function)(void *extra_state);

/* MPIX_Attr_value_hooks' callbacks: told of an attribute value each time the library stores it
   on an object (retain) and each time a stored value leaves one (release, after its delete
   callback ran). */
typedef void (MPIX_Attr_value_function)(void *attribute_val);
