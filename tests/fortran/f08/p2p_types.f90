! `use mpi_f08`: typed handles, TYPE(MPI_Status) components, optional ierror, a struct datatype,
! the large-count form through the generic (INTEGER(MPI_COUNT_KIND) count), strings, errors
! through ierror, and a non-contiguous section whose count does not cover it refused
! (sections.f90 has the sections that work).
program p2p_types
    use mpi_f08
    use checks
    implicit none
    type :: particle
        sequence
        integer :: id
        real(kind=8) :: x, y
    end type particle
    type(particle) :: p(2), q(2)
    type(MPI_Datatype) :: ptype, types(2)
    type(MPI_Status) :: status
    type(MPI_Comm) :: dup
    integer :: rank, peer, n, ierr, errclass, rlen, blocklens(2), a(6)
    integer(kind=MPI_ADDRESS_KIND) :: disps(2), base
    integer(kind=MPI_COUNT_KIND) :: bigcount
    character(len=MPI_MAX_OBJECT_NAME) :: name
    logical :: flag

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    peer = 1 - rank
    call check(MPI_COMM_WORLD /= MPI_COMM_SELF .and. MPI_COMM_WORLD == MPI_COMM_WORLD, 'handle operators')

    ! A struct datatype from addresses.
    call MPI_Get_address(p(1)%id, base)
    call MPI_Get_address(p(1)%x, disps(2))
    disps(1) = 0
    disps(2) = MPI_Aint_diff(disps(2), base)
    blocklens = (/1, 2/)
    types = (/MPI_INTEGER, MPI_DOUBLE_PRECISION/)
    call MPI_Type_create_struct(2, blocklens, disps, types, ptype, ierr)
    call check(ierr == MPI_SUCCESS, 'type_create_struct')
    call MPI_Type_commit(ptype)
    call MPI_Type_size(ptype, n)
    call check(n == 20, 'struct size')
    p(1) = particle(7, 1.5d0, -2.0d0)
    p(2) = particle(8, 3.25d0, 4.0d0)
    q = particle(0, 0d0, 0d0)
    if (rank == 0) then
        call MPI_Send(p, 2, ptype, peer, 11, MPI_COMM_WORLD)
    else
        call MPI_Recv(q, 2, ptype, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status)
        call check(status%MPI_SOURCE == 0 .and. status%MPI_TAG == 11, 'status components')
        call MPI_Get_count(status, ptype, n)
        call check(n == 2, 'get_count of structs')
        call check(q(2)%id == 8 .and. q(2)%x == 3.25d0 .and. q(1)%y == -2.0d0, 'struct data')
    end if
    call MPI_Type_free(ptype)
    call check(ptype == MPI_DATATYPE_NULL, 'type_free nulls')

    ! The large-count form, chosen by the count's kind.
    bigcount = 3
    a = rank
    if (rank == 0) then
        a = (/1, 2, 3, 4, 5, 6/)
        call MPI_Send(a, bigcount, MPI_INTEGER, peer, 12, MPI_COMM_WORLD)
    else
        call MPI_Recv(a, bigcount, MPI_INTEGER, 0, 12, MPI_COMM_WORLD, status)
        call MPI_Get_count(status, MPI_INTEGER, bigcount)
        call check(bigcount == 3 .and. all(a == (/1, 2, 3, 1, 1, 1/)), 'large-count send/recv')
    end if

    ! Strings and a duplicated communicator.
    call MPI_Comm_dup(MPI_COMM_WORLD, dup)
    call MPI_Comm_set_name(dup, 'f08 dup')
    call MPI_Comm_get_name(dup, name, rlen)
    call check(rlen == 7 .and. name == 'f08 dup', 'comm name')
    call MPI_Comm_compare(dup, MPI_COMM_WORLD, n)
    call check(n == MPI_CONGRUENT, 'dup is congruent')

    ! Errors through ierror.
    call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN)
    call MPI_Send(a, 1, MPI_INTEGER, 9, 0, dup, ierr)
    call MPI_Error_class(ierr, errclass)
    call check(errclass == MPI_ERR_RANK, 'MPI_ERR_RANK through ierror')
    call MPI_Send(a(1:6:2), 2, MPI_INTEGER, peer, 0, dup, ierr)
    call check(ierr == MPI_ERR_BUFFER, 'non-contiguous section (count short of it) refused')
    call MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup, flag, MPI_STATUS_IGNORE)
    call check(.not. flag, 'nothing was sent')
    call MPI_Comm_free(dup)
    call check(dup == MPI_COMM_NULL, 'comm_free nulls')

    call MPI_Finalize()
    if (rank == 0) print *, 'No Errors'
end program p2p_types
