/* QMPI tools chained in front of MPI functions. Two tools register from a constructor, as tool
 * libraries do: "counter" and "tracer". With QMPI_TOOL_LIST=counter:tracer:counter (or MPICH's
 * MPIR_CVAR_QMPI_TOOL_LIST) there are three tools: ids 1 and 3 are "counter" (one registration
 * fills both), 2 is "tracer". Checked: the order in which each chain calls the tools, the next
 * link QMPI_Get_function answers at each step (past the last tool: QMPI_X with id 0), tool
 * storage, the program's calling address, a tool calling MPI inside its wrapper, and the
 * errors. Without a tool list (second manifest line) no tool is loaded and MPI runs alone. */
#include "wtest.h"
#include <inttypes.h>
#include <stdint.h>

enum { LOG = 64 };
static int log_id[LOG], log_fn[LOG], logged = 0;
static int storage[4];
static int name_rc[4];
static int inits = 0;
static int loaded = 0; /* tools expected: from the environment */

static void note(int id, int fn)
{
    if (logged < LOG)
        log_id[logged] = id, log_fn[logged] = fn;
    logged++;
}

/* The next link for `id`, checked against what the chain must be. */
static void (*next_of(int id, int fn, int want_next))(void)
{
    void (*f)(void) = NULL;
    int next = -1;
    EXPECT_OK(QMPI_Get_function(id, fn, &f, &next));
    CHECK_INT(next, want_next);
    CHECK(f != NULL, "Get_function gave a null function");
    return f;
}

static void check_storage(QMPI_Context context, int id)
{
    void *s = NULL;
    EXPECT_OK(QMPI_Get_tool_storage(context, id, &s));
    CHECK(s == &storage[id], "tool %d storage %p, expected %p", id, s, (void *)&storage[id]);
}

static int counter_init(QMPI_Context context, int tool_id, int *argc, char ***argv)
{
    note(tool_id, MPI_INIT_T);
    check_storage(context, tool_id);
    /* tracer registered no MPI_Init: counter 1 -> counter 3 -> MPI */
    QMPI_Init_t *next = (QMPI_Init_t *)next_of(tool_id, MPI_INIT_T, tool_id == 1 ? 3 : 0);
    if (tool_id == 3)
        CHECK(next == QMPI_Init, "past the last tool: QMPI_Init");
    return next(context, tool_id == 1 ? 3 : 0, argc, argv);
}

static int counter_send(QMPI_Context context, int tool_id, const void *buf, int count,
                        MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    note(tool_id, MPI_SEND_T);
    check_storage(context, tool_id);
    storage[tool_id]++;
    QMPI_Send_t *next = (QMPI_Send_t *)next_of(tool_id, MPI_SEND_T, tool_id == 1 ? 2 : 0);
    if (tool_id == 3)
        CHECK(next == QMPI_Send, "past the last tool: QMPI_Send");
    return next(context, tool_id == 1 ? 2 : 0, buf, count, type, dest, tag, comm);
}

static int counter_recv(QMPI_Context context, int tool_id, void *buf, int count,
                        MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    note(tool_id, MPI_RECV_T);
    storage[tool_id]++;
    QMPI_Recv_t *next = (QMPI_Recv_t *)next_of(tool_id, MPI_RECV_T, tool_id == 1 ? 3 : 0);
    return next(context, tool_id == 1 ? 3 : 0, buf, count, type, source, tag, comm, status);
}

static int counter_comm_rank(QMPI_Context context, int tool_id, MPI_Comm comm, int *rank)
{
    note(tool_id, MPI_COMM_RANK_T);
    QMPI_Comm_rank_t *next =
        (QMPI_Comm_rank_t *)next_of(tool_id, MPI_COMM_RANK_T, tool_id == 1 ? 3 : 0);
    return next(context, tool_id == 1 ? 3 : 0, comm, rank);
}

static void *send_site; /* set by do_send: the calling address must fall inside it */
static int sends_done = 0;

static int tracer_send(QMPI_Context context, int tool_id, const void *buf, int count,
                       MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    note(tool_id, MPI_SEND_T);
    CHECK_INT(tool_id, 2);
    check_storage(context, tool_id);
    void *address = NULL;
    EXPECT_OK(QMPI_Get_calling_address(context, &address));
    uintptr_t at = 0;
    CHECK(address && sscanf((char *)address, "%" SCNxPTR, &at) == 1, "calling address string");
    CHECK(at > (uintptr_t)send_site && at < (uintptr_t)send_site + 512,
          "calling address %s is not inside do_send (%p)", (char *)address, send_site);
    free(address);
    /* MPI inside a tool's wrapper goes through the chains again */
    int rank = -1;
    EXPECT_OK(MPI_Comm_rank(comm, &rank));
    CHECK(rank >= 0, "rank inside a tool");
    QMPI_Send_t *next = (QMPI_Send_t *)next_of(tool_id, MPI_SEND_T, 3);
    return next(context, 3, buf, count, type, dest, tag, comm);
}

static void counter_register(int tool_id)
{
    inits++;
    EXPECT_OK(QMPI_Register_tool_storage(tool_id, &storage[tool_id]));
    EXPECT_OK(QMPI_Register_function(tool_id, MPI_INIT_T, (void (*)(void))counter_init));
    EXPECT_OK(QMPI_Register_function(tool_id, MPI_SEND_T, (void (*)(void))counter_send));
    EXPECT_OK(QMPI_Register_function(tool_id, MPI_RECV_T, (void (*)(void))counter_recv));
    EXPECT_OK(QMPI_Register_function(tool_id, MPI_COMM_RANK_T, (void (*)(void))counter_comm_rank));
    EXPECT_ERR(QMPI_Register_function(tool_id, MPI_LAST_FUNC_T, (void (*)(void))counter_send),
               MPI_ERR_ARG, "QMPI_Register_function", "function_enum");
    EXPECT_ERR(QMPI_Register_function(9, MPI_SEND_T, (void (*)(void))counter_send), MPI_ERR_ARG,
               "QMPI_Register_function", "calling_tool_id");
}

