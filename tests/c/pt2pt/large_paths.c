/* Which path large messages on a node take (WEFT_SHM_LARGE), and that every path delivers the
 * right bytes. argv[1] names the mode the manifest line sets: `auto` (the default), `pipeline`
 * or `cma`. The performance variable weft_single_copy_recvs counts the messages a rank read
 * with one copy from the sender's memory:
 *   - both ranks exchanging windows of large messages at once (bench/pt2pt.c's bibw): under
 *     auto every receive finds the rank's own large sends in flight and reads with one copy
 *     (cma: the same; pipeline: none);
 *   - one direction only (bw, latency): under auto the receiver has no large send of its own
 *     and the pipeline streams the data (cma: one copy; pipeline: none).
 * Where the kernel refuses process_vm_readv between the ranks (probed here), nothing reads
 * with one copy. Sizes: just above a cell's payload (16 KiB), 64 KiB, 256 KiB and an odd
 * 1 MiB + 3; every byte of every message is checked. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "wtest.h"

#define W 8

static MPI_T_pvar_session s;
static MPI_T_pvar_handle h;
static int rank, peer;

static unsigned long long single_copies(void)
{
    unsigned long long v = 999;
    EXPECT_OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

static unsigned char byte(int from, int k, size_t i)
{
    return (unsigned char)(from * 131 + k * 17 + i * 7 + (i >> 12));
}

static void fill(unsigned char *b, int from, int k, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = byte(from, k, i);
}

static void check(const unsigned char *b, int from, int k, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != byte(from, k, i)) {
            FAIL("%s: %zu bytes, message %d: byte %zu is %d, not %d", what, n, k, i, b[i],
                 byte(from, k, i));
            return;
        }
}

/* W messages of n bytes each way (`both`) or from rank 0 to rank 1; returns this rank's
 * single-copy receives during it. */
static unsigned long long window(unsigned char **sb, unsigned char **rb, size_t n, int both)
{
    MPI_Request req[2 * W];
    int k = 0, sends = both || rank == 0, recvs = both || rank == 1;
    for (int i = 0; i < W; i++) {
        fill(sb[i], rank, i, n);
        memset(rb[i], 0, n);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned long long before = single_copies();
    if (recvs)
        for (int i = 0; i < W; i++)
            EXPECT_OK(MPI_Irecv(rb[i], (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD, &req[k++]));
    if (sends)
        for (int i = 0; i < W; i++)
            EXPECT_OK(MPI_Isend(sb[i], (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD, &req[k++]));
    EXPECT_OK(MPI_Waitall(k, req, MPI_STATUSES_IGNORE));
    unsigned long long got = single_copies() - before;
    if (recvs)
        for (int i = 0; i < W; i++)
            check(rb[i], peer, i, n, both ? "both ways" : "one way");
    return got;
}

int main(int argc, char **argv)
{
    int provided, i = -1, count;
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    rank = wtest_world_rank();
    peer = 1 - rank;
    const char *mode = argc > 1 ? argv[1] : "auto";
    int cma = wtest_cma_allowed();
    int both_way = cma && strcmp(mode, "pipeline") != 0; /* single copy both ways */
    int one_way = cma && strcmp(mode, "cma") == 0;       /* single copy one way */
    EXPECT_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    EXPECT_OK(MPI_T_pvar_session_create(&s));
    EXPECT_OK(MPI_T_pvar_get_index("weft_single_copy_recvs", MPI_T_PVAR_CLASS_COUNTER, &i));
    EXPECT_OK(MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count));
    EXPECT_OK(MPI_T_pvar_start(s, h));

    size_t sizes[] = {16384, 65536, 262144, (1u << 20) + 3};
    unsigned char *sb[W], *rb[W];
    for (int k = 0; k < W; k++) {
        sb[k] = malloc(sizes[3]);
        rb[k] = malloc(sizes[3]);
    }
    for (unsigned z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        size_t n = sizes[z];
        unsigned long long got = window(sb, rb, n, 1);
        if (got != (both_way ? W : 0))
            FAIL("%s, %zu bytes both ways: %llu of %d receives with one copy, expected %d", mode,
                 n, got, W, both_way ? W : 0);
        got = window(sb, rb, n, 0);
        if (rank == 1 && got != (one_way ? W : 0))
            FAIL("%s, %zu bytes one way: %llu of %d receives with one copy, expected %d", mode,
                 n, got, W, one_way ? W : 0);
        if (rank == 0 && got != 0)
            FAIL("%s, %zu bytes one way: the sender received %llu with one copy", mode, n, got);
    }
    for (int k = 0; k < W; k++) {
        free(sb[k]);
        free(rb[k]);
    }
    EXPECT_OK(MPI_T_pvar_handle_free(s, &h));
    EXPECT_OK(MPI_T_pvar_session_free(&s));
    EXPECT_OK(MPI_T_finalize());
    MPI_Finalize();
    return wtest_finish();
}
