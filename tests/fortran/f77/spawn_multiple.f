! MPI_COMM_SPAWN_MULTIPLE from mpif.h: two commands (this program twice), one child with
! arguments 'a' 'bb', two with 'ccc' (rows of ARRAY_OF_ARGV(COUNT, *), each ending at a blank
! entry); every child reports its MPI_APPNUM, argument count and first argument's length.
! Then MPI_ARGVS_NULL: the children get no arguments.
      PROGRAM SPAWNM
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, PARENT, INTER, N, V, I, ROUND
      INTEGER MAXP(2), INFOS(2), CODES(3), WANT(3)
      INTEGER(KIND=MPI_ADDRESS_KIND) APP
      LOGICAL FLAG
      CHARACTER*(256) ME, CMDS(2), ARG1
      CHARACTER*(8) ARGVS(2, 3)
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_GET_PARENT(PARENT, IERR)
      IF (PARENT .EQ. MPI_COMM_NULL) THEN
         CALL GET_COMMAND_ARGUMENT(0, ME)
         CMDS(1) = ME
         CMDS(2) = ME
         MAXP(1) = 1
         MAXP(2) = 2
         INFOS(1) = MPI_INFO_NULL
         INFOS(2) = MPI_INFO_NULL
         ARGVS(1, 1) = 'a'
         ARGVS(1, 2) = 'bb'
         ARGVS(1, 3) = ' '
         ARGVS(2, 1) = 'ccc'
         ARGVS(2, 2) = ' '
         ARGVS(2, 3) = 'unread'
         DO ROUND = 1, 2
            CODES(1) = -1
            CODES(2) = -1
            CODES(3) = -1
            IF (ROUND .EQ. 1) THEN
               CALL MPI_COMM_SPAWN_MULTIPLE(2, CMDS, ARGVS, MAXP,
     &              INFOS, 0, MPI_COMM_WORLD, INTER, CODES, IERR)
               WANT(1) = 0 * 100 + 2 * 10 + 1
               WANT(2) = 1 * 100 + 1 * 10 + 3
               WANT(3) = 1 * 100 + 1 * 10 + 3
            ELSE
               CALL MPI_COMM_SPAWN_MULTIPLE(2, CMDS, MPI_ARGVS_NULL,
     &              MAXP, INFOS, 0, MPI_COMM_WORLD, INTER, CODES, IERR)
               WANT(1) = 0
               WANT(2) = 100
               WANT(3) = 100
            END IF
            CALL CHECK(IERR .EQ. MPI_SUCCESS, 'MPI_COMM_SPAWN_MULTIPLE')
            CALL MPI_COMM_REMOTE_SIZE(INTER, N, IERR)
            CALL CHECK(N .EQ. 3, 'three children')
            DO I = 1, 3
               CALL CHECK(CODES(I) .EQ. MPI_SUCCESS, 'error codes')
               V = -1
               CALL MPI_RECV(V, 1, MPI_INTEGER, I - 1, 3, INTER,
     &              MPI_STATUS_IGNORE, IERR)
               IF (V .NE. WANT(I)) PRINT *, 'child', I - 1, 'sent', V,
     &              'expected', WANT(I)
               CALL CHECK(V .EQ. WANT(I), 'appnum and arguments')
            END DO
            CALL MPI_COMM_DISCONNECT(INTER, IERR)
         END DO
         CALL MPI_FINALIZE(IERR)
         PRINT *, 'No Errors'
      ELSE
         CALL MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_APPNUM, APP, FLAG,
     &        IERR)
         CALL CHECK(FLAG, 'MPI_APPNUM is set')
         ARG1 = ' '
         IF (COMMAND_ARGUMENT_COUNT() .GT. 0) THEN
            CALL GET_COMMAND_ARGUMENT(1, ARG1)
         END IF
         V = INT(APP) * 100 + COMMAND_ARGUMENT_COUNT() * 10
     &        + LEN_TRIM(ARG1)
         CALL MPI_SEND(V, 1, MPI_INTEGER, 0, 3, PARENT, IERR)
         CALL MPI_COMM_DISCONNECT(PARENT, IERR)
         CALL MPI_FINALIZE(IERR)
      END IF
      END