static void tracer_register(int tool_id)
{
    inits++;
    EXPECT_OK(QMPI_Register_tool_storage(tool_id, &storage[tool_id]));
    EXPECT_OK(QMPI_Register_function(tool_id, MPI_SEND_T, (void (*)(void))tracer_send));
}

__attribute__((constructor)) static void register_tools(void)
{
    name_rc[0] = QMPI_Register_tool_name("counter", counter_register);
    name_rc[1] = QMPI_Register_tool_name("tracer", tracer_register);
    name_rc[2] = QMPI_Register_tool_name("tracer", tracer_register); /* listed once */
    name_rc[3] = QMPI_Register_tool_name("absent", tracer_register);
}

__attribute__((noinline)) static int do_send(int *v, int peer)
{
    send_site = (void *)(uintptr_t)&do_send;
    int rc = MPI_Send(v, 1, MPI_INT, peer, 7, MPI_COMM_WORLD);
    sends_done++; /* work after the call: MPI_Send is called, not jumped to */
    return rc;
}

int main(int argc, char **argv)
{
    const char *list = getenv("QMPI_TOOL_LIST");
    if (!list)
        list = getenv("MPIR_CVAR_QMPI_TOOL_LIST");
    loaded = list && *list;

    MPI_Init(&argc, &argv);
    wtest_errors_return();
    int rank = -1, size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_INT(size, 2);
    int before_rank = logged;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    if (loaded) {
        CHECK_INT(name_rc[0], MPI_SUCCESS);
        CHECK_INT(name_rc[1], MPI_SUCCESS);
        EXPECT_ERR(name_rc[2], MPI_ERR_ARG, "QMPI_Register_tool_name", "already registered");
        CHECK_INT(inits, 3);
        /* MPI_Init: counter 1, counter 3 */
        CHECK_INT(log_id[0], 1);
        CHECK_INT(log_fn[0], MPI_INIT_T);
        CHECK_INT(log_id[1], 3);
        CHECK_INT(log_fn[1], MPI_INIT_T);
        /* MPI_Comm_rank: counter 1, counter 3 */
        CHECK_INT(logged - before_rank, 2);
        CHECK_INT(log_fn[before_rank], MPI_COMM_RANK_T);
    } else {
        EXPECT_ERR(name_rc[0], MPI_ERR_ARG, "QMPI_Register_tool_name", "QMPI_TOOL_LIST");
        CHECK_INT(inits, 0);
        CHECK_INT(logged, 0);
    }
    EXPECT_ERR(name_rc[3], MPI_ERR_ARG, "QMPI_Register_tool_name", "absent");
    EXPECT_ERR(QMPI_Register_tool_name(NULL, tracer_register), MPI_ERR_ARG,
               "QMPI_Register_tool_name", "tool_name");
    EXPECT_ERR(QMPI_Get_function(0, MPI_SEND_T, NULL, &size), MPI_ERR_ARG, "QMPI_Get_function",
               "function_ptr");
    EXPECT_ERR(QMPI_Register_tool_storage(0, NULL), MPI_ERR_ARG, "QMPI_Register_tool_storage",
               "tool_id");
    QMPI_Context none = {NULL};
    void *address = NULL;
    EXPECT_ERR(QMPI_Get_calling_address(none, &address), MPI_ERR_ARG, "QMPI_Get_calling_address",
               "context");
    /* MPI itself (tool 0) asking for the first link: the first tool that registered MPI_Send */
    {
        void (*f)(void) = NULL;
        int next = -1;
        EXPECT_OK(QMPI_Get_function(0, MPI_SEND_T, &f, &next));
        CHECK_INT(next, loaded ? 1 : 0);
        CHECK(f == (loaded ? (void (*)(void))counter_send : (void (*)(void))QMPI_Send),
              "first link of MPI_Send");
    }

    int start = logged;
    int v = 40 + rank, got = -1;
    if (rank == 0) {
        EXPECT_OK(do_send(&v, 1));
        EXPECT_OK(MPI_Recv(&got, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        EXPECT_OK(MPI_Recv(&got, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        EXPECT_OK(do_send(&v, 0));
    }
    CHECK_INT(got, 40 + 1 - rank);

    if (loaded) {
        /* Send: counter 1, tracer 2 (its MPI_Comm_rank: counter 1, counter 3), counter 3;
         * Recv: counter 1, counter 3. */
        int send_at = rank == 0 ? start : start + 2;
        int recv_at = rank == 0 ? start + 5 : start;
        int want_send[5][2] = {{1, MPI_SEND_T}, {2, MPI_SEND_T}, {1, MPI_COMM_RANK_T},
                               {3, MPI_COMM_RANK_T}, {3, MPI_SEND_T}};
        CHECK_INT(logged - start, 7);
        for (int i = 0; i < 5; i++) {
            CHECK_INT(log_id[send_at + i], want_send[i][0]);
            CHECK_INT(log_fn[send_at + i], want_send[i][1]);
        }
        CHECK_INT(log_id[recv_at], 1);
        CHECK_INT(log_fn[recv_at], MPI_RECV_T);
        CHECK_INT(log_id[recv_at + 1], 3);
        CHECK_INT(storage[1], 2); /* one send and one receive through each counter */
        CHECK_INT(storage[3], 2);
    } else {
        CHECK_INT(logged, 0);
    }
    wtest_world_rank();
    MPI_Finalize();
    return wtest_finish();
}
