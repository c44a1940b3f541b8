! Procedures taking user callbacks, through `use mpi_f08`: the callbacks have the standard's
! abstract interfaces (TYPE(C_PTR) buffers by value, TYPE(MPI_Datatype), TYPE(MPI_Comm) ...):
! MPI_Op_create and MPI_Op_create_c, keyvals with user and predefined callbacks, an
! errhandler, a generalized request; ierror left out.
module callbacks_state
    use mpi_f08
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    implicit none
    integer :: op_calls = 0, copies = 0, deletes = 0, eh_calls = 0, eh_code = 0, query_calls = 0
    integer(kind=MPI_COUNT_KIND) :: big_len = -1
    type(MPI_Datatype) :: op_type
    type(MPI_Comm) :: eh_comm, copy_comm
    integer(kind=MPI_ADDRESS_KIND) :: seen_extra = 0, deleted_value = 0
contains
    ! Digit concatenation on (value, 10**digits) pairs: associative, not commutative.
    subroutine concat(invec, inoutvec, len, datatype)
        type(c_ptr), value :: invec, inoutvec
        integer :: len
        type(MPI_Datatype) :: datatype
        integer, pointer :: a(:, :), b(:, :)
        integer :: i
        call c_f_pointer(invec, a, (/ 2, len /))
        call c_f_pointer(inoutvec, b, (/ 2, len /))
        op_calls = op_calls + 1
        op_type = datatype
        do i = 1, len
            b(1, i) = a(1, i) * b(2, i) + b(1, i)
            b(2, i) = a(2, i) * b(2, i)
        end do
    end subroutine concat

    subroutine concat_c(invec, inoutvec, len, datatype)
        type(c_ptr), value :: invec, inoutvec
        integer(kind=MPI_COUNT_KIND) :: len
        type(MPI_Datatype) :: datatype
        big_len = len
        call concat(invec, inoutvec, int(len), datatype)
    end subroutine concat_c

    subroutine copy_fn(oldcomm, keyval, extra_state, value_in, value_out, flag, ierror)
        type(MPI_Comm) :: oldcomm
        integer :: keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: extra_state, value_in, value_out
        logical :: flag
        copies = copies + 1
        copy_comm = oldcomm
        seen_extra = extra_state
        value_out = value_in * 2
        flag = .true.
        ierror = MPI_SUCCESS
    end subroutine copy_fn

    subroutine delete_fn(comm, keyval, value, extra_state, ierror)
        type(MPI_Comm) :: comm
        integer :: keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: value, extra_state
        deletes = deletes + 1
        deleted_value = value
        ierror = MPI_SUCCESS
    end subroutine delete_fn

    subroutine eh_fn(comm, code)
        type(MPI_Comm) :: comm
        integer :: code
        eh_calls = eh_calls + 1
        eh_comm = comm
        eh_code = code
    end subroutine eh_fn

    subroutine query_fn(extra_state, status, ierror)
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        type(MPI_Status) :: status
        integer :: ierror
        query_calls = query_calls + 1
        call MPI_Status_set_elements(status, MPI_INTEGER, int(extra_state))
        call MPI_Status_set_cancelled(status, .false.)
        status%MPI_SOURCE = MPI_UNDEFINED
        status%MPI_TAG = 17
        ierror = MPI_SUCCESS
    end subroutine query_fn

    subroutine free_fn(extra_state, ierror)
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        integer :: ierror
        ierror = MPI_SUCCESS
    end subroutine free_fn

    subroutine cancel_fn(extra_state, complete, ierror)
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        logical :: complete
        integer :: ierror
        ierror = MPI_SUCCESS
    end subroutine cancel_fn
end module callbacks_state

