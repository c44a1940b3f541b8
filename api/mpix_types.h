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
