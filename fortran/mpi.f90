! The `use mpi` module: mpif.h's constants and sentinels in a module (Weft).
module mpi
    implicit none
    include 'mpif.h'
end module mpi
