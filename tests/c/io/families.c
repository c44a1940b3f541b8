/* Every data-access family (explicit offsets, individual pointer; blocking, nonblocking,
 * collective, split collective; int and _c forms) x every view kind (contiguous, strided,
 * subarray, darray): each rank writes its part of a global array of ints whose element i
 * holds value(i), reads it back with the matching family, and rank 0 checks the whole file
 * with plain POSIX reads. Expected positions are computed here from the view's definition,
 * not asked from the library. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wtest.h"

#define R 6 /* rows of each rank's block */
#define C 8 /* columns of each rank's block (a multiple of 2 for the darray's cyclic(2)) */
#define K (R * C)

enum { CONTIG, STRIDED, SUBARRAY, DARRAY, NVIEWS };
static const char *view_names[] = {"contiguous", "strided", "subarray", "darray"};

enum { AT, AT_ALL, PTR, PTR_ALL, IAT, IAT_ALL, IPTR, IPTR_ALL, SPLIT_AT, SPLIT, AT_C, ALL_C,
       IAT_C, IALL_C, SPLIT_AT_C, SPLIT_C, NFAM };
static const char *fam_names[] = {"at", "at_all", "ptr", "all", "iat", "iat_all", "iptr",
                                  "iall", "split_at", "split", "at_c", "all_c", "iat_c",
                                  "iall_c", "split_at_c", "split_c"};

static int rank, nranks;

static int value(long i) { return (int)(i * 7 + 3); }

/* Global int index of the k-th int of this rank's view. */
static long index_of(int view, int k)
{
    long gc = (long)C * nranks;
    switch (view) {
    case CONTIG:
        return (long)rank * K + k;
    case STRIDED: { /* blocks of 4 ints dealt round-robin */
        int b = k / 4, w = k % 4;
        return ((long)b * nranks + rank) * 4 + w;
    }
    case SUBARRAY: /* R x C block at column rank*C of an R x C*n array */
        return (k / C) * gc + (long)rank * C + k % C;
    default: { /* rows whole, columns cyclic(2) over n ranks */
        int row = k / C, lc = k % C;
        long gcol = ((long)(lc / 2) * nranks + rank) * 2 + lc % 2;
        return row * gc + gcol;
    }
    }
}

static MPI_Datatype make_view(int view)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, tmp;
    int gsizes[2] = {R, C * nranks}, subsizes[2] = {R, C}, starts[2] = {0, rank * C};
    int distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, psizes[2] = {1, nranks};
    switch (view) {
    case CONTIG:
        EXPECT_OK(MPI_Type_contiguous(K, MPI_INT, &t));
        break;
    case STRIDED:
        EXPECT_OK(MPI_Type_contiguous(4, MPI_INT, &tmp));
        EXPECT_OK(MPI_Type_create_resized(tmp, 0, (MPI_Aint)4 * nranks * sizeof(int), &t));
        MPI_Type_free(&tmp);
        break;
    case SUBARRAY:
        EXPECT_OK(MPI_Type_create_subarray(2, gsizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t));
        break;
    default:
        EXPECT_OK(MPI_Type_create_darray(nranks, rank, 2, gsizes, distribs, dargs, psizes,
                                         MPI_ORDER_C, MPI_INT, &t));
    }
    EXPECT_OK(MPI_Type_commit(&t));
    return t;
}

static MPI_Offset view_disp(int view)
{
    if (view == CONTIG)
        return (MPI_Offset)rank * K * sizeof(int);
    if (view == STRIDED)
        return (MPI_Offset)rank * 4 * sizeof(int);
    return 0;
}

