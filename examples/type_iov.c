/* typeiov.c: the datatype iovec example of seed 000 (MPIX_Type_iov_len, MPIX_Type_iov).
 * A 100x100x100 sub-volume of 16-byte values inside a 1000x1000x1000 array: 10000
 * contiguous segments of 1600 bytes, addresses relative to a buffer at 0. */
#include <mpi.h>
#include <stdio.h>
#include <limits.h>

struct value {
    double a;
    double b;
};

int main(void)
{
    MPI_Init(NULL, NULL);

    MPI_Datatype value_type, volume_type;
    /* Create value type as a contiguous blob */
    MPI_Type_contiguous(sizeof(struct value), MPI_BYTE, &value_type);

    /* Create a sub-volume inside a 3-dimensional array */
    int full_sizes[3] = {1000, 1000, 1000};
    int sub_sizes[3] = {100, 100, 100};
    int sub_offsets[3] = {300, 300, 300};
    MPI_Type_create_subarray(3, full_sizes, sub_sizes, sub_offsets,
                             MPI_ORDER_C, value_type, &volume_type);
    MPI_Type_commit(&volume_type);

    /* Assess the segment information using the IOV extensions */
    MPI_Count iov_len, iov_bytes;
    MPIX_Type_iov_len(volume_type, INT_MAX, &iov_len, &iov_bytes);
    printf("iov_len = %ld, iov_bytes = %ld\n", (long) iov_len, (long) iov_bytes);

    MPIX_Iov iov[4];
    MPI_Count actual_iov_len;
    MPIX_Type_iov(volume_type, 0, iov, 4, &actual_iov_len);
    for (int i = 0; i < 4; i++) {
        printf("iov[%d]: %p - %ld\n", i, iov[i].iov_base, (long) iov[i].iov_len);
    }

    MPI_Type_free(&volume_type);
    MPI_Type_free(&value_type);
    MPI_Finalize();
    return 0;
}
