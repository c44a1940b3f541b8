/* MPIX_Type_iov_len / MPIX_Type_iov: merged segments, max_iov_bytes (-1 and bisection),
 * random access into a 1e6-block indexed type, bad arguments. */
#include <stdlib.h>
#include "wtest.h"

int main(int argc, char **argv)
{
    MPI_Count n, bytes, got;
    MPIX_Iov iov[8];
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    /* vector(4, 2, 3) of int: 4 segments of 8 bytes at 0, 12, 24, 36. */
    MPI_Datatype v;
    EXPECT_OK(MPI_Type_vector(4, 2, 3, MPI_INT, &v));
    EXPECT_OK(MPI_Type_commit(&v));
    EXPECT_OK(MPIX_Type_iov_len(v, -1, &n, &bytes));
    CHECK(n == 4 && bytes == 32, "iov_len -1: %lld %lld", (long long)n, (long long)bytes);
    EXPECT_OK(MPIX_Type_iov_len(v, 20, &n, &bytes));
    CHECK(n == 2 && bytes == 16, "iov_len 20: %lld %lld", (long long)n, (long long)bytes);
    EXPECT_OK(MPIX_Type_iov(v, 1, iov, 8, &got));
    CHECK_INT(got, 3);
    CHECK((MPI_Aint)iov[0].iov_base == 12 && iov[0].iov_len == 8, "segment 1");
    CHECK((MPI_Aint)iov[2].iov_base == 36 && iov[2].iov_len == 8, "segment 3");
    EXPECT_OK(MPIX_Type_iov(v, 4, iov, 8, &got));
    CHECK_INT(got, 0);

    /* Adjacent pieces merge: vector with stride == blocklength is one segment. */
    MPI_Datatype c;
    EXPECT_OK(MPI_Type_vector(4, 2, 2, MPI_INT, &c));
    EXPECT_OK(MPIX_Type_iov_len(c, -1, &n, &bytes));
    CHECK(n == 1 && bytes == 32, "merged vector: %lld", (long long)n);
    MPI_Type_free(&c);

    /* A 1e6-block indexed type: segment 999999 directly. */
    int nb = 1000000;
    int *bl = malloc(nb * sizeof(int)), *di = malloc(nb * sizeof(int));
    for (int i = 0; i < nb; i++) {
        bl[i] = 1 + i % 3;
        di[i] = 4 * i;
    }
    MPI_Datatype big;
    EXPECT_OK(MPI_Type_indexed(nb, bl, di, MPI_INT, &big));
    EXPECT_OK(MPI_Type_commit(&big));
    EXPECT_OK(MPIX_Type_iov_len(big, -1, &n, &bytes));
    CHECK(n == nb, "indexed segments %lld", (long long)n);
    EXPECT_OK(MPIX_Type_iov(big, nb - 1, iov, 8, &got));
    CHECK_INT(got, 1);
    CHECK((MPI_Aint)iov[0].iov_base == 16 * (MPI_Aint)(nb - 1) && iov[0].iov_len == 4 * (1 + (nb - 1) % 3),
          "last segment %p %ld", iov[0].iov_base, (long)iov[0].iov_len);
    free(bl);
    free(di);
    MPI_Type_free(&big);

    /* Bad arguments. */
    EXPECT_ERR(MPIX_Type_iov_len(v, -2, &n, &bytes), MPI_ERR_ARG, "MPIX_Type_iov_len", "max_iov_bytes");
    EXPECT_ERR(MPIX_Type_iov(v, -1, iov, 8, &got), MPI_ERR_ARG, "MPIX_Type_iov", "iov_offset");
    EXPECT_ERR(MPIX_Type_iov(v, 0, iov, -1, &got), MPI_ERR_ARG, "MPIX_Type_iov", "max_iov_len");
    EXPECT_ERR(MPIX_Type_iov(MPI_DATATYPE_NULL, 0, iov, 8, &got), MPI_ERR_TYPE, "MPIX_Type_iov", "datatype");
    MPI_Type_free(&v);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
