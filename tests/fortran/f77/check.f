! Shared by the mpif.h tests that link it: abort on the first failed check.
      SUBROUTINE CHECK(OK, WHAT)
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      LOGICAL OK
      CHARACTER*(*) WHAT
      INTEGER IERR
      IF (.NOT. OK) THEN
         PRINT *, 'check failed: ', WHAT
         CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
      END IF
      END
