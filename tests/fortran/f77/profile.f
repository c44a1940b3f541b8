! The profiling interface: a program (or tool) that defines MPI_BARRIER and MPI_COMM_RANK
! replaces the library's, and reaches the library through PMPI_BARRIER / PMPI_COMM_RANK.
      PROGRAM PROFILE
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NPROF
      COMMON /PROF/ NPROF
      DOUBLE PRECISION T
      NPROF = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL CHECK(NPROF .EQ. 1, 'MPI_COMM_RANK went through the wrapper')
      CALL CHECK(RANK .GE. 1000, 'the wrapper saw the rank')
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      CALL CHECK(NPROF .EQ. 2, 'MPI_BARRIER went through the wrapper')
      CALL CHECK(IERR .EQ. MPI_SUCCESS, 'PMPI_BARRIER succeeded')
      CALL PMPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL CHECK(NPROF .EQ. 2, 'PMPI_COMM_RANK is the library')
      T = PMPI_WTIME()
      CALL CHECK(T .GT. 0.0D0, 'PMPI_WTIME')
      CALL MPI_FINALIZE(IERR)
      IF (RANK .EQ. 0) PRINT *, 'No Errors'
      END

      SUBROUTINE MPI_COMM_RANK(COMM, RANK, IERR)
      IMPLICIT NONE
      INTEGER COMM, RANK, IERR, NPROF
      COMMON /PROF/ NPROF
      NPROF = NPROF + 1
      CALL PMPI_COMM_RANK(COMM, RANK, IERR)
      RANK = RANK + 1000
      END

      SUBROUTINE MPI_BARRIER(COMM, IERR)
      IMPLICIT NONE
      INTEGER COMM, IERR, NPROF
      COMMON /PROF/ NPROF
      NPROF = NPROF + 1
      CALL PMPI_BARRIER(COMM, IERR)
      END
