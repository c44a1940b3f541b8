! MPI_Status_f2f08 / MPI_Status_f082f: an INTEGER status from a receive converts to
! TYPE(MPI_Status) and back with source, tag, error and count; MPI_STATUS_IGNORE is refused.
program status_conv
    use checks
    implicit none
    integer :: rank, ierr, count, buf(3), fstat(MPI_STATUS_SIZE), fstat2(MPI_STATUS_SIZE)
    type(MPI_Status) :: st, st2

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    buf = (/ 1, 2, 3 /)
    call MPI_Sendrecv(buf, 3, MPI_INTEGER, rank, 31, buf, 3, MPI_INTEGER, rank, 31, &
                      MPI_COMM_WORLD, st)
    call MPI_Status_f082f(st, fstat, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Status_f082f')
    call check(fstat(MPI_SOURCE) == rank .and. fstat(MPI_TAG) == 31, 'source and tag to INTEGER')
    fstat2 = fstat
    call MPI_Status_f2f08(fstat2, st2)
    call check(st2%MPI_SOURCE == rank .and. st2%MPI_TAG == 31, 'source and tag to TYPE(MPI_Status)')
    call MPI_Get_count(st2, MPI_INTEGER, count)
    call check(count == 3, 'the count survives both conversions')
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
    call MPI_Status_f082f(MPI_STATUS_IGNORE, fstat, ierr)
    call check(ierr == MPI_ERR_ARG, 'MPI_STATUS_IGNORE is not converted')
    call MPI_Finalize()
    if (rank == 0) print *, 'No Errors'
end program status_conv
