/* Every RMA operation x window kind x synchronisation mode, with derived datatypes on origin
 * and target, data checked. Window memory: N ints per rank, rank r's element i starts as
 * r*1000+i. */
#include "wtest.h"

#define N 64
/* DYNAMIC: malloc'd memory attached (cross-memory attach); DYNAMIC_ALLOC: 64 KiB of
 * MPI_Alloc_mem memory attached (in Weft a shareable block, published and mapped by the
 * origins, reached by address). */
enum kind { CREATE, ALLOCATE, SHARED, DYNAMIC, DYNAMIC_ALLOC, NKINDS };
enum sync { FENCE, LOCK, LOCK_ALL, PSCW, NSYNCS };
static const char *kind_name[] = {"create", "allocate", "allocate_shared", "dynamic",
                                  "dynamic_alloc_mem"};
static const char *sync_name[] = {"fence", "lock", "lock_all", "pscw"};

static int rank, size;
static MPI_Aint *dyn_bases; /* each rank's attached address (dynamic windows) */

static int *make_win(enum kind k, MPI_Win *win, int **mem_to_free)
{
    int *base = NULL;
    *mem_to_free = NULL;
    switch (k) {
    case CREATE:
        base = malloc(N * sizeof(int));
        *mem_to_free = base;
        MPI_Win_create(base, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, win);
        break;
    case ALLOCATE:
        MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, win);
        break;
    case SHARED:
        MPI_Win_allocate_shared(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                win);
        break;
    default:
        if (k == DYNAMIC_ALLOC) {
            MPI_Alloc_mem(65536, MPI_INFO_NULL, &base);
        } else {
            base = malloc(N * sizeof(int));
            *mem_to_free = base;
        }
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win);
        MPI_Win_attach(*win, base, N * sizeof(int));
        MPI_Aint a;
        MPI_Get_address(base, &a);
        MPI_Allgather(&a, 1, MPI_AINT, dyn_bases, 1, MPI_AINT, MPI_COMM_WORLD);
        break;
    }
    return base;
}

/* Displacement of element i at target t. */
static MPI_Aint disp(enum kind k, int t, int i)
{
    return k >= DYNAMIC ? dyn_bases[t] + i * (MPI_Aint)sizeof(int) : i;
}

static void reset(int *base)
{
    for (int i = 0; i < N; i++)
        base[i] = rank * 1000 + i;
}

static void open_epoch(enum sync s, int target, MPI_Win win, MPI_Group world, int origin_of_me)
{
    switch (s) {
    case FENCE:
        MPI_Win_fence(0, win);
        break;
    case LOCK:
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
        break;
    case LOCK_ALL:
        MPI_Win_lock_all(0, win);
        break;
    default: {
        MPI_Group tg, og;
        MPI_Group_incl(world, 1, &origin_of_me, &og);
        MPI_Group_incl(world, 1, &target, &tg);
        MPI_Win_post(og, 0, win);
        MPI_Win_start(tg, 0, win);
        MPI_Group_free(&tg);
        MPI_Group_free(&og);
    }
    }
}

static void close_epoch(enum sync s, int target, MPI_Win win)
{
    switch (s) {
    case FENCE:
        MPI_Win_fence(0, win);
        break;
    case LOCK:
        MPI_Win_flush(target, win);
        MPI_Win_unlock(target, win);
        break;
    case LOCK_ALL:
        MPI_Win_flush_all(win);
        MPI_Win_unlock_all(win);
        break;
    default:
        MPI_Win_complete(win);
        MPI_Win_wait(win);
    }
}

