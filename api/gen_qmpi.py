"""QMPI, MPICH's interface for chaining tools in front of the MPI functions: the parts of the
bindings api/gen.py generates for it (see docs/tools.md, "QMPI").

For every exported, non-variadic function `MPI_X` it generates
  - in mpi.h: the function's index `MPI_X_T` in `enum QMPI_Functions_enum`, its tool type
    `QMPI_X_t` (the function's parameters after a `QMPI_Context` and the calling tool's id)
    and the prototype of `QMPI_X`, the function as the last link of a chain (MPI itself, tool 0);
  - in forwarders.c: the weak `MPI_X` calls the first tool's function when a tool registered
    one, else `PMPI_X` (one load and one branch while no tool is loaded);
  - in qmpi.c: `QMPI_X`, which calls `PMPI_X`, and the table of those functions that
    crates/weft-abi/src/qmpi.rs hands to the last tool of a chain; and for the functions that
    return an error code, `weft_measure_X`, which times and traces a call (`WEFT_STATS`,
    `WEFT_TRACE`) around the rest of the chain: qmpi.rs puts it first in every chain while
    calls are measured, so that the hooks cost nothing in `PMPI_X` (docs/tools.md).
The registration functions themselves (`QMPI_Register_tool_name` ...) are written in qmpi.rs.
"""

# Functions that may run before MPI is initialized: the first call of one of them loads the
# tools named in QMPI_TOOL_LIST (their init callbacks register the tools' functions).
STARTS_TOOLS = {
    "MPI_Init",
    "MPI_Init_thread",
    "MPI_Initialized",
    "MPI_Finalized",
    "MPI_Session_init",
    "MPI_T_init_thread",
    "MPI_Get_version",
    "MPI_Get_library_version",
}

# Written by hand in crates/weft-abi/src/qmpi.rs; exported beside the generated ones.
REGISTRATION = [
    "QMPI_Register_tool_name",
    "QMPI_Register_tool_storage",
    "QMPI_Register_function",
    "QMPI_Get_function",
    "QMPI_Get_tool_storage",
    "QMPI_Get_calling_address",
]

HEADER_PART = """
/* ---- QMPI: tools chained in front of the MPI functions (MPICH's interface; docs/tools.md) ---- */
typedef struct {
    void **storage_stack;
} QMPI_Context;

#define QMPI_MAX_TOOL_NAME_LENGTH 256

int QMPI_Register_tool_name(const char *tool_name, void (*init_function_ptr)(int tool_id));
int QMPI_Register_tool_storage(int tool_id, void *tool_storage);
int QMPI_Register_function(int calling_tool_id, int function_enum, void (*function_ptr)(void));
int QMPI_Get_function(int calling_tool_id, int function_enum, void (**function_ptr)(void), int *next_tool_id);
int QMPI_Get_tool_storage(QMPI_Context context, int tool_id, void **storage);
int QMPI_Get_calling_address(QMPI_Context context, void **address);
"""


def chained(funcs, exports):
    """The functions a tool can be chained in front of, in enum order."""
    return [n for n in exports if not funcs[n].variadic]


def enum_name(name):
    return name.upper() + "_T"


def tool_args(f):
    """A tool function's parameters: the context, the calling tool's id, the MPI parameters."""
    return ", ".join(["QMPI_Context context", "int tool_id"] + [p.c_decl() for p in f.params])


def render_header_part(funcs, exports):
    names = chained(funcs, exports)
    out = [HEADER_PART.rstrip(), "", "enum QMPI_Functions_enum {"]
    out += [f"    {enum_name(n)}," for n in names]
    out += ["    MPI_LAST_FUNC_T", "};", ""]
    for n in names:
        f = funcs[n]
        out.append(f"typedef {f.ret} (Q{n}_t)({tool_args(f)});")
    out.append("")
    for n in names:
        f = funcs[n]
        out.append(f"{f.ret} Q{n}({tool_args(f)});")
    return "\n".join(out)


FORWARDERS_TOP = """\
/* QMPI (api/gen_qmpi.py): the first tool's function of each chain and its tool id, null and 0
 * while no tool registered one; crates/weft-abi/src/qmpi.rs writes them when it loads the tools. */
extern void (*weft_qmpi_first_fn[MPI_LAST_FUNC_T])(void) __attribute__((visibility("hidden")));
extern int weft_qmpi_first_id[MPI_LAST_FUNC_T] __attribute__((visibility("hidden")));
void weft_qmpi_start(void (*const *builtin)(void), void (*const *measure)(void)) __attribute__((visibility("hidden")));
extern void (*const weft_qmpi_builtin[MPI_LAST_FUNC_T])(void) __attribute__((visibility("hidden")));
extern void (*const weft_qmpi_measure[MPI_LAST_FUNC_T])(void) __attribute__((visibility("hidden")));
#define WEFT_QMPI_CHAIN(type, index, ...)                                                     \\
    do {                                                                                      \\
        void (*first_)(void) = __atomic_load_n(&weft_qmpi_first_fn[index], __ATOMIC_ACQUIRE); \\
        if (__builtin_expect(first_ != 0, 0)) {                                               \\
            QMPI_Context context_ = {(void **) __builtin_return_address(0)};                  \\
            int id_ = __atomic_load_n(&weft_qmpi_first_id[index], __ATOMIC_RELAXED);          \\
            return ((type *) first_)(context_, id_, ##__VA_ARGS__);                           \\
        }                                                                                     \\
    } while (0)
"""


