/* A Weft program under another MPI's launcher: Open MPI's mpirun (PMIx; the default) or
 * Slurm's srun (`slurm-pmi2` or `slurm-pmix` as the second argument; scripts/slurm-local.sh).
 * The world's rank and size are the launcher's (the OMPI_COMM_WORLD_* or SLURM_* variables it
 * sets beside PMI), the node-local ranks follow its node map (MPI_COMM_TYPE_SHARED: one
 * machine, so every rank, unless WEFT_NODES splits it), MPI_APPNUM is 0 or not set, a ring
 * exchange and collectives give the right values. Under WEFT_NODES the UCX bring-up exchanges
 * its addresses through the launcher's key-value space (PMIx: put, commit, fence, get). */
#include "wtest.h"

static int env_int(const char *name)
{
    const char *v = getenv(name);
    return v ? atoi(v) : -1;
}

/* The launcher's own view of the job. */
struct launcher {
    const char *rank, *size, *protocol_var, *absent_var;
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_rank = rank;

    const char *kind = argc > 2 ? argv[2] : "ompi";
    struct launcher l = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_NAMESPACE", "PMI_FD"};
    if (strcmp(kind, "slurm-pmi2") == 0)
        l = (struct launcher){"SLURM_PROCID", "SLURM_NTASKS", "PMI_FD", "PMIX_NAMESPACE"};
    else if (strcmp(kind, "slurm-pmix") == 0)
        l = (struct launcher){"SLURM_PROCID", "SLURM_NTASKS", "PMIX_NAMESPACE", "PMI_FD"};
    else
        CHECK_STR(kind, "ompi");
    CHECK(getenv(l.protocol_var) != NULL, "%s is not set: not started as %s", l.protocol_var, kind);
    CHECK(getenv(l.absent_var) == NULL, "%s is set under %s", l.absent_var, kind);
    CHECK_INT(rank, env_int(l.rank));
    CHECK_INT(size, env_int(l.size));
    if (argc > 1)
        CHECK_INT(size, atoi(argv[1]));

    int *appnum, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    /* mpirun numbers its applications (one here: 0); Slurm's PMI-2 numbers none (appnum -1),
     * and MPI_APPNUM is then not set. */
    if (strcmp(kind, "slurm-pmi2") != 0)
        CHECK(flag, "MPI_APPNUM is not set under %s", kind);
    if (flag)
        CHECK_INT(*appnum, 0);

    /* Node-local ranks from PMIx (one machine: all of them), unless WEFT_NODES overrides. */
    MPI_Comm shared;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    int lrank, lsize;
    MPI_Comm_rank(shared, &lrank);
    MPI_Comm_size(shared, &lsize);
    const char *nodes = getenv("WEFT_NODES");
    if (!nodes) {
        /* One machine: every rank is local (mpirun's local ranks follow its mapping, not the
         * world rank order that MPI_Comm_split_type keeps). */
        CHECK_INT(lsize, size);
        CHECK_INT(lrank, rank);
    } else if (strcmp(nodes, "per-rank") == 0) {
        CHECK_INT(lsize, 1);
    } else {
        int k = atoi(nodes), block = (size + k - 1) / k;
        int first = rank / block * block;
        int expect = size - first < block ? size - first : block;
        CHECK_INT(lsize, expect);
        CHECK_INT(lrank, rank - first);
    }
    MPI_Comm_free(&shared);

    /* A ring: every rank sends its rank and 1 MiB (rendezvous) to the next. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, next, 7, &got, 1, MPI_INT, prev, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK_INT(got, prev);
    enum { N = 1 << 18 };
    int *out = malloc(N * sizeof(int)), *in = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        out[i] = rank * N + i;
    MPI_Sendrecv(out, N, MPI_INT, next, 8, in, N, MPI_INT, prev, 8, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += in[i] != prev * N + i;
    CHECK_INT(bad, 0);
    free(out);
    free(in);

    /* Collectives. */
    long sum = 0, mine = rank + 1;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK_INT(sum, (long)size * (size + 1) / 2);
    int root_value = rank == 0 ? 4242 : -1;
    MPI_Bcast(&root_value, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK_INT(root_value, 4242);

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
