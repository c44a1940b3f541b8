! Shared by the `use mpi_f08` tests: abort on the first failed check.
module checks
    use mpi_f08
    implicit none
contains
    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        if (.not. ok) then
            print *, 'check failed: ', what
            call MPI_Abort(MPI_COMM_WORLD, 1)
        end if
    end subroutine check
end module checks
