/* The event weft_unexpected_arrival fires once for each message that arrives before its
 * receive is posted, with its context, source, tag and size; the callback runs at
 * MPI_T_CB_REQUIRE_NONE with the user data it was registered with, and may read the
 * instance; messages whose receive was waiting fire nothing; after the registration is freed
 * (its free callback runs) nothing fires. Rank 1 also times events against the source. */
#include "wtest.h"

enum { K = 5 };

static int fired = 0, freed = 0;
static long long tags[16], sources[16], sizes[16];
static MPI_Count stamps[16];

static void on_event(MPI_T_event_instance ev, MPI_T_event_registration reg,
                     MPI_T_cb_safety safety, void *user)
{
    (void)reg;
    CHECK_INT(safety, MPI_T_CB_REQUIRE_NONE);
    CHECK(user == (void *)&fired, "user data");
    long long f[4];
    EXPECT_OK(MPI_T_event_copy(ev, f));
    int64_t tag = -1;
    EXPECT_OK(MPI_T_event_read(ev, 2, &tag));
    CHECK_INT(tag, f[2]);
    int src = -1;
    EXPECT_OK(MPI_T_event_get_source(ev, &src));
    CHECK_INT(src, 0);
    if (fired < 16) {
        sources[fired] = f[1], tags[fired] = f[2], sizes[fired] = f[3];
        EXPECT_OK(MPI_T_event_get_timestamp(ev, &stamps[fired]));
    }
    fired++;
}

static void on_free(MPI_T_event_registration reg, MPI_T_cb_safety safety, void *user)
{
    (void)reg, (void)safety;
    CHECK(user == (void *)&freed, "free user data");
    freed++;
}

int main(int argc, char **argv)
{
    int provided, rank, idx;
    MPI_Init(&argc, &argv);
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* The first collective's set-up messages may arrive unexpected: before registering. */
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    EXPECT_OK(MPI_T_event_get_index("weft_unexpected_arrival", &idx));
    MPI_T_event_registration reg;
    EXPECT_OK(MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &reg));
    EXPECT_OK(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, &fired,
                                            on_event));
    MPI_Count before = 0;
    EXPECT_OK(MPI_T_source_get_timestamp(0, &before));
    long long buf[64] = {0};

    if (rank == 0) {
        /* K unexpected messages (tag 7, 8 * (i + 1) bytes), then the one rank 1 waits for. */
        for (int i = 0; i < K; i++)
            MPI_Send(buf, i + 1, MPI_LONG_LONG, 1, 7, MPI_COMM_WORLD);
        MPI_Send(buf, 1, MPI_LONG_LONG, 1, 9, MPI_COMM_WORLD);
    } else {
        MPI_Recv(buf, 1, MPI_LONG_LONG, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* Callbacks run from completion calls after the events were recorded. */
        double t0 = MPI_Wtime();
        while (fired < K && MPI_Wtime() - t0 < 10)
            MPIX_Stream_progress(MPIX_STREAM_NULL);
        CHECK_INT(fired, K);
        for (int i = 0; i < K && i < fired; i++) {
            CHECK_INT(tags[i], 7);
            CHECK_INT(sources[i], 0);
            CHECK_INT(sizes[i], 8 * (i + 1));
            CHECK(stamps[i] >= before, "event %d stamped after registration", i);
        }
        for (int i = 0; i < K; i++)
            MPI_Recv(buf, i + 1, MPI_LONG_LONG, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* Posted first: no event. */
    if (rank == 1) {
        MPI_Request r;
        MPI_Irecv(buf, 1, MPI_LONG_LONG, 0, 10, MPI_COMM_WORLD, &r);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Send(buf, 1, MPI_LONG_LONG, 1, 10, MPI_COMM_WORLD);
    }
    CHECK_INT(fired, rank == 1 ? K : 0);

    EXPECT_OK(MPI_T_event_handle_free(reg, &freed, on_free));
    CHECK_INT(freed, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Send(buf, 1, MPI_LONG_LONG, 1, 11, MPI_COMM_WORLD);
        MPI_Send(buf, 1, MPI_LONG_LONG, 1, 12, MPI_COMM_WORLD);
    } else {
        MPI_Recv(buf, 1, MPI_LONG_LONG, 0, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(buf, 1, MPI_LONG_LONG, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    CHECK_INT(fired, rank == 1 ? K : 0);
    EXPECT_OK(MPI_T_finalize());
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
