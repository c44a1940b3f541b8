/* MPI-IO benchmarks (bench/io.py runs them for Weft, MPICH/ROMIO and Open MPI/OMPIO).
 *
 *   io coll DIR MIB REPS [GRID] collective write and read of a 3-D block-distributed array of
 *                               doubles (MIB MiB in all; each rank's block is noncontiguous in
 *                               the file) over a process grid GRID ("2x2x1"; default from
 *                               MPI_Dims_create with the last dimension 1); prints
 *                               "coll_write SECONDS" and "coll_read SECONDS" per repetition
 *                               (the slowest rank's time, from a barrier).
 *   io indep DIR MIB REPS       one rank: contiguous MPI_File_write_at/read_at of MIB MiB in
 *                               4 MiB calls, and the same with pwrite/pread on the same file
 *                               ("dd"); prints "mpi_write", "posix_write", "mpi_read",
 *                               "posix_read" seconds per repetition.
 *   io overlap DIR MIB MS REPS  one rank: MPI_File_iread_at of MIB MiB overlapping MS ms of
 *                               computation, then MPI_Wait; prints "io" (a blocking read),
 *                               "compute" (the loop alone) and "overlap" (iread + compute +
 *                               wait) seconds per repetition.
 * Every run checks the data it reads; each mode first runs once untimed (a warm-up whose
 * times are not printed). Files live in DIR (the same for every MPI). */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void die(const char *what, int rc)
{
    char s[MPI_MAX_ERROR_STRING];
    int n;
    MPI_Error_string(rc, s, &n);
    fprintf(stderr, "%s: %s\n", what, s);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define OK(call)                                                                         \
    do {                                                                                 \
        int rc_ = (call);                                                                \
        if (rc_ != MPI_SUCCESS)                                                          \
            die(#call, rc_);                                                             \
    } while (0)

static double value(long i) { return (double)(i % 1000003) * 0.5; }

static int coll(const char *dir, long mib, int reps, const char *grid)
{
    int rank, size, dims[3] = {0, 0, 1}, periods[3] = {0}, coords[3];
    MPI_Comm cart;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (grid && sscanf(grid, "%dx%dx%d", &dims[0], &dims[1], &dims[2]) != 3) {
        fprintf(stderr, "grid %s: expected AxBxC\n", grid);
        return 1;
    }
    if (dims[0] * dims[1] * dims[2] != size && grid) {
        fprintf(stderr, "grid %s does not have %d ranks\n", grid, size);
        return 1;
    }
    if (!grid)
        MPI_Dims_create(size, 3, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 3, coords);
    /* A cube-ish global array of doubles of about MIB MiB, each dimension a multiple of the grid. */
    long n = 1;
    while ((n + 1) * (n + 1) * (n + 1) * 8 <= mib * 1048576)
        n++;
    int g[3], l[3], s[3];
    for (int d = 0; d < 3; d++) {
        g[d] = (int)(n / dims[d] * dims[d]);
        l[d] = g[d] / dims[d];
        s[d] = coords[d] * l[d];
    }
    long local = (long)l[0] * l[1] * l[2];
    double *buf = malloc(local * sizeof(double)), *back = malloc(local * sizeof(double));
    for (long i = 0; i < l[0]; i++)
        for (long j = 0; j < l[1]; j++)
            for (long k = 0; k < l[2]; k++)
                buf[(i * l[1] + j) * l[2] + k] =
                    value(((i + s[0]) * g[1] + (j + s[1])) * (long)g[2] + (k + s[2]));
    MPI_Datatype ft;
    OK(MPI_Type_create_subarray(3, g, l, s, MPI_ORDER_C, MPI_DOUBLE, &ft));
    OK(MPI_Type_commit(&ft));
    char path[512];
    snprintf(path, sizeof path, "%s/weft_bench_coll.dat", dir);
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "native", MPI_INFO_NULL));
    for (int r = -1; r < reps; r++) {
        double t0, t;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = now();
        OK(MPI_File_write_at_all(fh, 0, buf, (int)local, MPI_DOUBLE, MPI_STATUS_IGNORE));
        MPI_Barrier(MPI_COMM_WORLD);
        t = now() - t0;
        if (rank == 0 && r >= 0)
            printf("coll_write %.6f %ld\n", t, (long)g[0] * g[1] * g[2] * 8);
        memset(back, 0, local * sizeof(double));
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = now();
        OK(MPI_File_read_at_all(fh, 0, back, (int)local, MPI_DOUBLE, MPI_STATUS_IGNORE));
        MPI_Barrier(MPI_COMM_WORLD);
        t = now() - t0;
        if (memcmp(buf, back, local * sizeof(double)) != 0) {
            fprintf(stderr, "rank %d: collective read differs\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (rank == 0 && r >= 0)
            printf("coll_read %.6f %ld\n", t, (long)g[0] * g[1] * g[2] * 8);
    }
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(path);
    MPI_Type_free(&ft);
    MPI_Comm_free(&cart);
    free(buf);
    free(back);
    return 0;
}

#define CHUNK (4L << 20)

static int indep(const char *dir, long mib, int reps)
{
    long bytes = mib << 20;
    if (bytes <= 0)
        return 1;
    char *buf = malloc(bytes), *back = malloc(bytes), path[512];
    for (long i = 0; i < bytes; i++)
        buf[i] = (char)(i * 31 + 7);
    snprintf(path, sizeof path, "%s/weft_bench_indep.dat", dir);
    {
        /* The file exists at full size before anything is timed, so neither side pays for
         * allocating its pages first. */
        int fd = open(path, O_RDWR | O_CREAT, 0644);
        for (long o = 0; o < bytes; o += CHUNK)
            if (pwrite(fd, buf + o, bytes - o < CHUNK ? bytes - o : CHUNK, o) < 0)
                return 3;
        close(fd);
    }
    for (int r = -1; r < reps; r++) {
        MPI_File fh;
        double t0;
        FILE *out = r >= 0 ? stdout : fopen("/dev/null", "w");
        OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
        t0 = now();
        for (long o = 0; o < bytes; o += CHUNK)
            OK(MPI_File_write_at(fh, o, buf + o, (int)(bytes - o < CHUNK ? bytes - o : CHUNK),
                                 MPI_BYTE, MPI_STATUS_IGNORE));
        fprintf(out, "mpi_write %.6f %ld\n", now() - t0, bytes);
        memset(back, 0, (size_t)bytes);
        t0 = now();
        for (long o = 0; o < bytes; o += CHUNK)
            OK(MPI_File_read_at(fh, o, back + o, (int)(bytes - o < CHUNK ? bytes - o : CHUNK),
                                MPI_BYTE, MPI_STATUS_IGNORE));
        fprintf(out, "mpi_read %.6f %ld\n", now() - t0, bytes);
        OK(MPI_File_close(&fh));
        if (memcmp(buf, back, bytes) != 0) {
            fprintf(stderr, "MPI read differs\n");
            return 2;
        }
        int fd = open(path, O_RDWR);
        t0 = now();
        for (long o = 0; o < bytes; o += CHUNK)
            if (pwrite(fd, buf + o, bytes - o < CHUNK ? bytes - o : CHUNK, o) < 0)
                return 3;
        fprintf(out, "posix_write %.6f %ld\n", now() - t0, bytes);
        memset(back, 0, (size_t)bytes);
        t0 = now();
        for (long o = 0; o < bytes; o += CHUNK)
            if (pread(fd, back + o, bytes - o < CHUNK ? bytes - o : CHUNK, o) < 0)
                return 3;
        fprintf(out, "posix_read %.6f %ld\n", now() - t0, bytes);
        close(fd);
        if (out != stdout)
            fclose(out);
        if (memcmp(buf, back, bytes) != 0) {
            fprintf(stderr, "POSIX read differs\n");
            return 2;
        }
    }
    unlink(path);
    free(buf);
    free(back);
    return 0;
}

/* Busy computation for about `ms` milliseconds (calibrated once). */
static volatile double sink;
static long iters_per_ms;

static void compute(long iters)
{
    double x = 1.0;
    for (long i = 0; i < iters; i++)
        x = x * 1.0000001 + 1e-9;
    sink = x;
}

static int overlap(const char *dir, long mib, int ms, int reps)
{
    long bytes = mib << 20;
    if (bytes <= 0)
        return 1;
    char *buf = malloc(bytes), *back = malloc(bytes), path[512];
    for (long i = 0; i < bytes; i++)
        buf[i] = (char)(i * 13 + 1);
    snprintf(path, sizeof path, "%s/weft_bench_overlap.dat", dir);
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    for (long o = 0; o < bytes; o += CHUNK)
        OK(MPI_File_write_at(fh, o, buf + o, (int)(bytes - o < CHUNK ? bytes - o : CHUNK), MPI_BYTE,
                             MPI_STATUS_IGNORE));
    {
        double t0 = now();
        compute(10000000);
        iters_per_ms = (long)(10000000 / ((now() - t0) * 1000));
    }
    for (int r = -1; r < reps; r++) {
        MPI_Request req;
        double t0 = now(), tio, tc, tall;
        for (long o = 0; o < bytes; o += 1L << 30) /* one call per GiB (int counts) */
            OK(MPI_File_read_at(fh, o, back + o, (int)(bytes - o < (1L << 30) ? bytes - o : (1L << 30)),
                                MPI_BYTE, MPI_STATUS_IGNORE));
        tio = now() - t0;
        t0 = now();
        compute(iters_per_ms * ms);
        tc = now() - t0;
        memset(back, 0, (size_t)bytes);
        t0 = now();
        OK(MPI_File_iread_at(fh, 0, back, (int)bytes, MPI_BYTE, &req));
        compute(iters_per_ms * ms);
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        tall = now() - t0;
        if (memcmp(buf, back, bytes) != 0) {
            fprintf(stderr, "nonblocking read differs\n");
            return 2;
        }
        if (r >= 0)
            printf("io %.6f\ncompute %.6f\noverlap %.6f\n", tio, tc, tall);
    }
    OK(MPI_File_close(&fh));
    unlink(path);
    free(buf);
    free(back);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 1;
    MPI_Init(&argc, &argv);
    if (argc >= 5 && strcmp(argv[1], "coll") == 0)
        rc = coll(argv[2], atol(argv[3]), atoi(argv[4]), argc >= 6 ? argv[5] : NULL);
    else if (argc >= 5 && strcmp(argv[1], "indep") == 0)
        rc = indep(argv[2], atol(argv[3]), atoi(argv[4]));
    else if (argc >= 6 && strcmp(argv[1], "overlap") == 0)
        rc = overlap(argv[2], atol(argv[3]), atoi(argv[4]), atoi(argv[5]));
    else
        fprintf(stderr, "usage: io coll|indep DIR MIB REPS | io overlap DIR MIB MS REPS\n");
    fflush(stdout);
    MPI_Finalize();
    return rc;
}