static void run(enum kind k, enum sync s, MPI_Group world)
{
    MPI_Win win;
    int *mem;
    int *base = make_win(k, &win, &mem);
    int target = (rank + 1) % size, origin = (rank + size - 1) % size;
    /* A vector of 8 ints with stride 2 (target side), contiguous 8 ints (origin side). */
    MPI_Datatype vec;
    MPI_Type_vector(8, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int buf[16], res[16], one, got, cmp;
    const char *what = NULL;
    char ctx[64];
    snprintf(ctx, sizeof ctx, "%s/%s", kind_name[k], sync_name[s]);

    /* put: 8 ints into the odd elements 1,3,..,15 of the target */
    reset(base);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 8; i++)
        buf[i] = -(rank * 100 + i);
    open_epoch(s, target, win, world, origin);
    MPI_Put(buf, 8, MPI_INT, target, disp(k, target, 1), 1, vec, win);
    close_epoch(s, target, win);
    MPI_Barrier(MPI_COMM_WORLD);
    what = "put";
    for (int i = 0; i < N; i++) {
        int expect = (i >= 1 && i <= 15 && i % 2 == 1) ? -(origin * 100 + (i - 1) / 2)
                                                       : rank * 1000 + i;
        CHECK(base[i] == expect, "%s %s: elem %d = %d, expected %d", ctx, what, i, base[i], expect);
    }

    /* get: the even elements 0..14 of the target into contiguous ints; Rget of 4 more */
    reset(base);
    MPI_Barrier(MPI_COMM_WORLD);
    memset(buf, 0, sizeof buf);
    open_epoch(s, target, win, world, origin);
    MPI_Get(buf, 8, MPI_INT, target, disp(k, target, 0), 1, vec, win);
    MPI_Request req;
    MPI_Rget(buf + 8, 4, MPI_INT, target, disp(k, target, 40), 4, MPI_INT, win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    close_epoch(s, target, win);
    what = "get";
    for (int i = 0; i < 8; i++)
        CHECK(buf[i] == target * 1000 + 2 * i, "%s %s: %d = %d", ctx, what, i, buf[i]);
    for (int i = 0; i < 4; i++)
        CHECK(buf[8 + i] == target * 1000 + 40 + i, "%s rget: %d = %d", ctx, i, buf[8 + i]);

    /* accumulate (sum over a vector), get_accumulate, fetch_and_op, compare_and_swap */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 8; i++)
        buf[i] = i + 1;
    open_epoch(s, target, win, world, origin);
    MPI_Accumulate(buf, 8, MPI_INT, target, disp(k, target, 16), 1, vec, MPI_SUM, win);
    MPI_Get_accumulate(buf, 4, MPI_INT, res, 4, MPI_INT, target, disp(k, target, 50), 4, MPI_INT,
                       MPI_MAX, win);
    one = 5;
    MPI_Fetch_and_op(&one, &got, MPI_INT, target, disp(k, target, 60), MPI_SUM, win);
    int newv = 7777;
    cmp = target * 1000 + 61;
    int old;
    MPI_Compare_and_swap(&newv, &cmp, &old, MPI_INT, target, disp(k, target, 61), win);
    int newv2 = 8888, cmp2 = 1, old2;
    MPI_Compare_and_swap(&newv2, &cmp2, &old2, MPI_INT, target, disp(k, target, 62), win);
    close_epoch(s, target, win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 8; i++) {
        int e = 16 + 2 * i;
        CHECK(base[e] == rank * 1000 + e + i + 1, "%s acc: elem %d = %d", ctx, e, base[e]);
        CHECK(base[e + 1] == rank * 1000 + e + 1, "%s acc untouched: elem %d = %d", ctx, e + 1,
              base[e + 1]);
    }
    for (int i = 0; i < 4; i++) {
        CHECK(res[i] == target * 1000 + 50 + i, "%s get_acc result %d = %d", ctx, i, res[i]);
        int e = rank * 1000 + 50 + i;
        CHECK(base[50 + i] == (e > i + 1 ? e : i + 1), "%s get_acc max %d = %d", ctx, i, base[50 + i]);
    }
    CHECK(got == target * 1000 + 60, "%s fetch_and_op got %d", ctx, got);
    CHECK(base[60] == rank * 1000 + 60 + 5, "%s fetch_and_op target %d", ctx, base[60]);
    CHECK(old == target * 1000 + 61, "%s cas old %d", ctx, old);
    CHECK(base[61] == 7777, "%s cas swapped %d", ctx, base[61]);
    CHECK(old2 == target * 1000 + 62, "%s cas old2 %d", ctx, old2);
    CHECK(base[62] == rank * 1000 + 62, "%s cas not swapped %d", ctx, base[62]);

    MPI_Type_free(&vec);
    if (k >= DYNAMIC)
        MPI_Win_detach(win, base);
    MPI_Win_free(&win);
    free(mem);
    if (k == DYNAMIC_ALLOC)
        MPI_Free_mem(base);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wtest_rank = rank;
    dyn_bases = malloc(size * sizeof(MPI_Aint));
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    /* WTEST_RMA_ONE_NODE_KINDS=0 (windows spanning logical nodes: tests/c/multinode): only the
     * kinds that may span nodes (created and allocated windows). */
    int one_node_kinds = wtest_env_int("WTEST_RMA_ONE_NODE_KINDS", 1);
    for (int k = 0; k < NKINDS; k++)
        for (int s = 0; s < NSYNCS; s++)
            if (one_node_kinds || k == CREATE || k == ALLOCATE)
                run(k, s, world);
    MPI_Group_free(&world);
    free(dyn_bases);
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
