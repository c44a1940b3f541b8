! `use mpi` has TYPE(MPI_Status) too: a received INTEGER status converts to it and back
! (MPI_STATUS_F2F08 / MPI_STATUS_F082F) with its source, tag and error.
program status_type
    use mpi
    use checks
    implicit none
    integer :: ierr, rank, buf(2), count
    integer :: fstatus(MPI_STATUS_SIZE), back(MPI_STATUS_SIZE)
    type(MPI_Status) :: status

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    if (rank == 0) then
        buf = [11, 12]
        call MPI_Send(buf, 2, MPI_INTEGER, 1, 42, MPI_COMM_WORLD, ierr)
    else if (rank == 1) then
        call MPI_Recv(buf, 2, MPI_INTEGER, 0, MPI_ANY_TAG, MPI_COMM_WORLD, fstatus, ierr)
        call MPI_Status_f2f08(fstatus, status, ierr)
        call check(ierr == MPI_SUCCESS, 'MPI_Status_f2f08')
        call check(status%MPI_SOURCE == 0 .and. status%MPI_TAG == 42, 'TYPE(MPI_Status) fields')
        status%MPI_TAG = 43
        call MPI_Status_f082f(status, back, ierr)
        call check(back(MPI_TAG) == 43 .and. back(MPI_SOURCE) == 0, 'MPI_Status_f082f')
        call MPI_Get_count(back, MPI_INTEGER, count, ierr)
        call check(count == 2, 'the count survives the conversions')
    end if
    call MPI_Finalize(ierr)
    if (rank == 0) print '(a)', ' No Errors'
end program status_type
