! Attributes between Fortran and C (attr_lang.c): values set here read in C through the
! pointer C gets, on keyvals made here and in C; a pointer set in C reads here as its address;
! MPI_COMM_DUP_FN copies a value set here, and the copy lives on after the original goes.
program attr_lang
    use mpi
    use checks
    implicit none
    integer :: ierr, fkey, ckey, dup, found, deletes, rank
    integer(kind=MPI_ADDRESS_KIND) :: val, extra, address
    logical :: flag

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    extra = 0
    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, fkey, extra, ierr)
    call c_keyval(ckey)

    ! Set here, read in C (both keyvals) and here.
    call MPI_Comm_set_attr(MPI_COMM_WORLD, fkey, 123456789012_MPI_ADDRESS_KIND, ierr)
    call c_read(MPI_COMM_WORLD, fkey, found, val)
    call check(found == 1 .and. val == 123456789012_MPI_ADDRESS_KIND, 'C reads a Fortran value (Fortran keyval)')
    call MPI_Comm_set_attr(MPI_COMM_WORLD, ckey, -5_MPI_ADDRESS_KIND, ierr)
    call c_read(MPI_COMM_WORLD, ckey, found, val)
    call check(found == 1 .and. val == -5, 'C reads a Fortran value (C keyval)')
    call MPI_Comm_get_attr(MPI_COMM_WORLD, fkey, val, flag, ierr)
    call check(flag .and. val == 123456789012_MPI_ADDRESS_KIND, 'Fortran reads its own value')

    ! Replaced from Fortran: the new value in both languages.
    call MPI_Comm_set_attr(MPI_COMM_WORLD, fkey, 7_MPI_ADDRESS_KIND, ierr)
    call c_read(MPI_COMM_WORLD, fkey, found, val)
    call check(found == 1 .and. val == 7, 'C reads the replaced value')

    ! MPI_COMM_DUP_FN: the copy has the value, and keeps it after the original is deleted.
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, fkey, ierr)
    call MPI_Comm_get_attr(MPI_COMM_WORLD, fkey, val, flag, ierr)
    call check(.not. flag, 'deleted')
    call MPI_Comm_get_attr(dup, fkey, val, flag, ierr)
    call check(flag .and. val == 7, 'MPI_COMM_DUP_FN copied the value')
    call c_read(dup, fkey, found, val)
    call check(found == 1 .and. val == 7, 'C reads the copied value')
    ! The C keyval (MPI_COMM_NULL_COPY_FN) was not copied.
    call MPI_Comm_get_attr(dup, ckey, val, flag, ierr)
    call check(.not. flag, 'MPI_COMM_NULL_COPY_FN copies nothing')

    ! Set in C (a pointer), read here as the pointer's address.
    call c_set(MPI_COMM_WORLD, ckey, address)
    call MPI_Comm_get_attr(MPI_COMM_WORLD, ckey, val, flag, ierr)
    call check(flag .and. val == address, 'a C pointer reads as its address')
    call c_deletes(deletes)
    call check(deletes == 1, 'C delete callback ran when C replaced the value')

    call MPI_Comm_free(dup, ierr)
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, ckey, ierr)
    call MPI_Comm_free_keyval(fkey, ierr)
    call MPI_Comm_free_keyval(ckey, ierr)
    call MPI_Finalize(ierr)
    if (rank == 0) print '(a)', ' No Errors'
end program attr_lang
