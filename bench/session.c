/* Sessions benchmark (seed 003's measurements): how long it takes to reach a world-sized
 * communicator through MPI_Init or through the session path (MPI_Session_init +
 * MPI_Group_from_session_pset + MPI_Comm_create_from_group), then MPI_Comm_dup per call and
 * 8-byte ping-pong latency on that communicator.
 *
 * usage: session init|session   -> rank 0 prints "path_us X", "dup_us X", "latency_us X"
 *
 * The path ends when the communicator is usable on every rank: a first MPI_Barrier on it
 * closes the path on both sides (a communicator from a group may still be agreeing on its
 * context id when MPI_Comm_create_from_group returns; its first use waits for that). Ranks
 * cannot synchronize before MPI is initialized, and the launcher starts them at different
 * moments, so each rank reads CLOCK_MONOTONIC (one clock for every process on a node) at
 * entry and after the barrier; the path is latest exit minus latest entry: the time from the
 * moment the last process started until all of them had the communicator. Launch skew,
 * which has nothing to do with either path, drops out. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

#define DUPS 200
#define PINGS 10000
#define REPS 5

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int use_session = argc > 1 && !strcmp(argv[1], "session");
    MPI_Session s = MPI_SESSION_NULL;
    MPI_Comm comm;
    double entry = now_us(), exit_, latest[2], t;
    int rank, size, i;
    if (use_session) {
        MPI_Group g;
        MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &s);
        MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
        MPI_Comm_create_from_group(g, "weft.bench.session", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &comm);
        MPI_Group_free(&g);
    } else {
        MPI_Init(&argc, &argv);
        comm = MPI_COMM_WORLD;
    }
    MPI_Barrier(comm);
    exit_ = now_us();
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double mine[2] = {entry, exit_};
    MPI_Reduce(mine, latest, 2, MPI_DOUBLE, MPI_MAX, 0, comm);

    /* MPI_Comm_dup per call (max over ranks). */
    MPI_Comm dups[DUPS];
    MPI_Barrier(comm);
    t = now_us();
    for (i = 0; i < DUPS; i++)
        MPI_Comm_dup(comm, &dups[i]);
    t = (now_us() - t) / DUPS;
    for (i = 0; i < DUPS; i++)
        MPI_Comm_free(&dups[i]);
    double dup_worst;
    MPI_Reduce(&t, &dup_worst, 1, MPI_DOUBLE, MPI_MAX, 0, comm);

    /* 8-byte ping-pong between ranks 0 and 1 (one-way latency): the median of REPS timed
     * rounds after a warm-up round. */
    double lat = 0, rounds[REPS];
    char buf[8] = {0};
    MPI_Barrier(comm);
    if (size >= 2 && rank < 2) {
        for (int r = -1; r < REPS; r++) {
            t = now_us();
            for (i = 0; i < PINGS; i++) {
                if (rank == 0) {
                    MPI_Send(buf, 8, MPI_BYTE, 1, 1, comm);
                    MPI_Recv(buf, 8, MPI_BYTE, 1, 1, comm, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf, 8, MPI_BYTE, 0, 1, comm, MPI_STATUS_IGNORE);
                    MPI_Send(buf, 8, MPI_BYTE, 0, 1, comm);
                }
            }
            if (r >= 0)
                rounds[r] = (now_us() - t) / (2.0 * PINGS);
        }
        qsort(rounds, REPS, sizeof rounds[0], by_value);
        lat = rounds[REPS / 2];
    }
    if (rank == 0)
        printf("path_us %.1f\ndup_us %.3f\nlatency_us %.3f\n", latest[1] - latest[0], dup_worst, lat);
    if (use_session) {
        MPI_Comm_free(&comm);
        MPI_Session_finalize(&s);
    } else {
        MPI_Finalize();
    }
    return 0;
}
