! `use mpi_f08` with non-contiguous array sections as buffers (their count and datatype
! covering the section, the datatype one array element): strided, negative-stride and 2-d
! column sections, blocking and nonblocking, sent and received in place; the elements between
! stay untouched. A section whose count and datatype do not fit it returns MPI_ERR_BUFFER.
program sections
    use mpi_f08
    use checks
    implicit none
    integer :: rank, peer, i, j, ierr
    integer :: a(10), b(10)
    integer, asynchronous :: m(6, 6)
    double precision :: d(8)
    type(MPI_Request) :: req
    type(MPI_Status) :: status

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    peer = 1 - rank
    if (rank == 0) then
        a = [(i, i = 1, 10)]
        call MPI_Send(a(2:8:2), 4, MPI_INTEGER, peer, 1, MPI_COMM_WORLD)
        call MPI_Send(a(9:1:-4), 3, MPI_INTEGER, peer, 2, MPI_COMM_WORLD)
        m = reshape([(i, i = 1, 36)], [6, 6])
        call MPI_Isend(m(2:5, 1:6:2), 12, MPI_INTEGER, peer, 3, MPI_COMM_WORLD, req)
        call MPI_Wait(req, status)
        d = [(dble(i) / 2, i = 1, 8)]
        call MPI_Send(d(1:8:3), 3, MPI_DOUBLE_PRECISION, peer, 4, MPI_COMM_WORLD)
    else if (rank == 1) then
        b = -1
        call MPI_Recv(b(1:10:3), 4, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, status)
        call check(all(b([1, 4, 7, 10]) == [2, 4, 6, 8]), 'strided section received')
        call check(all(b([2, 3, 5, 6, 8, 9]) == -1), 'elements between untouched')
        call check(status%MPI_TAG == 1, 'status of a section receive')
        b = -1
        call MPI_Recv(b(3:1:-1), 3, MPI_INTEGER, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        call check(all(b(1:3) == [1, 5, 9]) .and. b(4) == -1, 'negative strides both sides')
        m = 0
        call MPI_Irecv(m(3:6, 2:6:2), 12, MPI_INTEGER, peer, 3, MPI_COMM_WORLD, req)
        call MPI_Wait(req, MPI_STATUS_IGNORE)
        do j = 0, 2
            do i = 0, 3
                call check(m(3 + i, 2 + 2 * j) == (1 + 2 * j) * 6 + 2 + i - 6, '2-d section received')
            end do
        end do
        call check(all(m(1:2, :) == 0) .and. all(m(:, 1:5:2) == 0), '2-d: the rest untouched')
        d = 0
        call MPI_Recv(d(8:4:-2), 3, MPI_DOUBLE_PRECISION, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        call check(d(8) == 0.5d0 .and. d(6) == 2.0d0 .and. d(4) == 3.5d0 .and. d(7) == 0, 'double precision section')
        ! A section the datatype does not describe one element of: refused.
        call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
        call MPI_Recv(d(1:8:2), 2, MPI_INTEGER, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call check(ierr == MPI_ERR_BUFFER, 'section with another datatype refused')
    end if
    call MPI_Finalize()
    if (rank == 0) print '(a)', ' No Errors'
end program sections
