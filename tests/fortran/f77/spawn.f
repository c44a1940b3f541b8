! MPI_COMM_SPAWN from mpif.h with MPI_ARGV_NULL and MPI_ERRCODES_IGNORE: the child gets no
! arguments, and answers its parent over the intercommunicator.
      PROGRAM SPAWN
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, PARENT, INTER, N, V
      CHARACTER*(256) ME
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_GET_PARENT(PARENT, IERR)
      IF (PARENT .EQ. MPI_COMM_NULL) THEN
         CALL GET_COMMAND_ARGUMENT(0, ME)
         CALL MPI_COMM_SPAWN(ME, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0,
     &        MPI_COMM_WORLD, INTER, MPI_ERRCODES_IGNORE, IERR)
         CALL CHECK(IERR .EQ. MPI_SUCCESS, 'MPI_COMM_SPAWN')
         CALL MPI_COMM_REMOTE_SIZE(INTER, N, IERR)
         CALL CHECK(N .EQ. 1, 'one child')
         V = -1
         CALL MPI_RECV(V, 1, MPI_INTEGER, 0, 3, INTER,
     &        MPI_STATUS_IGNORE, IERR)
         CALL CHECK(V .EQ. 42, 'the child saw no arguments')
         CALL MPI_COMM_DISCONNECT(INTER, IERR)
         CALL MPI_FINALIZE(IERR)
         PRINT *, 'No Errors'
      ELSE
         V = 42 + COMMAND_ARGUMENT_COUNT()
         CALL MPI_SEND(V, 1, MPI_INTEGER, 0, 3, PARENT, IERR)
         CALL MPI_COMM_DISCONNECT(PARENT, IERR)
         CALL MPI_FINALIZE(IERR)
      END IF
      END

