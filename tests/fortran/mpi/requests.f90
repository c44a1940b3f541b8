! `use mpi`: nonblocking requests as INTEGERs, Waitany's 1-based index, Waitall with statuses,
! MPI_STATUSES_IGNORE, Testall's LOGICAL, a persistent request.
program requests
    use mpi
    use checks
    implicit none
    integer :: ierr, rank, peer, i, idx, req(3), statuses(MPI_STATUS_SIZE, 3), n
    integer :: sbuf(3), preq
    integer, volatile :: rbuf(3), val  ! written by MPI after the call that received the address
    logical :: done

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    peer = 1 - rank
    sbuf = (/(10 * rank + i, i = 1, 3)/)
    rbuf = 0
    do i = 1, 3
        call MPI_Irecv(rbuf(i), 1, MPI_INTEGER, peer, i, MPI_COMM_WORLD, req(i), ierr)
    end do
    call check(all(req /= MPI_REQUEST_NULL), 'irecv requests')
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Send(sbuf(2), 1, MPI_INTEGER, peer, 2, MPI_COMM_WORLD, ierr)
    call MPI_Waitany(3, req, idx, MPI_STATUS_IGNORE, ierr)
    call check(idx == 2, 'waitany index counts from 1')
    call MPI_Barrier(MPI_COMM_WORLD, ierr)  ! the other messages are sent after both Waitanys
    call check(req(2) == MPI_REQUEST_NULL .and. rbuf(2) == 10 * peer + 2, 'waitany result')
    call MPI_Send(sbuf(1), 1, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, ierr)
    call MPI_Send(sbuf(3), 1, MPI_INTEGER, peer, 3, MPI_COMM_WORLD, ierr)
    call MPI_Waitall(3, req, statuses, ierr)
    call check(ierr == MPI_SUCCESS, 'waitall')
    call check(all(req == MPI_REQUEST_NULL), 'waitall nulls requests')
    call check(statuses(MPI_TAG, 1) == 1 .and. statuses(MPI_TAG, 3) == 3, 'statuses tags')
    call check(statuses(MPI_SOURCE, 3) == peer, 'statuses source')
    call MPI_Get_count(statuses(:, 1), MPI_INTEGER, n, ierr)
    call check(n == 1, 'get_count on a status column')
    call check(all(rbuf == (/(10 * peer + i, i = 1, 3)/)), 'all received')

    ! Testall until done, statuses ignored.
    call MPI_Isend(sbuf, 3, MPI_INTEGER, peer, 9, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Irecv(rbuf, 3, MPI_INTEGER, peer, 9, MPI_COMM_WORLD, req(2), ierr)
    done = .false.
    do while (.not. done)
        call MPI_Testall(2, req, done, MPI_STATUSES_IGNORE, ierr)
    end do
    call check(all(rbuf == (/(10 * peer + i, i = 1, 3)/)), 'testall data')

    ! A persistent send/receive, started twice.
    if (rank == 0) then
        call MPI_Send_init(val, 1, MPI_INTEGER, 1, 4, MPI_COMM_WORLD, preq, ierr)
    else
        call MPI_Recv_init(val, 1, MPI_INTEGER, 0, 4, MPI_COMM_WORLD, preq, ierr)
    end if
    do i = 1, 2
        val = merge(i * 11, 0, rank == 0)
        call MPI_Start(preq, ierr)
        call MPI_Wait(preq, MPI_STATUS_IGNORE, ierr)
        call check(preq /= MPI_REQUEST_NULL, 'persistent request stays')
        if (rank == 1) call check(val == i * 11, 'persistent data')
    end do
    call MPI_Request_free(preq, ierr)
    call check(preq == MPI_REQUEST_NULL, 'request_free nulls')

    call MPI_Finalize(ierr)
    if (rank == 0) print *, 'No Errors'
end program requests
