! The cells holding attribute values set from Fortran live as long as an object holds them
! (attr_cells.c of the Fortran library; MPIX_Attr_value_hooks): a value set here on a C keyval
! whose copy callback passes the pointer on (MPI_COMM_DUP_FN) stays readable on the duplicate
! after C deletes the original, and every delete callback reads the value it is given; then
! 200000 sets, replacements and C deletes on a C keyval, and 100000 on a Fortran keyval, leave
! the resident memory where it was (each lost cell would keep 32 bytes: 9 MiB in all).
program attr_cells
    use mpi
    use checks
    implicit none
    integer, parameter :: ROUNDS = 200000
    integer :: ierr, ckey, fkey, dup, found, deletes, before, after, i
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    logical :: flag

    call MPI_Init(ierr)
    call cell_keyval(ckey)

    ! One cell, two holders: WORLD and its duplicate.
    call MPI_Comm_set_attr(MPI_COMM_WORLD, ckey, 11_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call c_delete_attr(MPI_COMM_WORLD, ckey, ierr)
    call check(ierr == MPI_SUCCESS, 'C deletes the attribute')
    call c_last_deleted(val, deletes)
    call check(val == 11 .and. deletes == 1, 'the delete callback read the value')
    call MPI_Comm_get_attr(dup, ckey, val, flag, ierr)
    call check(flag .and. val == 11, 'the duplicate still reads the value here')
    call c_value(dup, ckey, found, val)
    call check(found == 1 .and. val == 11, 'the duplicate still reads the value in C')
    call MPI_Comm_free(dup, ierr)
    call c_last_deleted(val, deletes)
    call check(val == 11 .and. deletes == 2, 'freeing the duplicate deleted its copy')

    extra = 0
    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, fkey, extra, ierr)
    ! Warm up the allocator and the library's lists before measuring.
    do i = 1, 1000
        call MPI_Comm_set_attr(MPI_COMM_WORLD, ckey, int(i, MPI_ADDRESS_KIND), ierr)
        call MPI_Comm_set_attr(MPI_COMM_WORLD, fkey, int(i, MPI_ADDRESS_KIND), ierr)
    end do
    call c_resident_kib(before)
    do i = 1, ROUNDS
        call MPI_Comm_set_attr(MPI_COMM_WORLD, ckey, int(i, MPI_ADDRESS_KIND), ierr)
        if (mod(i, 2) == 0) then
            call c_delete_attr(MPI_COMM_WORLD, ckey, ierr)
            call c_last_deleted(val, deletes)
            call check(val == i, 'a C delete reads the value set last')
        end if
        if (mod(i, 2) == 0) then
            call MPI_Comm_set_attr(MPI_COMM_WORLD, fkey, int(i, MPI_ADDRESS_KIND), ierr)
            call MPI_Comm_get_attr(MPI_COMM_WORLD, fkey, val, flag, ierr)
            call check(flag .and. val == i, 'the Fortran keyval reads the value set last')
        end if
    end do
    call c_value(MPI_COMM_WORLD, ckey, found, val)
    call check(found == 0, 'the last C delete removed the attribute')
    call c_resident_kib(after)
    if (after - before >= 2048) print *, 'resident memory grew from ', before, ' to ', after, ' KiB'
    call check(before > 0 .and. after - before < 2048, 'no cell is lost')

    call MPI_Comm_delete_attr(MPI_COMM_WORLD, fkey, ierr)
    call MPI_Comm_free_keyval(fkey, ierr)
    call MPI_Comm_free_keyval(ckey, ierr)
    call MPI_Finalize(ierr)
    print '(a)', ' No Errors'
end program attr_cells
