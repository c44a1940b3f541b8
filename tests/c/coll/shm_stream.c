/* Broadcasts above WEFT_COLL_SHM_MAX (default 4 KiB) and up to WEFT_COLL_SHM_STREAM_MAX
 * (default 256 KiB) stream through the communicator's shared-memory area in region-sized
 * parts (crates/weft-core/src/coll/shm_stream.rs), reductions of those sizes go by
 * point-to-point: the algorithm counters bound to the communicator show it (WTEST_STREAM=1, the default; 0 with
 * WEFT_COLL_SHM_STREAM_MAX=0 expects point-to-point instead). Values are checked for sizes
 * just above a part, odd sizes, the largest streamed size and one element more (which goes
 * by point-to-point), every root, in place, and a non-contiguous datatype. A count that
 * differs between the ranks still fails with MPI_ERR_TRUNCATE, and the communicator stays
 * usable afterwards. */
#include <stdlib.h>
#include "wtest.h"
#include "coll_counters.h"

static int rank, size, stream;

static int v(int r, int i)
{
    return r * 7919 + i;
}

/* Every root: a bcast of `n` ints, then of `n` ints in every other int of a vector. */
static void bcasts(MPI_Comm c, int n, int *buf, MPI_Datatype every_other)
{
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < n; i++)
            buf[i] = rank == root ? v(root, i) : -1;
        EXPECT_OK(MPI_Bcast(buf, n, MPI_INT, root, c));
        for (int i = 0; i < n; i++)
            if (buf[i] != v(root, i)) {
                FAIL("bcast n=%d root %d: [%d] = %d, expected %d", n, root, i, buf[i], v(root, i));
                break;
            }
    }
    for (int i = 0; i < 2 * n; i++)
        buf[i] = rank == 0 ? v(0, i) : -1;
    EXPECT_OK(MPI_Bcast(buf, n, every_other, 0, c));
    for (int i = 0; i < 2 * n; i++) {
        int want = i % 2 == 0 || rank == 0 ? v(0, i) : -1;
        if (buf[i] != want) {
            FAIL("vector bcast n=%d: [%d] = %d, expected %d", n, i, buf[i], want);
            break;
        }
    }
}

static void check_sum(const int *out, int n, const char *what, int root)
{
    for (int i = 0; i < n; i++) {
        long long want = 0;
        for (int q = 0; q < size; q++)
            want += v(q, i);
        if (out[i] != (int)want) {
            FAIL("%s n=%d root %d: [%d] = %d, expected %lld", what, n, root, i, out[i], want);
            return;
        }
    }
}

/* Reduce to every root (in place at the root on odd roots) and allreduce (in place and
 * not) of `n` ints, summed. */
static void reductions(MPI_Comm c, int n, int *in, int *out)
{
    for (int root = 0; root < size; root++) {
        int in_place = root % 2 == 1 && rank == root;
        for (int i = 0; i < n; i++)
            in[i] = v(rank, i), out[i] = in_place ? v(rank, i) : -1;
        EXPECT_OK(MPI_Reduce(in_place ? MPI_IN_PLACE : in, out, n, MPI_INT, MPI_SUM, root, c));
        if (rank == root)
            check_sum(out, n, in_place ? "reduce in place" : "reduce", root);
    }
    for (int i = 0; i < n; i++)
        in[i] = v(rank, i), out[i] = -1;
    EXPECT_OK(MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, c));
    check_sum(out, n, "allreduce", -1);
    EXPECT_OK(MPI_Allreduce(MPI_IN_PLACE, in, n, MPI_INT, MPI_SUM, c));
    check_sum(in, n, "allreduce in place", -1);
}

/* A bcast whose last rank passes `less` ints fewer than the root, and the same for reduce
 * and allreduce: those that compare fail with MPI_ERR_TRUNCATE; nobody hangs. */
static void mismatches(MPI_Comm c, int n, int less, int *in, int *out)
{
    int last = size - 1, mine = rank == last ? n - less : n;
    for (int i = 0; i < n; i++)
        in[i] = rank == 0 ? v(0, i) : -1;
    in[mine] = -7;
    int rc = MPI_Bcast(in, mine, MPI_INT, 0, c);
    if (rank == last) {
        EXPECT_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Bcast", "differs between the ranks");
        for (int i = 0; i < mine; i++)
            if (in[i] != v(0, i)) {
                FAIL("mismatched bcast: [%d] = %d", i, in[i]);
                break;
            }
        CHECK(in[mine] == -7, "mismatched bcast wrote past the buffer");
    } else {
        EXPECT_OK(rc);
    }
    rc = MPI_Allreduce(in, out, mine, MPI_INT, MPI_SUM, c);
    EXPECT_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Allreduce", "differs between the ranks");
    rc = MPI_Reduce(in, out, mine, MPI_INT, MPI_SUM, 0, c);
    if (rank == 0)
        EXPECT_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Reduce", "differs between the ranks");
    int x = rank + 1, sum = 0;
    EXPECT_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK_INT(sum, size * (size + 1) / 2);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *e = getenv("WTEST_STREAM");
    stream = (!e || atoi(e) != 0) && size > 1;
    EXPECT_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    EXPECT_OK(MPI_T_pvar_session_create(&s));
    MPI_Comm c;
    EXPECT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_T_pvar_handle b_shm = counter("weft_coll_bcast_shm", &c),
                      r_shm = counter("weft_coll_reduce_shm", &c),
                      a_shm = counter("weft_coll_allreduce_shm", &c);
    const int max_ints = 256 * 1024 / 4;
    int *in = malloc(2 * (max_ints + 1) * sizeof(int)), *out = malloc((max_ints + 1) * sizeof(int));
    MPI_Datatype every_other;
    EXPECT_OK(MPI_Type_vector(1, 1, 2, MPI_INT, &every_other));
    EXPECT_OK(MPI_Type_create_resized(every_other, 0, 2 * sizeof(int), &every_other));
    EXPECT_OK(MPI_Type_commit(&every_other));

    /* Above one 4 KiB part (by one int), 16 KiB, odd and above 64 KiB, the largest. */
    int sizes[] = {1025, 4096, 16384 + 3, max_ints};
    unsigned long long calls = 0;
    for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        bcasts(c, sizes[k], in, every_other);
        reductions(c, sizes[k], in, out);
        calls++;
        CHECK_INT(value(b_shm), stream ? calls * (size + 1) : 0);
        /* Reductions do not stream (a reduce's leaves run ahead, c/coll/runahead; a streamed
         * allreduce was slower than point-to-point). */
        CHECK_INT(value(r_shm), 0);
        CHECK_INT(value(a_shm), 0);
    }
    /* One int more than streams: point-to-point, same values, counters unchanged. */
    bcasts(c, max_ints + 1, in, every_other);
    reductions(c, max_ints + 1, in, out);
    CHECK_INT(value(b_shm), stream ? calls * (size + 1) : 0);
    CHECK_INT(value(r_shm), 0);

    if (size > 1) {
        mismatches(c, 1025, 25, in, out); /* the last rank's fits in one region */
        mismatches(c, 4096, 1, in, out);
        mismatches(c, 16384, 3000, in, out);
    }
    /* Still in step: a streamed bcast gives the root's data. */
    bcasts(c, 4096, in, every_other);

    EXPECT_OK(MPI_Type_free(&every_other));
    free(in), free(out);
    EXPECT_OK(MPI_T_pvar_session_free(&s));
    EXPECT_OK(MPI_T_finalize());
    EXPECT_OK(MPI_Comm_free(&c));
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
