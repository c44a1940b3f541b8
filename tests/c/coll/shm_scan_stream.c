/* MPI_Scan and MPI_Exscan above WEFT_COLL_SHM_MAX (default 4 KiB) and up to
 * WEFT_COLL_SHM_STREAM_MAX (default 256 KiB) stream through the communicator's shared-memory
 * area in region-sized parts on communicators of up to 8 ranks
 * (crates/weft-core/src/coll/shm_data.rs, `scan_parts`): the algorithm counters bound to the
 * communicator show it (WTEST_STREAM=1, the default; 0 expects recursive doubling, run with
 * WEFT_COLL_SHM_STREAM_MAX=0 or above 8 ranks). Values are checked with a non-commutative user
 * op against the rank-order product, in place and not, just above one part, odd sizes, the
 * largest streamed size and one element more (point-to-point), and with a strided receive
 * type. Counts that differ between the ranks (on each side of every threshold, rank 0 or the
 * last rank being the odd one) fail with MPI_ERR_TRUNCATE on a rank that compares them,
 * nobody hangs, and the communicator stays usable. */
#include <stdlib.h>
#include "wtest.h"
#include "mat.h"
#include "coll_counters.h"

static int rank, size;
static MPI_Op matmul_op;
static MPI_Datatype mat_type;

static mat mat_of(int r, int i)
{
    mat m = {r + 2 + i % 7, 1 + i % 3, 1, (r * 3 + i) % 5};
    return m;
}

/* Scan and exscan of `n` matrices, in place and not: four calls. */
static void scans(MPI_Comm c, int n, mat *in, mat *out)
{
    mat sentinel = {-1, -1, -1, -1};
    for (int in_place = 0; in_place < 2; in_place++)
        for (int ex = 0; ex < 2; ex++) {
            for (int i = 0; i < n; i++) {
                in[i] = mat_of(rank, i);
                out[i] = in_place ? in[i] : sentinel;
            }
            out[n] = sentinel;
            const void *send = in_place ? MPI_IN_PLACE : in;
            if (ex)
                EXPECT_OK(MPI_Exscan(send, out, n, mat_type, matmul_op, c));
            else
                EXPECT_OK(MPI_Scan(send, out, n, mat_type, matmul_op, c));
            int upto = ex ? rank - 1 : rank;
            for (int i = 0; i < n && upto >= 0; i++) {
                mat want = mat_of(0, i);
                for (int q = 1; q <= upto; q++)
                    want = mul(want, mat_of(q, i));
                if (!same(out[i], want)) {
                    FAIL("%s n=%d in_place=%d: element %d wrong", ex ? "exscan" : "scan", n,
                         in_place, i);
                    break;
                }
            }
            if (ex && rank == 0)
                for (int i = 0; i < n; i++)
                    if (!same(out[i], in_place ? mat_of(0, i) : sentinel)) {
                        FAIL("exscan n=%d: rank 0's buffer was written at %d", n, i);
                        break;
                    }
            CHECK(same(out[n], sentinel), "%s n=%d wrote past the buffer", ex ? "exscan" : "scan",
                  n);
        }
}

/* An exscan of `n` ints summed, every other int of `in` into every other int of `out` (a
 * strided type: the send side is packed, the receive side staged). */
static void strided(MPI_Comm c, int n, int *in, int *out)
{
    MPI_Datatype every_other;
    EXPECT_OK(MPI_Type_vector(n, 1, 2, MPI_INT, &every_other));
    EXPECT_OK(MPI_Type_commit(&every_other));
    for (int i = 0; i < 2 * n; i++) {
        in[i] = i % 2 == 0 ? rank * 3 + i / 2 : -5;
        out[i] = -7;
    }
    EXPECT_OK(MPI_Exscan(in, out, 1, every_other, MPI_SUM, c));
    for (int i = 0; i < 2 * n; i++) {
        int want = -7;
        if (i % 2 == 0 && rank > 0) {
            want = 0;
            for (int q = 0; q < rank; q++)
                want += q * 3 + i / 2;
        }
        if (out[i] != want) {
            FAIL("strided exscan n=%d: [%d] = %d, expected %d", n, i, out[i], want);
            break;
        }
    }
    EXPECT_OK(MPI_Type_free(&every_other));
}