/* One access of K ints from/to buf with family f. */
static void access_ints(MPI_File fh, int f, int write, int *buf)
{
    MPI_Status st;
    MPI_Request req;
    MPI_Count cnt = K;
    int count = -1;
    memset(&st, 0, sizeof st);
    if (write) {
        switch (f) {
        case AT: EXPECT_OK(MPI_File_write_at(fh, 0, buf, K, MPI_INT, &st)); break;
        case AT_ALL: EXPECT_OK(MPI_File_write_at_all(fh, 0, buf, K, MPI_INT, &st)); break;
        case PTR: EXPECT_OK(MPI_File_write(fh, buf, K, MPI_INT, &st)); break;
        case PTR_ALL: EXPECT_OK(MPI_File_write_all(fh, buf, K, MPI_INT, &st)); break;
        case IAT: EXPECT_OK(MPI_File_iwrite_at(fh, 0, buf, K, MPI_INT, &req)); break;
        case IAT_ALL: EXPECT_OK(MPI_File_iwrite_at_all(fh, 0, buf, K, MPI_INT, &req)); break;
        case IPTR: EXPECT_OK(MPI_File_iwrite(fh, buf, K, MPI_INT, &req)); break;
        case IPTR_ALL: EXPECT_OK(MPI_File_iwrite_all(fh, buf, K, MPI_INT, &req)); break;
        case SPLIT_AT:
            EXPECT_OK(MPI_File_write_at_all_begin(fh, 0, buf, K, MPI_INT));
            EXPECT_OK(MPI_File_write_at_all_end(fh, buf, &st));
            break;
        case SPLIT:
            EXPECT_OK(MPI_File_write_all_begin(fh, buf, K, MPI_INT));
            EXPECT_OK(MPI_File_write_all_end(fh, buf, &st));
            break;
        case AT_C: EXPECT_OK(MPI_File_write_at_c(fh, 0, buf, cnt, MPI_INT, &st)); break;
        case ALL_C: EXPECT_OK(MPI_File_write_all_c(fh, buf, cnt, MPI_INT, &st)); break;
        case IAT_C: EXPECT_OK(MPI_File_iwrite_at_c(fh, 0, buf, cnt, MPI_INT, &req)); break;
        case IALL_C: EXPECT_OK(MPI_File_iwrite_all_c(fh, buf, cnt, MPI_INT, &req)); break;
        case SPLIT_AT_C:
            EXPECT_OK(MPI_File_write_at_all_begin_c(fh, 0, buf, cnt, MPI_INT));
            EXPECT_OK(MPI_File_write_at_all_end(fh, buf, &st));
            break;
        default:
            EXPECT_OK(MPI_File_write_all_begin_c(fh, buf, cnt, MPI_INT));
            EXPECT_OK(MPI_File_write_all_end(fh, buf, &st));
        }
    } else {
        switch (f) {
        case AT: EXPECT_OK(MPI_File_read_at(fh, 0, buf, K, MPI_INT, &st)); break;
        case AT_ALL: EXPECT_OK(MPI_File_read_at_all(fh, 0, buf, K, MPI_INT, &st)); break;
        case PTR: EXPECT_OK(MPI_File_read(fh, buf, K, MPI_INT, &st)); break;
        case PTR_ALL: EXPECT_OK(MPI_File_read_all(fh, buf, K, MPI_INT, &st)); break;
        case IAT: EXPECT_OK(MPI_File_iread_at(fh, 0, buf, K, MPI_INT, &req)); break;
        case IAT_ALL: EXPECT_OK(MPI_File_iread_at_all(fh, 0, buf, K, MPI_INT, &req)); break;
        case IPTR: EXPECT_OK(MPI_File_iread(fh, buf, K, MPI_INT, &req)); break;
        case IPTR_ALL: EXPECT_OK(MPI_File_iread_all(fh, buf, K, MPI_INT, &req)); break;
        case SPLIT_AT:
            EXPECT_OK(MPI_File_read_at_all_begin(fh, 0, buf, K, MPI_INT));
            EXPECT_OK(MPI_File_read_at_all_end(fh, buf, &st));
            break;
        case SPLIT:
            EXPECT_OK(MPI_File_read_all_begin(fh, buf, K, MPI_INT));
            EXPECT_OK(MPI_File_read_all_end(fh, buf, &st));
            break;
        case AT_C: EXPECT_OK(MPI_File_read_at_c(fh, 0, buf, cnt, MPI_INT, &st)); break;
        case ALL_C: EXPECT_OK(MPI_File_read_all_c(fh, buf, cnt, MPI_INT, &st)); break;
        case IAT_C: EXPECT_OK(MPI_File_iread_at_c(fh, 0, buf, cnt, MPI_INT, &req)); break;
        case IALL_C: EXPECT_OK(MPI_File_iread_all_c(fh, buf, cnt, MPI_INT, &req)); break;
        case SPLIT_AT_C:
            EXPECT_OK(MPI_File_read_at_all_begin_c(fh, 0, buf, cnt, MPI_INT));
            EXPECT_OK(MPI_File_read_at_all_end(fh, buf, &st));
            break;
        default:
            EXPECT_OK(MPI_File_read_all_begin_c(fh, buf, cnt, MPI_INT));
            EXPECT_OK(MPI_File_read_all_end(fh, buf, &st));
        }
    }
    if (f == IAT || f == IAT_ALL || f == IPTR || f == IPTR_ALL || f == IAT_C || f == IALL_C)
        EXPECT_OK(MPI_Wait(&req, &st));
    EXPECT_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == K, "%s %s: count %d, expected %d", fam_names[f], write ? "write" : "read",
          count, K);
}

