! Procedures taking user callbacks, through `use mpi`: a user op (its arguments by reference,
! the datatype as an INTEGER handle), keyvals (copy and delete callbacks receive the handle,
! keyval, extra state and attribute values; the predefined MPI_COMM_DUP_FN / MPI_NULL_COPY_FN
! ...), an errhandler (the INTEGER handle and the error code), a generalized request (query,
! free and cancel with the extra state) and the MPI-1 MPI_KEYVAL_CREATE.
module callbacks_state
    use mpi
    implicit none
    integer :: op_calls = 0, op_type = -1, copies = 0, deletes = 0, eh_calls = 0, eh_code = 0
    integer :: eh_comm = -1, query_calls = 0, free_calls = 0, cancel_calls = 0
    integer(kind=MPI_ADDRESS_KIND) :: seen_extra = 0, deleted_value = 0
contains
    ! Digit concatenation on (value, 10**digits) pairs: associative, not commutative.
    subroutine concat(invec, inoutvec, len, datatype)
        integer :: len, datatype
        integer :: invec(2, len), inoutvec(2, len)
        integer :: i
        op_calls = op_calls + 1
        op_type = datatype
        do i = 1, len
            inoutvec(1, i) = invec(1, i) * inoutvec(2, i) + inoutvec(1, i)
            inoutvec(2, i) = invec(2, i) * inoutvec(2, i)
        end do
    end subroutine concat

    subroutine copy_fn(oldcomm, keyval, extra_state, value_in, value_out, flag, ierror)
        integer :: oldcomm, keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: extra_state, value_in, value_out
        logical :: flag
        copies = copies + 1
        seen_extra = extra_state
        value_out = value_in + 100
        flag = .true.
        ierror = MPI_SUCCESS
    end subroutine copy_fn

    subroutine delete_fn(comm, keyval, value, extra_state, ierror)
        integer :: comm, keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: value, extra_state
        deletes = deletes + 1
        deleted_value = value
        ierror = MPI_SUCCESS
    end subroutine delete_fn

    subroutine eh_fn(comm, code)
        integer :: comm, code
        eh_calls = eh_calls + 1
        eh_comm = comm
        eh_code = code
    end subroutine eh_fn

    subroutine query_fn(extra_state, status, ierror)
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        integer :: status(MPI_STATUS_SIZE), ierror
        query_calls = query_calls + 1
        call MPI_Status_set_elements(status, MPI_INTEGER, int(extra_state), ierror)
        call MPI_Status_set_cancelled(status, .false., ierror)
        status(MPI_SOURCE) = MPI_UNDEFINED
        status(MPI_TAG) = MPI_UNDEFINED
    end subroutine query_fn

    subroutine free_fn(extra_state, ierror)
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        integer :: ierror
        free_calls = free_calls + 1
        extra_state = extra_state + 100
        ierror = MPI_SUCCESS
    end subroutine free_fn

    subroutine cancel_fn(extra_state, complete, ierror)
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        logical :: complete
        integer :: ierror
        cancel_calls = cancel_calls + 1
        ierror = MPI_SUCCESS
    end subroutine cancel_fn

    subroutine copy1_fn(oldcomm, keyval, extra_state, value_in, value_out, flag, ierr)
        integer :: oldcomm, keyval, extra_state, value_in, value_out, ierr
        logical :: flag
        value_out = value_in + extra_state
        flag = .true.
        ierr = MPI_SUCCESS
    end subroutine copy1_fn
end module callbacks_state

