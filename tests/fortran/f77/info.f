! MPI_INFO_GET_STRING from Fortran: BUFLEN counts characters (no NUL) in and out, a value is
! truncated to BUFLEN characters and blank-padded, and VALUE is left alone when the key is
! missing or BUFLEN is 0. MPI_INFO_CREATE_ENV.
      PROGRAM INFO
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, INF, BUFL
      LOGICAL FLAG
      CHARACTER*(20) VAL
      CALL MPI_INIT(IERR)
      CALL MPI_INFO_CREATE(INF, IERR)
      CALL MPI_INFO_SET(INF, 'sort', '123456', IERR)
      BUFL = 0
      VAL = 'canary'
      CALL MPI_INFO_GET_STRING(INF, 'sort', BUFL, VAL, FLAG, IERR)
      CALL CHECK(FLAG, 'key found')
      CALL CHECK(BUFL .EQ. 6, 'length without NUL')
      CALL CHECK(VAL .EQ. 'canary', 'BUFLEN 0 leaves VALUE')
      BUFL = 2
      CALL MPI_INFO_GET_STRING(INF, 'sort', BUFL, VAL, FLAG, IERR)
      CALL CHECK(BUFL .EQ. 6, 'length when truncated')
      CALL CHECK(VAL .EQ. '12', 'truncated to BUFLEN characters')
      BUFL = 20
      CALL MPI_INFO_GET_STRING(INF, 'sort', BUFL, VAL, FLAG, IERR)
      CALL CHECK(VAL .EQ. '123456' .AND. BUFL .EQ. 6, 'whole value')
      VAL = 'canary'
      CALL MPI_INFO_GET_STRING(INF, 'nokey', BUFL, VAL, FLAG, IERR)
      CALL CHECK(.NOT. FLAG, 'missing key')
      CALL CHECK(VAL .EQ. 'canary', 'missing key leaves VALUE')
      CALL MPI_INFO_FREE(INF, IERR)
! MPI_INFO_CREATE_ENV (no argv in Fortran): the command is the program
      CALL MPI_INFO_CREATE_ENV(INF, IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS, 'MPI_INFO_CREATE_ENV')
      BUFL = 20
      VAL = ' '
      CALL MPI_INFO_GET_STRING(INF, 'command', BUFL, VAL, FLAG, IERR)
      CALL CHECK(FLAG .AND. BUFL .GE. 4, 'command key')
      CALL MPI_INFO_FREE(INF, IERR)
      CALL MPI_FINALIZE(IERR)
      PRINT *, 'No Errors'
      END