int main(int argc, char **argv)
{
    char path[256];
    MPI_File fh;
    int *buf = malloc(K * sizeof(int)), *all;
    long total;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    total = (long)K * nranks;
    all = malloc(total * sizeof(int));
    if (rank == 0)
        snprintf(path, sizeof path, "%s/weft_io_families.%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                 (int)getpid());
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);

    for (int v = 0; v < NVIEWS; v++) {
        MPI_Datatype ft = make_view(v);
        for (int f = 0; f < NFAM; f++) {
            EXPECT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                    MPI_INFO_NULL, &fh));
            EXPECT_OK(MPI_File_set_size(fh, 0));
            EXPECT_OK(MPI_File_set_view(fh, view_disp(v), MPI_INT, ft, "native", MPI_INFO_NULL));
            for (int k = 0; k < K; k++)
                buf[k] = value(index_of(v, k));
            access_ints(fh, f, 1, buf);
            EXPECT_OK(MPI_File_sync(fh));
            if (rank == 0) {
                int fd = open(path, O_RDONLY);
                ssize_t got = pread(fd, all, total * sizeof(int), 0);
                close(fd);
                CHECK(got == (ssize_t)(total * sizeof(int)), "%s/%s: file has %zd bytes",
                      view_names[v], fam_names[f], got);
                for (long i = 0; i < total && got > 0; i++)
                    if (all[i] != value(i)) {
                        FAIL("%s/%s: file int %ld = %d, expected %d", view_names[v], fam_names[f],
                             i, all[i], value(i));
                        break;
                    }
            }
            MPI_Barrier(MPI_COMM_WORLD);
            /* Back to the start for the individual-pointer forms. */
            EXPECT_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
            memset(buf, 0xff, K * sizeof(int));
            access_ints(fh, f, 0, buf);
            for (int k = 0; k < K; k++)
                if (buf[k] != value(index_of(v, k))) {
                    FAIL("%s/%s: read int %d = %d, expected %d", view_names[v], fam_names[f], k,
                         buf[k], value(index_of(v, k)));
                    break;
                }
            if (f == PTR || f == PTR_ALL || f == IPTR || f == IPTR_ALL) {
                MPI_Offset pos = -1;
                EXPECT_OK(MPI_File_get_position(fh, &pos));
                CHECK_INT(pos, K);
            }
            EXPECT_OK(MPI_File_close(&fh));
        }
        MPI_Type_free(&ft);
    }

    /* Noncontiguous memory: every other int of a buffer twice as long, strided view. */
    {
        MPI_Datatype mt, ft = make_view(STRIDED);
        int *wide = calloc(2 * K, sizeof(int));
        MPI_Status st;
        EXPECT_OK(MPI_Type_vector(K, 1, 2, MPI_INT, &mt));
        EXPECT_OK(MPI_Type_commit(&mt));
        for (int k = 0; k < K; k++)
            wide[2 * k] = value(index_of(STRIDED, k)), wide[2 * k + 1] = -5;
        EXPECT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                MPI_INFO_NULL, &fh));
        EXPECT_OK(MPI_File_set_view(fh, view_disp(STRIDED), MPI_INT, ft, "native", MPI_INFO_NULL));
        EXPECT_OK(MPI_File_write_all(fh, wide, 1, mt, &st));
        memset(wide, 0, 2 * K * sizeof(int));
        EXPECT_OK(MPI_File_read_at_all(fh, 0, wide, 1, mt, &st));
        for (int k = 0; k < K; k++) {
            if (wide[2 * k] != value(index_of(STRIDED, k)) || wide[2 * k + 1] != 0) {
                FAIL("strided memory: slot %d = %d/%d", k, wide[2 * k], wide[2 * k + 1]);
                break;
            }
        }
        EXPECT_OK(MPI_File_close(&fh));
        MPI_Type_free(&mt);
        MPI_Type_free(&ft);
        free(wide);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        EXPECT_OK(MPI_File_delete(path, MPI_INFO_NULL));
    free(buf);
    free(all);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
