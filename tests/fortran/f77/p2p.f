! Point-to-point through mpif.h: send/recv with a status, MPI_STATUS_IGNORE, MPI_GET_COUNT,
! MPI_IPROBE's LOGICAL flag, MPI_BOTTOM with an absolute-address datatype, string arguments.
      PROGRAM P2P
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NPROCS, I, N, RLEN
      INTEGER STATUS(MPI_STATUS_SIZE)
      INTEGER BUF(10), TYPE
      DOUBLE PRECISION D(4)
      INTEGER(KIND=MPI_ADDRESS_KIND) ADDR
      LOGICAL FLAG
      CHARACTER*(MPI_MAX_OBJECT_NAME) NAME
      CALL MPI_INIT(IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS, 'init')
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)
      CALL CHECK(NPROCS .EQ. 2, 'size')
      IF (RANK .EQ. 0) THEN
         DO I = 1, 10
            BUF(I) = 100 + I
         END DO
         CALL MPI_SEND(BUF, 7, MPI_INTEGER, 1, 42, MPI_COMM_WORLD, IERR)
         D(1) = 1.5D0
         D(2) = -2.25D0
         D(3) = 3.0D0
         D(4) = 4.0D0
         CALL MPI_SEND(D, 4, MPI_DOUBLE_PRECISION, 1, 7,
     &                 MPI_COMM_WORLD, IERR)
         CALL MPI_GET_ADDRESS(BUF(3), ADDR, IERR)
         CALL MPI_TYPE_CREATE_HINDEXED(1, (/2/), (/ADDR/), MPI_INTEGER,
     &                                 TYPE, IERR)
         CALL MPI_TYPE_COMMIT(TYPE, IERR)
         CALL MPI_SEND(MPI_BOTTOM, 1, TYPE, 1, 9, MPI_COMM_WORLD, IERR)
         CALL CHECK(IERR .EQ. MPI_SUCCESS, 'send from MPI_BOTTOM')
         CALL MPI_TYPE_FREE(TYPE, IERR)
         CALL CHECK(TYPE .EQ. MPI_DATATYPE_NULL, 'type_free nulls')
      ELSE
         BUF = 0
         FLAG = .FALSE.
         DO WHILE (.NOT. FLAG)
            CALL MPI_IPROBE(0, 42, MPI_COMM_WORLD, FLAG, STATUS, IERR)
         END DO
         CALL CHECK(STATUS(MPI_SOURCE) .EQ. 0, 'iprobe source')
         CALL CHECK(STATUS(MPI_TAG) .EQ. 42, 'iprobe tag')
         CALL MPI_RECV(BUF, 10, MPI_INTEGER, MPI_ANY_SOURCE,
     &                 MPI_ANY_TAG, MPI_COMM_WORLD, STATUS, IERR)
         CALL CHECK(IERR .EQ. MPI_SUCCESS, 'recv')
         CALL MPI_GET_COUNT(STATUS, MPI_INTEGER, N, IERR)
         CALL CHECK(N .EQ. 7, 'get_count')
         CALL CHECK(STATUS(MPI_TAG) .EQ. 42, 'recv tag')
         CALL CHECK(BUF(7) .EQ. 107 .AND. BUF(8) .EQ. 0, 'recv data')
         CALL MPI_RECV(D, 4, MPI_DOUBLE_PRECISION, 0, 7,
     &                 MPI_COMM_WORLD, MPI_STATUS_IGNORE, IERR)
         CALL CHECK(D(2) .EQ. -2.25D0 .AND. D(4) .EQ. 4.0D0, 'doubles')
         CALL MPI_RECV(BUF, 10, MPI_INTEGER, 0, 9, MPI_COMM_WORLD,
     &                 STATUS, IERR)
         CALL MPI_GET_COUNT(STATUS, MPI_INTEGER, N, IERR)
         CALL CHECK(N .EQ. 2 .AND. BUF(1) .EQ. 103 .AND.
     &              BUF(2) .EQ. 104, 'MPI_BOTTOM data')
      END IF
      CALL MPI_COMM_SET_NAME(MPI_COMM_WORLD, 'fortran world  ', IERR)
      CALL MPI_COMM_GET_NAME(MPI_COMM_WORLD, NAME, RLEN, IERR)
      CALL CHECK(RLEN .EQ. 13, 'name length')
      CALL CHECK(NAME .EQ. 'fortran world', 'name')
      CALL MPI_FINALIZE(IERR)
      IF (RANK .EQ. 0) PRINT *, 'No Errors'
      END
