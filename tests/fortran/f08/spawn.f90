! MPI_Comm_spawn from `use mpi_f08`: the parents (2 ranks) spawn 2 copies of this program with
! an argv array ended by a blank entry (the root's alone counts: rank 1 passes MPI_ARGV_NULL);
! each child checks the arguments it got (trailing blanks dropped, leading ones kept) and sends
! its check and rank to the parents' rank 0 over the intercommunicator.
program spawn
    use checks
    implicit none
    type(MPI_Comm) :: parent, inter
    integer :: errcodes(2), ierr, rank, n, i, got(2), nargs
    character(len=256) :: me
    character(len=16) :: args(3), a1, a2
    call MPI_Init()
    call MPI_Comm_get_parent(parent)
    if (parent == MPI_COMM_NULL) then
        call MPI_Comm_rank(MPI_COMM_WORLD, rank)
        call get_command_argument(0, me)
        args(1) = 'child'
        args(2) = '  two words'
        args(3) = ' '
        errcodes = -1
        if (rank == 0) then
            call MPI_Comm_spawn(me, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, errcodes, ierr)
        else
            call MPI_Comm_spawn('', MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, &
                                errcodes, ierr)
        end if
        call check(ierr == MPI_SUCCESS, 'MPI_Comm_spawn')
        call check(all(errcodes == MPI_SUCCESS), 'error codes')
        call MPI_Comm_remote_size(inter, n)
        call check(n == 2, 'two children')
        if (rank == 0) then
            do i = 1, 2
                call MPI_Recv(got, 2, MPI_INTEGER, i - 1, 5, inter, MPI_STATUS_IGNORE)
                call check(got(1) == 1, 'the child saw its arguments')
                call check(got(2) == i - 1, 'child rank')
            end do
        end if
        call MPI_Comm_disconnect(inter)
        call MPI_Finalize()
        if (rank == 0) print *, 'No Errors'
    else
        call MPI_Comm_rank(MPI_COMM_WORLD, rank)
        nargs = command_argument_count()
        a1 = '?'
        a2 = '?'
        if (nargs >= 1) call get_command_argument(1, a1)
        if (nargs >= 2) call get_command_argument(2, a2)
        got(1) = 0
        if (nargs == 2 .and. a1 == 'child' .and. a2 == '  two words') got(1) = 1
        if (got(1) == 0) print *, 'child got ', nargs, ' arguments: [', trim(a1), '] [', trim(a2), ']'
        got(2) = rank
        call MPI_Send(got, 2, MPI_INTEGER, 0, 5, parent)
        call MPI_Comm_disconnect(parent)
        call MPI_Finalize()
    end if
end program spawn
