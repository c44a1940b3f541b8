/* Arrivals on the UCX path (small messages between logical nodes):
 * rank 0 receives from every other rank (with WEFT_NODES=2 on 4 ranks: rank 1 through shared
 * memory, ranks 2 and 3 through UCX).
 *  1. A flood of hundreds of messages per sender, over many tags, with sizes around
 *     the eager limit (the cell's payload: WEFT_SHM_CELL_SIZE), sent before any receive is
 *     posted and received tag by tag, highest first: every (source, tag) keeps its order.
 *  2. Receives posted before their messages (specific sources, then MPI_ANY_SOURCE across
 *     transports): contents and per-sender order.
 *  3. A cancelled posted receive takes nothing: the message sent after it is received whole.
 *  4. Probe, Iprobe and Mprobe/Mrecv of messages that came through UCX. */
#include "wtest.h"
#include <stdlib.h>
#include <string.h>

#define FLOOD 240
#define TAGS 7
#define POSTED 50

static int cell;

/* Ints in message `i` of a flood: 0..2 ints, or around the eager limit. */
static int flood_len(int i)
{
    int around[6] = {cell - 512, cell - 128, cell - 64, cell, cell + 64, 2 * cell};
    if (i % 4 != 3)
        return i % 3;
    int bytes = around[(i / 4) % 6];
    return bytes / 4 > 1 ? bytes / 4 : 1;
}

static void fill(int *buf, int n, int src, int i)
{
    for (int k = 0; k < n; k++)
        buf[k] = src * 1000000 + i * 1000 + k;
}