program callbacks
    use checks
    use callbacks_state
    implicit none
    integer :: ierr, rank, nprocs, op, i, r, expected, key, key2, key1, dup, eh, req, count
    integer :: sendbuf(4), recvbuf(4), status(MPI_STATUS_SIZE)
    integer(kind=MPI_ADDRESS_KIND) :: extra, value
    integer(kind=MPI_ADDRESS_KIND), volatile :: greq_extra
    logical :: flag, commute

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

    ! a user op: rank r contributes the digit r+1 (and 2 in a second pair); the result is
    ! the digits in rank order
    call MPI_Op_create(concat, .false., op, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Op_create')
    call MPI_Op_commutative(op, commute, ierr)
    call check(.not. commute, 'op is not commutative')
    sendbuf = (/ rank + 1, 10, 2, 10 /)
    call MPI_Allreduce(sendbuf, recvbuf, 2, MPI_2INTEGER, op, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS, 'allreduce with a user op')
    expected = 0
    do r = 1, nprocs
        expected = expected * 10 + r
    end do
    call check(recvbuf(1) == expected .and. recvbuf(2) == 10**nprocs, 'user op result (rank order)')
    call check(recvbuf(3) == 2 * (10**nprocs - 1) / 9, 'user op result, second pair')
    if (nprocs > 1) then
        call check(op_calls > 0 .or. rank /= 0, 'the op ran')
    end if
    recvbuf = (/ 5, 10, 6, 10 /)
    call MPI_Reduce_local(sendbuf, recvbuf, 2, MPI_2INTEGER, op, ierr)
    call check(recvbuf(1) == (rank + 1) * 10 + 5 .and. recvbuf(3) == 26, 'MPI_Reduce_local')
    call check(op_type == MPI_2INTEGER, 'the op received MPI_2INTEGER')
    call MPI_Op_free(op, ierr)
    call check(op == MPI_OP_NULL, 'op freed')

    ! keyvals: the copy callback runs on dup, the delete callback on free
    extra = 4242
    call MPI_Comm_create_keyval(copy_fn, delete_fn, key, extra, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Comm_create_keyval')
    value = 7
    call MPI_Comm_set_attr(MPI_COMM_WORLD, key, value, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call check(copies == 1 .and. seen_extra == 4242, 'copy callback with the extra state')
    call MPI_Comm_get_attr(dup, key, value, flag, ierr)
    call check(flag .and. value == 107, 'copied value')
    call MPI_Comm_free(dup, ierr)
    call check(deletes == 1 .and. deleted_value == 107, 'delete callback on free')
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, key, ierr)
    call check(deletes == 2 .and. deleted_value == 7, 'delete callback on delete_attr')
    call MPI_Comm_free_keyval(key, ierr)
    call check(key == MPI_KEYVAL_INVALID, 'keyval freed')

    ! the predefined callbacks
    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key, extra, ierr)
    call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key2, extra, ierr)
    value = 11
    call MPI_Comm_set_attr(MPI_COMM_WORLD, key, value, ierr)
    call MPI_Comm_set_attr(MPI_COMM_WORLD, key2, value, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call MPI_Comm_get_attr(dup, key, value, flag, ierr)
    call check(flag .and. value == 11, 'MPI_COMM_DUP_FN copies')
    call MPI_Comm_get_attr(dup, key2, value, flag, ierr)
    call check(.not. flag, 'MPI_COMM_NULL_COPY_FN does not copy')
    call MPI_Comm_free(dup, ierr)
    call MPI_Comm_free_keyval(key, ierr)
    call MPI_Comm_free_keyval(key2, ierr)
    call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, key, extra, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Type_create_keyval')
    call MPI_Type_free_keyval(key, ierr)
    call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, key, extra, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Win_create_keyval')
    call MPI_Win_free_keyval(key, ierr)

    ! MPI-1: INTEGER extra state and values
    call MPI_Keyval_create(copy1_fn, MPI_NULL_DELETE_FN, key1, 5, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Keyval_create')
    call MPI_Attr_put(MPI_COMM_WORLD, key1, 30, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call MPI_Attr_get(dup, key1, i, flag, ierr)
    call check(flag .and. i == 35, 'MPI-1 copy callback')
    call MPI_Comm_free(dup, ierr)
    call MPI_Attr_delete(MPI_COMM_WORLD, key1, ierr)
    call MPI_Keyval_free(key1, ierr)

    ! an errhandler: called with the INTEGER handle and the code
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call MPI_Comm_create_errhandler(eh_fn, eh, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Comm_create_errhandler')
    call MPI_Comm_set_errhandler(dup, eh, ierr)
    call MPI_Errhandler_free(eh, ierr)
    call MPI_Send(sendbuf, 1, MPI_INTEGER, nprocs + 3, 0, dup, ierr)
    call check(ierr /= MPI_SUCCESS, 'send to a bad rank fails')
    call check(eh_calls == 1, 'errhandler called once')
    call check(eh_comm == dup, 'errhandler received the communicator')
    call check(eh_code == ierr, 'errhandler received the code')
    call MPI_Comm_free(dup, ierr)

    ! a generalized request
    greq_extra = 3
    call MPI_Grequest_start(query_fn, free_fn, cancel_fn, greq_extra, req, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Grequest_start')
    call MPI_Cancel(req, ierr)
    call check(cancel_calls == 1, 'cancel callback')
    call MPI_Grequest_complete(req, ierr)
    call MPI_Wait(req, status, ierr)
    call check(query_calls == 1 .and. free_calls == 1, 'query and free callbacks')
    call MPI_Get_count(status, MPI_INTEGER, count, ierr)
    call check(count == 3, 'count set by the query callback from the extra state')
    call check(greq_extra == 103, 'the callbacks receive the EXTRA_STATE variable itself')

    call MPI_Finalize(ierr)
    if (rank == 0) print *, 'No Errors'
end program callbacks
