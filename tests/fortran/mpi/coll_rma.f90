! `use mpi`: a derived type (vector of columns), collectives with MPI_IN_PLACE, Comm_split,
! attributes (MPI_TAG_UB, MPI_WIN_SIZE), an RMA window with fence and put (values checked).
program coll_rma
    use mpi
    use checks
    implicit none
    integer :: ierr, rank, nprocs, i, j, col, sub, subrank, subsize
    integer :: a(4, 3), b(4), vec, sz
    integer :: sums(3), gathered(3)
    logical :: flag
    integer(kind=MPI_ADDRESS_KIND) :: tag_ub, winsize, lb, extent
    integer :: win
    integer, volatile :: winbuf(3)  ! written by other ranks through the window
    real(kind=8) :: x

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call check(nprocs == 3, 'three ranks')

    ! A row of a column-major 4x3 array: 3 blocks of 1, stride 4.
    call MPI_Type_vector(3, 1, 4, MPI_INTEGER, vec, ierr)
    call MPI_Type_commit(vec, ierr)
    call MPI_Type_size(vec, sz, ierr)
    call check(sz == 12, 'vector size')
    call MPI_Type_get_extent(vec, lb, extent, ierr)
    call check(lb == 0 .and. extent == 36, 'vector extent')
    do j = 1, 3
        do i = 1, 4
            a(i, j) = 10 * i + j
        end do
    end do
    b = -1
    if (rank == 0) then
        call MPI_Send(a(2, 1), 1, vec, 1, 5, MPI_COMM_WORLD, ierr)
    else if (rank == 1) then
        call MPI_Recv(b, 3, MPI_INTEGER, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call check(all(b(1:3) == (/21, 22, 23/)) .and. b(4) == -1, 'row received')
    end if
    call MPI_Type_free(vec, ierr)

    ! Collectives.
    col = rank + 1
    call MPI_Bcast(col, 1, MPI_INTEGER, 2, MPI_COMM_WORLD, ierr)
    call check(col == 3, 'bcast from 2')
    sums = (/rank, 2 * rank, 1/)
    call MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(all(sums == (/3, 6, 3/)), 'allreduce in place')
    x = real(rank, 8) + 0.5d0
    call MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
    call check(x == 2.5d0, 'allreduce max double')
    gathered = -1
    call MPI_Gather(rank * 7, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) call check(all(gathered == (/0, 7, 14/)), 'gather')
    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, sub, ierr)
    call MPI_Comm_rank(sub, subrank, ierr)
    call MPI_Comm_size(sub, subsize, ierr)
    if (rank == 0) call check(subsize == 2 .and. subrank == 1, 'split key orders ranks')
    if (rank == 1) call check(subsize == 1 .and. subrank == 0, 'split singleton')
    call MPI_Comm_free(sub, ierr)
    call check(sub == MPI_COMM_NULL, 'comm_free nulls')

    ! Attributes.
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tag_ub, flag, ierr)
    call check(flag .and. tag_ub >= 32767, 'MPI_TAG_UB')

    ! RMA: a window over a Fortran array, its attributes, then a fence epoch in which every
    ! rank (of the first three) puts rank + 100 into its own element of rank 0's array.
    winbuf = -1
    call MPI_Win_create(winbuf, int(3 * 4, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, &
                        MPI_COMM_WORLD, win, ierr)
    call check(ierr == MPI_SUCCESS .and. win /= MPI_WIN_NULL, 'win_create')
    call MPI_Win_get_attr(win, MPI_WIN_SIZE, winsize, flag, ierr)
    call check(flag .and. winsize == 12, 'MPI_WIN_SIZE')
    call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, winsize, flag, ierr)
    call check(flag .and. winsize == 4, 'MPI_WIN_DISP_UNIT')
    call MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN, ierr)
    call MPI_Win_fence(0, win, ierr)
    call check(ierr == MPI_SUCCESS, 'first fence')
    if (rank < 3) then
        j = rank + 100
        call MPI_Put(j, 1, MPI_INTEGER, 0, int(rank, MPI_ADDRESS_KIND), 1, MPI_INTEGER, &
                     win, ierr)
        call check(ierr == MPI_SUCCESS, 'MPI_Put')
    end if
    call MPI_Win_fence(0, win, ierr)
    call check(ierr == MPI_SUCCESS, 'second fence')
    if (rank == 0) then
        do i = 1, min(nprocs, 3)
            call check(winbuf(i) == i + 99, "put value arrived")
        end do
    end if
    call MPI_Win_free(win, ierr)
    call check(win == MPI_WIN_NULL, 'win_free nulls')

    call MPI_Finalize(ierr)
    if (rank == 0) print *, 'No Errors'
end program coll_rma
