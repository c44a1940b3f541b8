! MPI_Comm_spawn_multiple from `use mpi_f08`: the parents (2 ranks; only the root's arrays
! count, rank 1 passes count 0 and MPI_ARGVS_NULL) start this program as two commands, one
! child with arguments 'x' 'yy', two with 'zzz' (rows of array_of_argv(count, *)); each child
! reports MPI_APPNUM, its argument count and the length of its first argument.
program spawn_multiple
    use checks
    implicit none
    type(MPI_Comm) :: parent, inter
    type(MPI_Info) :: infos(2)
    integer :: errcodes(3), ierr, rank, n, i, v, want(3), maxprocs(2), nargs
    integer(kind=MPI_ADDRESS_KIND) :: app
    logical :: flag
    character(len=256) :: commands(2), first
    character(len=8) :: argvs(2, 3)
    call MPI_Init()
    call MPI_Comm_get_parent(parent)
    if (parent == MPI_COMM_NULL) then
        call MPI_Comm_rank(MPI_COMM_WORLD, rank)
        call get_command_argument(0, commands(1))
        commands(2) = commands(1)
        maxprocs = [1, 2]
        infos = MPI_INFO_NULL
        argvs(1, :) = [character(len=8) :: 'x', 'yy', ' ']
        argvs(2, :) = [character(len=8) :: 'zzz', ' ', 'unread']
        errcodes = -1
        if (rank == 0) then
            call MPI_Comm_spawn_multiple(2, commands, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, &
                                         inter, errcodes, ierr)
        else
            call MPI_Comm_spawn_multiple(0, commands, MPI_ARGVS_NULL, maxprocs, infos, 0, &
                                         MPI_COMM_WORLD, inter, errcodes, ierr)
        end if
        call check(ierr == MPI_SUCCESS, 'MPI_Comm_spawn_multiple')
        call check(all(errcodes == MPI_SUCCESS), 'error codes')
        call MPI_Comm_remote_size(inter, n)
        call check(n == 3, 'three children')
        want = [0 * 100 + 2 * 10 + 1, 1 * 100 + 1 * 10 + 3, 1 * 100 + 1 * 10 + 3]
        if (rank == 0) then
            do i = 1, 3
                call MPI_Recv(v, 1, MPI_INTEGER, i - 1, 5, inter, MPI_STATUS_IGNORE)
                if (v /= want(i)) print *, 'child ', i - 1, ' sent ', v, ', expected ', want(i)
                call check(v == want(i), 'appnum and arguments')
            end do
        end if
        call MPI_Comm_disconnect(inter)
        call MPI_Finalize()
        if (rank == 0) print *, 'No Errors'
    else
        call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, app, flag)
        call check(flag, 'MPI_APPNUM is set')
        nargs = command_argument_count()
        first = ' '
        if (nargs >= 1) call get_command_argument(1, first)
        v = int(app) * 100 + nargs * 10 + len_trim(first)
        call MPI_Send(v, 1, MPI_INTEGER, 0, 5, parent)
        call MPI_Comm_disconnect(parent)
        call MPI_Finalize()
    end if
end program spawn_multiple
