! mpif.h: a derived type (MPI_TYPE_VECTOR: every other element)
! sent and received, collectives (MPI_BCAST, MPI_ALLREDUCE,
! MPI_GATHER) and an RMA window (MPI_WIN_CREATE, MPI_PUT between
! fences, MPI_GET), with statuses and IERROR checked.
      PROGRAM COLLRMA
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, I, VTYPE, WIN, COUNT, SUM, ROOTV
      INTEGER STATUS(MPI_STATUS_SIZE)
      INTEGER A(8), GOT(64), WBUF(4), PEER, ORIG
      INTEGER(KIND=MPI_ADDRESS_KIND) WSIZE, DISP
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
!     A vector type: 4 blocks of 1 INTEGER, stride 2.
      CALL MPI_TYPE_VECTOR(4, 1, 2, MPI_INTEGER, VTYPE, IERR)
      CALL MPI_TYPE_COMMIT(VTYPE, IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS, 'MPI_TYPE_VECTOR')
      IF (RANK .EQ. 0) THEN
         DO I = 1, 8
            A(I) = 10 * I
         END DO
         CALL MPI_SEND(A, 1, VTYPE, 1, 3, MPI_COMM_WORLD, IERR)
      ELSE IF (RANK .EQ. 1) THEN
         DO I = 1, 8
            A(I) = -1
         END DO
         CALL MPI_RECV(A, 4, MPI_INTEGER, 0, MPI_ANY_TAG,
     &                 MPI_COMM_WORLD, STATUS, IERR)
         CALL CHECK(STATUS(MPI_SOURCE) .EQ. 0, 'status source')
         CALL CHECK(STATUS(MPI_TAG) .EQ. 3, 'status tag')
         CALL MPI_GET_COUNT(STATUS, MPI_INTEGER, COUNT, IERR)
         CALL CHECK(COUNT .EQ. 4, 'count of the vector message')
         CALL CHECK(A(1) .EQ. 10 .AND. A(2) .EQ. 30 .AND.
     &              A(3) .EQ. 50 .AND. A(4) .EQ. 70, 'vector data')
         CALL CHECK(A(5) .EQ. -1, 'nothing past the message')
      END IF
      CALL MPI_TYPE_FREE(VTYPE, IERR)
      CALL CHECK(VTYPE .EQ. MPI_DATATYPE_NULL, 'type freed')
!     Collectives.
      ROOTV = 0
      IF (RANK .EQ. 0) ROOTV = 42
      CALL MPI_BCAST(ROOTV, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, IERR)
      CALL CHECK(ROOTV .EQ. 42, 'MPI_BCAST')
      CALL MPI_ALLREDUCE(RANK + 1, SUM, 1, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      CALL CHECK(SUM .EQ. NP * (NP + 1) / 2, 'MPI_ALLREDUCE')
      CALL MPI_GATHER(RANK * 2, 1, MPI_INTEGER, GOT, 1, MPI_INTEGER,
     &                0, MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0) THEN
         DO I = 1, NP
            CALL CHECK(GOT(I) .EQ. 2 * (I - 1), 'MPI_GATHER')
         END DO
      END IF
!     An RMA window: each rank puts its rank into WBUF(2) of the next.
      DO I = 1, 4
         WBUF(I) = -1
      END DO
      WSIZE = 16
      CALL MPI_WIN_CREATE(WBUF, WSIZE, 4, MPI_INFO_NULL,
     &                    MPI_COMM_WORLD, WIN, IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS, 'MPI_WIN_CREATE')
      CALL MPI_WIN_FENCE(0, WIN, IERR)
      PEER = MOD(RANK + 1, NP)
      DISP = 1
!     The origin buffer is a variable: MPI reads it until the fence.
      ORIG = RANK + 100
      CALL MPI_PUT(ORIG, 1, MPI_INTEGER, PEER, DISP, 1,
     &             MPI_INTEGER, WIN, IERR)
      CALL MPI_WIN_FENCE(0, WIN, IERR)
      CALL CHECK(WBUF(2) .EQ. 100 + MOD(RANK + NP - 1, NP),
     &           'MPI_PUT landed')
      CALL CHECK(WBUF(1) .EQ. -1 .AND. WBUF(3) .EQ. -1,
     &           'MPI_PUT touched only its element')
      CALL MPI_GET(GOT, 1, MPI_INTEGER, PEER, DISP, 1, MPI_INTEGER,
     &             WIN, IERR)
      CALL MPI_WIN_FENCE(0, WIN, IERR)
      CALL CHECK(GOT(1) .EQ. 100 + RANK, 'MPI_GET read it back')
      CALL MPI_WIN_FREE(WIN, IERR)
      CALL CHECK(WIN .EQ. MPI_WIN_NULL, 'window freed')
!     An error through IERROR: an invalid root.
      CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN,
     &                             IERR)
      CALL MPI_BCAST(ROOTV, 1, MPI_INTEGER, NP + 5, MPI_COMM_WORLD,
     &               IERR)
      CALL CHECK(IERR .NE. MPI_SUCCESS, 'bad root reported')
      CALL MPI_FINALIZE(IERR)
      IF (RANK .EQ. 0) PRINT *, 'No Errors'
      END
