/* Collectives on a thread communicator beyond barrier/bcast/reduce/allreduce: gather,
 * allgather, scatter, alltoall (with MPI_IN_PLACE), scan, exscan, a derived datatype, and
 * nonblocking forms; each against the values it must produce, back to back. */
#include "wtest.h"
#include "threads.h"
#include <stdatomic.h>

#define NT 4

static MPI_Comm tc;
static MPI_Datatype pair; /* two ints, stride 2 (a non-contiguous vector) */
static atomic_int errors_in_threads;

#define TCHECK(cond, ...)                                                                \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            atomic_fetch_add(&errors_in_threads, 1);                                     \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
        }                                                                                \
    } while (0)

static void region(void *unused)
{
    (void)unused;
    int r = -1;
    MPIX_Threadcomm_start(tc);
    MPI_Comm_rank(tc, &r);
    for (int i = 0; i < 200; i++) {
        int root = i % NT, v = r + i, all[NT], k;
        for (k = 0; k < NT; k++)
            all[k] = -1;
        MPI_Gather(&v, 1, MPI_INT, all, 1, MPI_INT, root, tc);
        if (r == root)
            for (k = 0; k < NT; k++)
                TCHECK(all[k] == k + i, "gather[%d] = %d", k, all[k]);
        for (k = 0; k < NT; k++)
            all[k] = -1;
        MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, tc);
        for (k = 0; k < NT; k++)
            TCHECK(all[k] == k + i, "allgather[%d] = %d", k, all[k]);
        for (k = 0; k < NT; k++)
            all[k] = k == r ? 7 * r : -1;
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 1, MPI_INT, tc);
        for (k = 0; k < NT; k++)
            TCHECK(all[k] == 7 * k, "allgather in place[%d] = %d", k, all[k]);
        int src[NT], one = -1;
        for (k = 0; k < NT; k++)
            src[k] = 10 * i + k;
        MPI_Scatter(src, 1, MPI_INT, &one, 1, MPI_INT, root, tc);
        TCHECK(one == 10 * i + r, "scatter got %d", one);
        int s2[NT], r2[NT];
        for (k = 0; k < NT; k++)
            s2[k] = 100 * r + k, r2[k] = -1;
        MPI_Alltoall(s2, 1, MPI_INT, r2, 1, MPI_INT, tc);
        for (k = 0; k < NT; k++)
            TCHECK(r2[k] == 100 * k + r, "alltoall[%d] = %d", k, r2[k]);
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s2, 1, MPI_INT, tc);
        for (k = 0; k < NT; k++)
            TCHECK(s2[k] == 100 * k + r, "alltoall in place[%d] = %d", k, s2[k]);
        int sc = -1, ex = -5;
        MPI_Scan(&v, &sc, 1, MPI_INT, MPI_SUM, tc);
        TCHECK(sc == (r + 1) * i + r * (r + 1) / 2, "scan %d", sc);
        MPI_Exscan(&v, &ex, 1, MPI_INT, MPI_SUM, tc);
        if (r > 0)
            TCHECK(ex == r * i + r * (r - 1) / 2, "exscan %d", ex);
        else
            TCHECK(ex == -5, "exscan left rank 0's buffer: %d", ex);
        /* A derived type: every other int. */
        int strided[4] = {-1, -2, -3, -4};
        if (r == root)
            strided[0] = 1000 + i, strided[2] = 2000 + i;
        MPI_Bcast(strided, 1, pair, root, tc);
        TCHECK(strided[0] == 1000 + i && strided[2] == 2000 + i && strided[1] == -2,
               "strided bcast %d %d %d", strided[0], strided[1], strided[2]);
        /* Nonblocking forms. */
        MPI_Request req[2];
        int s = -1;
        MPI_Iallreduce(&v, &s, 1, MPI_INT, MPI_SUM, tc, &req[0]);
        MPI_Ibarrier(tc, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        TCHECK(s == NT * i + NT * (NT - 1) / 2, "iallreduce %d", s);
        if (atomic_load(&errors_in_threads) > 10)
            break;
    }
    MPIX_Threadcomm_finish(tc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Type_vector(2, 1, 2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    CHECK_INT(MPIX_Threadcomm_init(MPI_COMM_SELF, NT, &tc), MPI_SUCCESS);
    run_threads(NT, region, NULL);
    CHECK_INT(atomic_load(&errors_in_threads), 0);
    MPIX_Threadcomm_free(&tc);
    MPI_Type_free(&pair);
    MPI_Finalize();
    if (wtest_errs == 0)
        printf(" No Errors\n");
    return wtest_errs != 0;
}
