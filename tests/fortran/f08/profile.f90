! The profiling interface of `use mpi_f08`: a program (or tool) that defines the specific
! procedures MPI_Send_f08ts, MPI_Comm_rank_f08 and MPI_Wtime_f08 replaces the library's (the
! generics MPI_Send ... call them), and reaches the library through the PMPI_ generics, with
! and without ierror.
program profile
    use mpi_f08
    use checks
    implicit none
    integer :: rank, nsend, nrank, buf(4), ierr
    type(MPI_Status) :: status
    double precision :: t
    common /prof/ nsend, nrank

    nsend = 0
    nrank = 0
    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call check(nrank == 1 .and. rank >= 1000, 'MPI_Comm_rank went through the wrapper')
    rank = rank - 1000
    if (rank == 0) then
        buf = [1, 2, 3, 4]
        call MPI_Send(buf, 4, MPI_INTEGER, 1, 5, MPI_COMM_WORLD, ierr)
        call check(ierr == MPI_SUCCESS .and. nsend == 1, 'MPI_Send went through the wrapper')
        call MPI_Send(buf, 2, MPI_INTEGER, 1, 6, MPI_COMM_WORLD)
        call check(nsend == 2, 'MPI_Send without ierror went through the wrapper')
        call PMPI_Send(buf, 1, MPI_INTEGER, 1, 7, MPI_COMM_WORLD)
        call check(nsend == 2, 'PMPI_Send is the library')
    else if (rank == 1) then
        buf = 0
        call PMPI_Recv(buf, 4, MPI_INTEGER, 0, 5, MPI_COMM_WORLD, status, ierr)
        call check(ierr == MPI_SUCCESS .and. all(buf == [1, 2, 3, 4]), 'PMPI_Recv received')
        call MPI_Recv(buf, 4, MPI_INTEGER, 0, 6, MPI_COMM_WORLD, status)
        call check(status%MPI_TAG == 6 .and. buf(2) == 2, 'MPI_Recv (the library)')
        call MPI_Recv(buf, 4, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    end if
    t = MPI_Wtime()
    call check(t == -1.0d0, 'MPI_Wtime went through the wrapper')
    t = PMPI_Wtime()
    call check(t > 0.0d0, 'PMPI_Wtime is the library')
    call PMPI_Comm_rank(MPI_COMM_WORLD, rank)
    call check(nrank == 1, 'PMPI_Comm_rank is the library')
    call MPI_Finalize()
    if (rank == 0) print '(a)', ' No Errors'
end program profile

subroutine MPI_Send_f08ts(buf, count, datatype, dest, tag, comm, ierror)
    use :: mpi_f08, only: MPI_Datatype, MPI_Comm, PMPI_Send
    implicit none
    type(*), dimension(..), intent(in) :: buf
    integer, intent(in) :: count, dest, tag
    type(MPI_Datatype), intent(in) :: datatype
    type(MPI_Comm), intent(in) :: comm
    integer, optional, intent(out) :: ierror
    integer :: nsend, nrank
    common /prof/ nsend, nrank
    nsend = nsend + 1
    call PMPI_Send(buf, count, datatype, dest, tag, comm, ierror)
end subroutine MPI_Send_f08ts

subroutine MPI_Comm_rank_f08(comm, rank, ierror)
    use :: mpi_f08, only: MPI_Comm, PMPI_Comm_rank
    implicit none
    type(MPI_Comm), intent(in) :: comm
    integer, intent(out) :: rank
    integer, optional, intent(out) :: ierror
    integer :: nsend, nrank
    common /prof/ nsend, nrank
    nrank = nrank + 1
    call PMPI_Comm_rank(comm, rank, ierror)
    rank = rank + 1000
end subroutine MPI_Comm_rank_f08

function MPI_Wtime_f08()
    implicit none
    double precision :: MPI_Wtime_f08
    MPI_Wtime_f08 = -1.0d0
end function MPI_Wtime_f08
