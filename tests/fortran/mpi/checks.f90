! Shared by the `use mpi` tests: abort on the first failed check.
module checks
    use mpi
    implicit none
contains
    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        integer :: ierr
        if (.not. ok) then
            print *, 'check failed: ', what
            call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
        end if
    end subroutine check
end module checks
