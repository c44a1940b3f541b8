! The ring of ring.c, in Fortran with `use mpi`.
program ring
    use mpi
    implicit none
    integer :: ierr, rank, nprocs, total
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call MPI_Reduce(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        print '(a, i0, a, i0)', 'ring (Fortran): sum ', total, ', expected ', nprocs * (nprocs + 1) / 2
        if (total /= nprocs * (nprocs + 1) / 2) call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
    call MPI_Finalize(ierr)
end program ring