program callbacks
    use checks
    use callbacks_state
    implicit none
    integer :: ierr, rank, nprocs, r, expected, key, key2, count
    integer :: sendbuf(4), recvbuf(4)
    type(MPI_Op) :: op
    type(MPI_Comm) :: dup
    type(MPI_Errhandler) :: eh
    type(MPI_Request) :: req
    type(MPI_Status) :: status
    integer(kind=MPI_ADDRESS_KIND) :: extra, value
    logical :: flag

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    expected = 0
    do r = 1, nprocs
        expected = expected * 10 + r
    end do

    call MPI_Op_create(concat, .false., op, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Op_create')
    sendbuf = (/ rank + 1, 10, 2, 10 /)
    call MPI_Allreduce(sendbuf, recvbuf, 2, MPI_2INTEGER, op, MPI_COMM_WORLD)
    call check(recvbuf(1) == expected .and. recvbuf(2) == 10**nprocs, 'user op result (rank order)')
    recvbuf = (/ 5, 10, 6, 10 /)
    call MPI_Reduce_local(sendbuf, recvbuf, 2, MPI_2INTEGER, op)
    call check(recvbuf(1) == (rank + 1) * 10 + 5 .and. recvbuf(3) == 26, 'MPI_Reduce_local')
    call check(op_type == MPI_2INTEGER, 'the op received MPI_2INTEGER')
    call MPI_Op_free(op)

    call MPI_Op_create_c(concat_c, .false., op)
    recvbuf = (/ 5, 10, 6, 10 /)
    call MPI_Reduce_local(sendbuf, recvbuf, 2, MPI_2INTEGER, op)
    call check(big_len == 2, 'the large-count op received an MPI_COUNT_KIND length')
    call check(recvbuf(1) == (rank + 1) * 10 + 5, 'MPI_Op_create_c result')
    call MPI_Op_free(op)

    extra = 99
    call MPI_Comm_create_keyval(copy_fn, delete_fn, key, extra)
    value = 21
    call MPI_Comm_set_attr(MPI_COMM_WORLD, key, value)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup)
    call check(copies == 1 .and. seen_extra == 99, 'copy callback with the extra state')
    call check(copy_comm == MPI_COMM_WORLD, 'copy callback received the old communicator')
    call MPI_Comm_get_attr(dup, key, value, flag)
    call check(flag .and. value == 42, 'copied value')
    call MPI_Comm_free(dup)
    call check(deletes == 1 .and. deleted_value == 42, 'delete callback on free')
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, key)
    call MPI_Comm_free_keyval(key)

    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key, extra)
    call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key2, extra)
    value = 5
    call MPI_Comm_set_attr(MPI_COMM_WORLD, key, value)
    call MPI_Comm_set_attr(MPI_COMM_WORLD, key2, value)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup)
    call MPI_Comm_get_attr(dup, key, value, flag)
    call check(flag .and. value == 5, 'MPI_COMM_DUP_FN copies')
    call MPI_Comm_get_attr(dup, key2, value, flag)
    call check(.not. flag, 'MPI_COMM_NULL_COPY_FN does not copy')
    call MPI_Comm_free(dup)
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, key)
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, key2)
    call MPI_Comm_free_keyval(key)
    call MPI_Comm_free_keyval(key2)
    call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, key, extra)
    call MPI_Type_free_keyval(key)
    call MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, key, extra, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Win_create_keyval')
    call MPI_Win_free_keyval(key)

    call MPI_Comm_dup(MPI_COMM_WORLD, dup)
    call MPI_Comm_create_errhandler(eh_fn, eh)
    call MPI_Comm_set_errhandler(dup, eh)
    call MPI_Errhandler_free(eh)
    call MPI_Send(sendbuf, 1, MPI_INTEGER, nprocs + 3, 0, dup, ierr)
    call check(ierr /= MPI_SUCCESS, 'send to a bad rank fails')
    call check(eh_calls == 1 .and. eh_comm == dup .and. eh_code == ierr, 'errhandler arguments')
    call MPI_Comm_free(dup)

    extra = 4
    call MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra, req)
    call MPI_Grequest_complete(req)
    call MPI_Wait(req, status)
    call MPI_Get_count(status, MPI_INTEGER, count)
    call check(query_calls == 1 .and. count == 4 .and. status%MPI_TAG == 17, 'generalized request status')

    call MPI_Finalize()
    if (rank == 0) print *, 'No Errors'
end program callbacks