def forwarder_body(f, name):
    """The weak `MPI_X`'s body: the tool chain when one is loaded, else `PMPI_X`."""
    args = ", ".join(p.name for p in f.params)
    start = "weft_qmpi_start(weft_qmpi_builtin, weft_qmpi_measure); " if name in STARTS_TOOLS else ""
    chain_args = f", {args}" if args else ""
    return f"{{ {start}WEFT_QMPI_CHAIN(Q{name}_t, {enum_name(name)}{chain_args}); return P{name}({args}); }}"


def comm_arg(f):
    """The communicator a traced call names (its first `MPI_Comm` argument), else null."""
    for p in f.params:
        if p.pointers == 0 and not p.array and p.base == "MPI_Comm":
            return p.name
    return "MPI_COMM_NULL"


MEASURE_TOP = """\
/* The measuring link (crates/weft-abi/src/qmpi.rs): the tools' first link of each chain
 * (null: straight to PMPI_X), and the probe around a call. */
extern void (*weft_qmpi_tool_fn[MPI_LAST_FUNC_T])(void) __attribute__((visibility("hidden")));
extern int weft_qmpi_tool_id[MPI_LAST_FUNC_T] __attribute__((visibility("hidden")));
void weft_measure_begin(void) __attribute__((visibility("hidden")));
void weft_measure_end(int function_enum, MPI_Comm comm) __attribute__((visibility("hidden")));
#define WEFT_MEASURED(type, index, comm, call, ...)                                          \
    do {                                                                                      \
        (void) tool_id;                                                                       \
        weft_measure_begin();                                                                 \
        int rc_;                                                                              \
        void (*next_)(void) = __atomic_load_n(&weft_qmpi_tool_fn[index], __ATOMIC_ACQUIRE);   \
        if (next_ != 0)                                                                       \
            rc_ = ((type *) next_)(context, __atomic_load_n(&weft_qmpi_tool_id[index],        \
                                                            __ATOMIC_RELAXED), ##__VA_ARGS__); \
        else                                                                                  \
            rc_ = call;                                                                       \
        weft_measure_end(index, comm);                                                        \
        return rc_;                                                                           \
    } while (0)
"""


def render_builtins(funcs, exports, measured):
    """`measured(f)`: whether calls of `f` are timed and traced (those that run through the
    boundary's `call`)."""
    names = chained(funcs, exports)
    out = [
        "/* Generated by api/gen.py (api/gen_qmpi.py): QMPI_X, each MPI function as the last link of a",
        " * tool chain, the measuring links weft_measure_X, and their tables. Do not edit. */",
        '#include "mpi.h"',
        "",
        MEASURE_TOP,
    ]
    for n in names:
        f = funcs[n]
        args = ", ".join(p.name for p in f.params)
        out.append(f"{f.ret} Q{n}({tool_args(f)}) {{ (void) context; (void) tool_id; return P{n}({args}); }}")
    out.append("")
    for n in names:
        f = funcs[n]
        if not measured(f):
            continue
        args = ", ".join(p.name for p in f.params)
        chain_args = f", {args}" if args else ""
        out.append(f"static int weft_measure_{n}({tool_args(f)}) {{ WEFT_MEASURED(Q{n}_t, {enum_name(n)}, "
                   f"{comm_arg(f)}, P{n}({args}){chain_args}); }}")
    out += [
        "",
        "/* Read by crates/weft-abi/src/qmpi.rs: QMPI_Get_function's answer past the last tool. */",
        '__attribute__((visibility("hidden"))) void (*const weft_qmpi_builtin[MPI_LAST_FUNC_T])(void) = {',
    ]
    out += [f"    [{enum_name(n)}] = (void (*)(void)) Q{n}," for n in names]
    out += ["};", ""]
    out += [
        "/* Read by crates/weft-abi/src/qmpi.rs: the first link of each chain while calls are measured",
        " * (null: that function is not measured). */",
        '__attribute__((visibility("hidden"))) void (*const weft_qmpi_measure[MPI_LAST_FUNC_T])(void) = {',
    ]
    out += [f"    [{enum_name(n)}] = (void (*)(void)) weft_measure_{n}," for n in names if measured(funcs[n])]
    out += ["};", ""]
    return "\n".join(out)


def rust_count(funcs, exports):
    names = chained(funcs, exports)
    out = [
        "/// Number of functions a QMPI tool can be chained in front of (`MPI_LAST_FUNC_T`).",
        f"pub const QMPI_FUNCTIONS: usize = {len(names)};",
        "",
        "/// The name of each chained function, by its index (`MPI_X_T`).",
        "pub const QMPI_NAMES: [&str; QMPI_FUNCTIONS] = [",
    ]
    out += [f'    "{n}",' for n in names]
    out += ["];", ""]
    return "\n".join(out)
