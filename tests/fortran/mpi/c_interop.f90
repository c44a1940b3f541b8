! Fortran and C in one program: handles and a status made here are read by C
! (c_interop.c, plain `#include <mpi.h>`), and a communicator made in C is used here.
program c_interop
    use mpi
    use checks
    implicit none
    integer :: ierr, comm, ctype, newcomm, errs, size, rank, result
    integer :: status(MPI_STATUS_SIZE)

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
    call MPI_Type_contiguous(3, MPI_INTEGER, ctype, ierr)
    call MPI_Type_commit(ctype, ierr)
    status = 0
    status(MPI_SOURCE) = 3
    status(MPI_TAG) = 7
    status(MPI_ERROR) = MPI_ERR_TAG
    errs = -1
    newcomm = MPI_COMM_NULL
    call c_side(comm, ctype, status, newcomm, errs)
    call check(errs == 0, 'C side saw the Fortran handles and status')
    call check(status(MPI_TAG) == 8 .and. status(MPI_SOURCE) == 3, 'status written back by MPI_Status_c2f')
    call check(newcomm /= MPI_COMM_NULL, 'C communicator handle')
    call MPI_Comm_size(newcomm, size, ierr)
    call check(ierr == MPI_SUCCESS .and. size == 1, 'C communicator used from Fortran')
    call MPI_Comm_compare(newcomm, MPI_COMM_SELF, result, ierr)
    call check(result == MPI_CONGRUENT, 'C communicator is a dup of MPI_COMM_SELF')
    call MPI_Comm_free(newcomm, ierr)
    call MPI_Type_free(ctype, ierr)
    call MPI_Comm_free(comm, ierr)
    if (rank == 0) print '(a)', ' No Errors'
    call MPI_Finalize(ierr)
end program c_interop
