! MPI_SIZEOF (`use mpi`): the size in bytes of one element of a scalar or array of each type.
program sizeof
    use checks
    implicit none
    integer :: s, ierr, a(3, 4)
    integer(kind=8) :: i8
    integer(kind=2) :: i2(5)
    real(kind=8) :: d
    real :: r(2, 2, 2)
    complex(kind=8) :: z
    logical :: l(7)
    character(len=5) :: str

    call MPI_Init(ierr)
    call MPI_Sizeof(a, s, ierr)
    call check(s == 4 .and. ierr == MPI_SUCCESS, 'INTEGER array')
    call MPI_Sizeof(i8, s, ierr)
    call check(s == 8, 'INTEGER(KIND=8)')
    call MPI_Sizeof(i2, s, ierr)
    call check(s == 2, 'INTEGER(KIND=2) array')
    call MPI_Sizeof(d, s, ierr)
    call check(s == 8, 'REAL(KIND=8)')
    call MPI_Sizeof(r, s, ierr)
    call check(s == 4, 'REAL rank-3 array')
    call MPI_Sizeof(z, s, ierr)
    call check(s == 16, 'COMPLEX(KIND=8)')
    call MPI_Sizeof(l, s, ierr)
    call check(s == 4, 'LOGICAL array')
    call MPI_Sizeof(str, s, ierr)
    call check(s == 5, 'CHARACTER(LEN=5)')
    call MPI_Finalize(ierr)
    print *, 'No Errors'
end program sizeof