/* Rank `odd` passes `other` matrices where the others pass `n`: any error is
 * MPI_ERR_TRUNCATE, some rank reports it, and a scan afterwards is right. */
static void mismatched(MPI_Comm c, int odd, int n, int other, mat *in, mat *out)
{
    int mine = rank == odd ? other : n;
    for (int ex = 0; ex < 2; ex++) {
        for (int i = 0; i < mine; i++)
            in[i] = mat_of(rank, i);
        int rc = ex ? MPI_Exscan(in, out, mine, mat_type, matmul_op, c)
                    : MPI_Scan(in, out, mine, mat_type, matmul_op, c);
        if (rc != MPI_SUCCESS)
            EXPECT_ERR(rc, MPI_ERR_TRUNCATE, ex ? "MPI_Exscan" : "MPI_Scan",
                       "differs between the ranks");
        int failed = rc != MPI_SUCCESS, any = 0;
        EXPECT_OK(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, c));
        CHECK(any, "%s %d/%d (rank %d): no rank reported the mismatch", ex ? "exscan" : "scan",
              n, other, odd);
        int x = rank + 1, pre = 0;
        EXPECT_OK(MPI_Scan(&x, &pre, 1, MPI_INT, MPI_SUM, c));
        CHECK_INT(pre, (rank + 1) * (rank + 2) / 2);
    }
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *e = getenv("WTEST_STREAM");
    int stream = (!e || atoi(e) != 0) && size > 1;
    EXPECT_OK(MPI_Type_contiguous(4, MPI_LONG_LONG, &mat_type));
    EXPECT_OK(MPI_Type_commit(&mat_type));
    EXPECT_OK(MPI_Op_create(matmul, 0, &matmul_op));
    EXPECT_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    EXPECT_OK(MPI_T_pvar_session_create(&s));
    MPI_Comm c;
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_T_pvar_handle shm = counter("weft_coll_scan_shm", &c),
                      rd = counter("weft_coll_scan_recursive_doubling", &c);
    const int max_mats = 256 * 1024 / (int)sizeof(mat);
    mat *in = malloc((max_mats + 2) * sizeof(mat)), *out = malloc((max_mats + 2) * sizeof(mat));

    /* One matrix above a 4 KiB part, two parts and an odd rest, 64 KiB, the largest. */
    int sizes[] = {129, 2 * 128 + 37, 2048, max_mats};
    unsigned long long calls = 0;
    for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        scans(c, sizes[k], in, out);
        calls += 4;
        CHECK_INT(value(shm), stream ? calls : 0);
        CHECK_INT(value(rd), stream || size == 1 ? 0 : calls);
    }
    /* One matrix more than streams: recursive doubling, same values. */
    scans(c, max_mats + 1, in, out);
    CHECK_INT(value(shm), stream ? calls : 0);
    CHECK_INT(value(rd), size == 1 ? 0 : stream ? 4 : calls + 4);
    strided(c, 3001, (int *)in, (int *)out);

    if (size > 1) {
        int last = size - 1;
        mismatched(c, last, 515, 400, in, out); /* both stream */
        mismatched(c, last, 515, 100, in, out); /* the last rank's fits one region */
        mismatched(c, 0, 515, 100, in, out);    /* rank 0's (which picks the path) fits */
        mismatched(c, 0, 100, 515, in, out);
        mismatched(c, last, max_mats, max_mats + 1, in, out); /* the last rank's is too large */
        mismatched(c, 0, max_mats, max_mats + 1, in, out);    /* rank 0's is too large */
    }
    /* Still in step: a streamed scan gives the right values. */
    scans(c, 300, in, out);

    free(in), free(out);
    EXPECT_OK(MPI_Op_free(&matmul_op));
    EXPECT_OK(MPI_Type_free(&mat_type));
    EXPECT_OK(MPI_T_pvar_session_free(&s));
    EXPECT_OK(MPI_T_finalize());
    EXPECT_OK(MPI_Comm_free(&c));
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
