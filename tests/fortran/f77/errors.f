! Error handling through IERROR: MPI_ERRORS_RETURN, error classes and strings, invalid handles
! from Fortran INTEGERs.
      PROGRAM ERRORS
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, CLASS, RLEN, BUF(2)
      CHARACTER*(MPI_MAX_ERROR_STRING) MSG
      CHARACTER*(MPI_MAX_PROCESSOR_NAME) HOST
      LOGICAL FLAG
      CALL MPI_INITIALIZED(FLAG, IERR)
      CALL CHECK(.NOT. FLAG, 'initialized before init')
      CALL MPI_INIT(IERR)
      CALL MPI_INITIALIZED(FLAG, IERR)
      CALL CHECK(FLAG, 'initialized after init')
      CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN,
     &                             IERR)
      CALL MPI_SEND(BUF, 2, MPI_INTEGER, 5, 0, MPI_COMM_WORLD, IERR)
      CALL CHECK(IERR .NE. MPI_SUCCESS, 'send to rank 5 fails')
      CALL MPI_ERROR_CLASS(IERR, CLASS, IERR)
      CALL CHECK(CLASS .EQ. MPI_ERR_RANK, 'class is MPI_ERR_RANK')
      CALL MPI_ERROR_STRING(CLASS, MSG, RLEN, IERR)
      CALL CHECK(RLEN .GT. 0 .AND. RLEN .LE. MPI_MAX_ERROR_STRING,
     &           'error string length')
      CALL CHECK(MSG(RLEN+1:RLEN+1) .EQ. ' ', 'string blank-padded')
      CALL MPI_SEND(BUF, 2, MPI_INTEGER, 0, 0, 12345, IERR)
      CALL MPI_ERROR_CLASS(IERR, CLASS, IERR)
      CALL CHECK(CLASS .EQ. MPI_ERR_COMM, 'bad INTEGER comm')
      CALL MPI_SEND(BUF, 2, 777777, 0, 0, MPI_COMM_WORLD, IERR)
      CALL MPI_ERROR_CLASS(IERR, CLASS, IERR)
      CALL CHECK(CLASS .EQ. MPI_ERR_TYPE, 'bad INTEGER datatype')
      CALL MPI_GET_PROCESSOR_NAME(HOST, RLEN, IERR)
      CALL CHECK(RLEN .GT. 0 .AND. HOST(1:1) .NE. ' ', 'host name')
      CALL CHECK(MPI_WTIME() .GT. 0.0D0, 'wtime')
      CALL MPI_FINALIZE(IERR)
      PRINT *, 'No Errors'
      END

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
