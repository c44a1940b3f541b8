/* Weft's MPIX types (inserted verbatim into mpi.h by api/gen.py). */

/* One contiguous piece of a datatype: layout-compatible with struct iovec. */
typedef struct MPIX_Iov {
    void *iov_base;
    MPI_Aint iov_len;
} MPIX_Iov;

/* Generalized-request callbacks the progress engine drives (seed 002). */
typedef int (MPIX_Grequest_poll_function)(void *extra_state, MPI_Status *status);
typedef int (MPIX_Grequest_wait_function)(int count, void **array_of_states, double timeout, MPI_Status *status);
