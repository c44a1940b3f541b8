! `use mpi_f08`: collectives (MPI_IN_PLACE, alltoallw with typed datatype arrays), requests and
! statuses as derived types, an RMA window and its attributes.
program coll_rma
    use mpi_f08
    use checks
    implicit none
    integer :: rank, nprocs, i, ierr, sums(2), idx
    integer :: sbuf(3), rbuf(3), counts(3), displs(3)
    type(MPI_Datatype) :: stypes(3), rtypes(3)
    type(MPI_Request) :: reqs(2)
    type(MPI_Status) :: statuses(2)
    type(MPI_Win) :: win
    integer, asynchronous, volatile :: inbox(2)
    integer :: winbuf(4)
    integer(kind=MPI_ADDRESS_KIND) :: attr
    logical :: flag

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    call check(nprocs == 3, 'three ranks')

    sums = (/rank, 1/)
    call MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    call check(all(sums == (/3, 3/)), 'allreduce in place')

    ! alltoallw: element i goes to rank i-1.
    sbuf = (/(10 * rank + i, i = 1, 3)/)
    rbuf = -1
    counts = 1
    displs = (/(4 * (i - 1), i = 1, 3)/)
    stypes = MPI_INTEGER
    rtypes = MPI_INTEGER
    call MPI_Alltoallw(sbuf, counts, displs, stypes, rbuf, counts, displs, rtypes, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS, 'alltoallw')
    call check(all(rbuf == (/(10 * (i - 1) + rank + 1, i = 1, 3)/)), 'alltoallw data')

    ! Requests and statuses as derived types; Waitany counts from 1.
    inbox = -1
    call MPI_Irecv(inbox(1), 1, MPI_INTEGER, mod(rank + 1, 3), 1, MPI_COMM_WORLD, reqs(1))
    call MPI_Irecv(inbox(2), 1, MPI_INTEGER, mod(rank + 2, 3), 2, MPI_COMM_WORLD, reqs(2))
    call MPI_Send(rank, 1, MPI_INTEGER, mod(rank + 2, 3), 1, MPI_COMM_WORLD)
    call MPI_Waitany(2, reqs, idx, statuses(1))
    call check(idx == 1 .or. idx == 2, 'waitany index')
    call check(reqs(idx) == MPI_REQUEST_NULL, 'waitany nulls its request')
    call MPI_Send(rank, 1, MPI_INTEGER, mod(rank + 1, 3), 2, MPI_COMM_WORLD)
    call MPI_Waitall(2, reqs, statuses)
    call check(all(inbox == (/mod(rank + 1, 3), mod(rank + 2, 3)/)), 'irecv data')

    ! A window and its attributes (one-sided communication is not implemented in Weft yet).
    call MPI_Win_create(winbuf, int(16, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
    call MPI_Win_get_attr(win, MPI_WIN_SIZE, attr, flag)
    call check(flag .and. attr == 16, 'MPI_WIN_SIZE')
    call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, attr, flag)
    call check(flag .and. attr == MPI_WIN_FLAVOR_CREATE, 'MPI_WIN_CREATE_FLAVOR')
    call MPI_Win_free(win)
    call check(win == MPI_WIN_NULL, 'win_free nulls')

    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_Finalize()
    if (rank == 0) print *, 'No Errors'
end program coll_rma