static void check(const int *buf, int n, int src, int i, const char *what)
{
    for (int k = 0; k < n; k++)
        if (buf[k] != src * 1000000 + i * 1000 + k) {
            FAIL("%s from %d message %d: word %d is %d", what, src, i, k, buf[k]);
            return;
        }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    wtest_world_rank();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cell = wtest_env_int("WEFT_SHM_CELL_SIZE", 16384);
    int maxn = cell + 16;
    int *buf = malloc((size_t)maxn * sizeof(int));
    MPI_Status st;

    /* 1. The flood: tag i % TAGS, sent before rank 0 posts anything. */
    if (rank == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int src = 1; src < size; src++)
            for (int tag = TAGS - 1; tag >= 0; tag--)
                for (int i = tag; i < FLOOD; i += TAGS) {
                    int n = flood_len(i), count;
                    EXPECT_OK(MPI_Recv(buf, maxn, MPI_INT, src, tag, MPI_COMM_WORLD, &st));
                    MPI_Get_count(&st, MPI_INT, &count);
                    CHECK(count == n, "flood from %d tag %d: %d ints where message %d has %d",
                          src, tag, count, i, n);
                    check(buf, count < n ? count : n, src, i, "flood");
                }
    } else {
        int **bufs = malloc(FLOOD * sizeof(int *));
        MPI_Request *reqs = malloc(FLOOD * sizeof(MPI_Request));
        for (int i = 0; i < FLOOD; i++) {
            int n = flood_len(i);
            bufs[i] = malloc((size_t)(n + 1) * sizeof(int));
            fill(bufs[i], n, rank, i);
            EXPECT_OK(MPI_Isend(bufs[i], n, MPI_INT, 0, i % TAGS, MPI_COMM_WORLD, &reqs[i]));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        EXPECT_OK(MPI_Waitall(FLOOD, reqs, MPI_STATUSES_IGNORE));
        for (int i = 0; i < FLOOD; i++)
            free(bufs[i]);
        free(bufs);
        free(reqs);
    }

    /* 2. Posted first: from each source (any tag), then MPI_ANY_SOURCE. */
    int total = (size - 1) * POSTED;
    int *posted = malloc((size_t)total * 4 * sizeof(int));
    MPI_Request *reqs = malloc((size_t)total * sizeof(MPI_Request));
    MPI_Status *sts = malloc((size_t)total * sizeof(MPI_Status));
    for (int round = 0; round < 2; round++) {
        if (rank == 0) {
            for (int j = 0; j < total; j++) {
                int src = round == 0 ? 1 + j / POSTED : MPI_ANY_SOURCE;
                EXPECT_OK(MPI_Irecv(&posted[4 * j], 4, MPI_INT, src, MPI_ANY_TAG, MPI_COMM_WORLD,
                                    &reqs[j]));
            }
            MPI_Barrier(MPI_COMM_WORLD);
            EXPECT_OK(MPI_Waitall(total, reqs, sts));
            int next[64] = {0};
            for (int j = 0; j < total; j++) {
                int src = sts[j].MPI_SOURCE, i = sts[j].MPI_TAG, count;
                CHECK(src > 0 && src < size && src < 64, "posted: source %d", src);
                if (round == 0)
                    CHECK_INT(src, 1 + j / POSTED);
                CHECK(i == next[src], "posted round %d: from %d message %d came when %d was due",
                      round, src, i, next[src]);
                next[src] = i + 1;
                MPI_Get_count(&sts[j], MPI_INT, &count);
                CHECK_INT(count, 1 + i % 4);
                check(&posted[4 * j], count, src, i, "posted");
            }
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            for (int i = 0; i < POSTED; i++) {
                int v[4];
                fill(v, 1 + i % 4, rank, i);
                EXPECT_OK(MPI_Send(v, 1 + i % 4, MPI_INT, 0, i, MPI_COMM_WORLD));
            }
        }
    }

    /* 3. A cancelled posted receive (from the last rank: through UCX) takes nothing. */
    int far = size - 1;
    if (rank == 0) {
        MPI_Request r[2];
        int flag;
        EXPECT_OK(MPI_Irecv(buf, maxn, MPI_INT, far, 77, MPI_COMM_WORLD, &r[0]));
        EXPECT_OK(MPI_Irecv(buf, maxn, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &r[1]));
        for (int k = 0; k < 2; k++) {
            EXPECT_OK(MPI_Cancel(&r[k]));
            EXPECT_OK(MPI_Wait(&r[k], &st));
            MPI_Test_cancelled(&st, &flag);
            CHECK(flag, "posted receive %d cancelled", k);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        EXPECT_OK(MPI_Recv(buf, maxn, MPI_INT, far, 77, MPI_COMM_WORLD, &st));
        int count;
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK_INT(count, 3);
        check(buf, 3, far, 77, "after cancel");
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == far) {
            fill(buf, 3, rank, 77);
            EXPECT_OK(MPI_Send(buf, 3, MPI_INT, 0, 77, MPI_COMM_WORLD));
        }
    }

    /* 4. Probes of messages that came through UCX: one small, one past the eager limit. */
    if (rank == 0) {
        int flag = 0, count;
        EXPECT_OK(MPI_Probe(far, 88, MPI_COMM_WORLD, &st));
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK_INT(count, 5);
        while (!flag)
            EXPECT_OK(MPI_Iprobe(MPI_ANY_SOURCE, 89, MPI_COMM_WORLD, &flag, &st));
        CHECK_INT(st.MPI_SOURCE, far);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK_INT(count, cell);
        MPI_Message msg;
        EXPECT_OK(MPI_Mprobe(far, 89, MPI_COMM_WORLD, &msg, &st));
        EXPECT_OK(MPI_Mrecv(buf, maxn, MPI_INT, &msg, &st));
        check(buf, cell, far, 89, "mrecv");
        EXPECT_OK(MPI_Recv(buf, maxn, MPI_INT, far, 88, MPI_COMM_WORLD, &st));
        check(buf, 5, far, 88, "after probe");
    } else if (rank == far) {
        int *big = malloc((size_t)cell * sizeof(int));
        fill(buf, 5, rank, 88);
        EXPECT_OK(MPI_Send(buf, 5, MPI_INT, 0, 88, MPI_COMM_WORLD));
        fill(big, cell, rank, 89);
        EXPECT_OK(MPI_Send(big, cell, MPI_INT, 0, 89, MPI_COMM_WORLD));
        free(big);
    }

    free(posted);
    free(reqs);
    free(sts);
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
