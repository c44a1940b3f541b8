//! QMPI: tools chained in front of the MPI functions (MPICH's interface; docs/tools.md).
//!
//! A tool library registers its name from a constructor (`QMPI_Register_tool_name`, with the
//! callback that will register its functions). The environment's `QMPI_TOOL_LIST` (or
//! MPICH's spelling `MPIR_CVAR_QMPI_TOOL_LIST`), `name:name:...`, says which tools are loaded
//! and in which order: tool ids 1, 2, ... in list order, MPI itself being tool 0; a name
//! listed twice is two tools sharing one callback. At the first call of a function that may
//! run before initialization (`MPI_Init`, `MPI_Initialized`, ...: `STARTS_TOOLS` in
//! api/gen_qmpi.py) each tool's callback runs and registers the tool's functions; then the
//! first link of every chain is written to `weft_qmpi_first_fn`/`_id`, which the generated
//! `MPI_X` forwarders read (a null entry: straight to `PMPI_X`). A tool calls on through
//! `QMPI_Get_function`, which past the last tool answers `QMPI_X` (crates/weft-abi/c/qmpi.c).
//!
//! `WEFT_STATS` and `WEFT_TRACE` measure calls through the same chains: while either is on
//! (`measure_calls`, from `MPI_Init`), the first link of each chain is qmpi.c's
//! `weft_measure_X`, which starts a probe, calls the tools' first link
//! (`weft_qmpi_tool_fn`/`_id`) or `PMPI_X`, and ends the probe. The entry points themselves
//! then carry no measuring code: a library with the hooks costs what one without them does.
//! Calls made straight to `PMPI_X` are not measured (as a PMPI tool would not see them).
//!
//! Every table has its size fixed when the tool list is read, and every entry is an atomic,
//! so the calls a tool makes on each intercepted call (`QMPI_Get_tool_storage`,
//! `QMPI_Get_function`) take no lock.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU8, AtomicUsize, Ordering};
use std::sync::OnceLock;

use weft_core::error::{ErrorClass, MpiError};

use crate::boundary::{Probe, Scope};
use crate::constants::MPI_COMM_NULL;
use crate::constants::MPI_SUCCESS;
use crate::ctypes::MPI_Comm;
use crate::error_codes;
use crate::qmpi_functions::{QMPI_FUNCTIONS, QMPI_NAMES};

/// The first tool function of each chain (a C function pointer), 0 while no tool registered one.
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static weft_qmpi_first_fn: [AtomicUsize; QMPI_FUNCTIONS] =
    [const { AtomicUsize::new(0) }; QMPI_FUNCTIONS];

/// The tool id that goes with `weft_qmpi_first_fn`'s entry.
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static weft_qmpi_first_id: [AtomicI32; QMPI_FUNCTIONS] =
    [const { AtomicI32::new(0) }; QMPI_FUNCTIONS];

/// The tools' first link of each chain, which the measuring link calls on to (null: `PMPI_X`).
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static weft_qmpi_tool_fn: [AtomicUsize; QMPI_FUNCTIONS] =
    [const { AtomicUsize::new(0) }; QMPI_FUNCTIONS];

/// The tool id that goes with `weft_qmpi_tool_fn`'s entry.
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static weft_qmpi_tool_id: [AtomicI32; QMPI_FUNCTIONS] =
    [const { AtomicI32::new(0) }; QMPI_FUNCTIONS];

/// qmpi.c's table of measuring links (`weft_measure_X`, null for functions not measured),
/// handed over with `BUILTIN`.
static MEASURE: AtomicPtr<usize> = AtomicPtr::new(std::ptr::null_mut());

/// Whether calls are measured (`WEFT_STATS`/`WEFT_TRACE`): the measuring links stand first.
static MEASURING: AtomicBool = AtomicBool::new(false);

/// `QMPI_X` for each chain index (the table of crates/weft-abi/c/qmpi.c, `QMPI_FUNCTIONS`
/// entries), handed over by the first `weft_qmpi_start`: Rust does not link against the C
/// objects, so that the crate's unit tests build without them.
static BUILTIN: AtomicPtr<usize> = AtomicPtr::new(std::ptr::null_mut());

/// The tools the environment names, with what they registered.
struct Tools {
    /// Tool `id`'s name at `names[id - 1]`.
    names: Vec<Vec<u8>>,
    /// Tool `id`'s init callback (`extern "C" fn(c_int)`) at `inits[id - 1]`, 0 until registered.
    inits: Vec<AtomicUsize>,
    /// Tool `id`'s function for chain `index` at `functions[(id - 1) * QMPI_FUNCTIONS + index]`.
    functions: Vec<AtomicUsize>,
    /// Tool `id`'s storage pointer at `storage[id]` (`storage[0]`, MPI's own, stays null).
    storage: Vec<AtomicUsize>,
}

impl Tools {
    fn from_env() -> Tools {
        let list = ["QMPI_TOOL_LIST", "MPIR_CVAR_QMPI_TOOL_LIST"]
            .iter()
            .find_map(std::env::var_os)
            .unwrap_or_default();
        let names: Vec<Vec<u8>> = list
            .as_encoded_bytes()
            .split(|&b| b == b':')
            .filter(|name| !name.is_empty())
            .map(|name| name.to_vec())
            .collect();
        let zeros = |n: usize| (0..n).map(|_| AtomicUsize::new(0)).collect::<Vec<_>>();
        Tools {
            inits: zeros(names.len()),
            functions: zeros(names.len() * QMPI_FUNCTIONS),
            storage: zeros(names.len() + 1),
            names,
        }
    }

    fn count(&self) -> c_int {
        self.names.len() as c_int
    }

    fn function(&self, id: c_int, index: usize) -> usize {
        self.functions[(id as usize - 1) * QMPI_FUNCTIONS + index].load(Ordering::Acquire)
    }

    /// Writes the first link of chain `index` for the forwarders: the measuring link while
    /// calls are measured, else the first tool's function.
    fn publish(&self, index: usize) {
        let first = (1..=self.count()).find_map(|id| {
            let f = self.function(id, index);
            (f != 0).then_some((id, f))
        });
        let (id, f) = first.unwrap_or((0, 0));
        weft_qmpi_tool_id[index].store(id, Ordering::Relaxed);
        weft_qmpi_tool_fn[index].store(f, Ordering::Release);
        let (id, f) = match measuring_link(index) {
            0 => (id, f),
            link => (0, link),
        };
        weft_qmpi_first_id[index].store(id, Ordering::Relaxed);
        weft_qmpi_first_fn[index].store(f, Ordering::Release);
    }
}

/// Chain `index`'s measuring link while calls are measured, else 0.
fn measuring_link(index: usize) -> usize {
    let table = MEASURE.load(Ordering::Acquire);
    if !MEASURING.load(Ordering::Acquire) || table.is_null() {
        return 0;
    }
    // SAFETY: non-null only as qmpi.c's constant table of QMPI_FUNCTIONS entries; index < QMPI_FUNCTIONS.
    unsafe { *table.add(index) }
}

/// Measure every call from now on (`MPI_Init` with `WEFT_STATS` or `WEFT_TRACE`): the
/// measuring links go first in every chain. Before the tools started (a program that called
/// `PMPI_Init` itself) the chains are written when they start.
pub fn measure_calls() {
    MEASURING.store(true, Ordering::Release);
    if STARTED.load(Ordering::Acquire) == 2 {
        let t = tools();
        for index in 0..QMPI_FUNCTIONS {
            t.publish(index);
        }
    }
}

/// The start of a measured call (qmpi.c's measuring links).
#[no_mangle]
pub extern "C" fn weft_measure_begin() {
    let _ = catch_unwind(Probe::start);
}

/// The end of a measured call of chain `function_enum` on `comm` (null: no communicator).
#[no_mangle]
pub extern "C" fn weft_measure_end(function_enum: c_int, comm: MPI_Comm) {
    let Some(&name) = QMPI_NAMES.get(function_enum as usize) else {
        return;
    };
    let scope = if comm == MPI_COMM_NULL {
        Scope::Default
    } else {
        Scope::Comm(comm)
    };
    let _ = catch_unwind(|| Probe::finish(name, scope));
}

fn tools() -> &'static Tools {
    static TOOLS: OnceLock<Tools> = OnceLock::new();
    TOOLS.get_or_init(Tools::from_env)
}

/// `weft_qmpi_start`'s progress: 0 not started, 1 running the callbacks, 2 done.
static STARTED: AtomicU8 = AtomicU8::new(0);

/// Runs every registered tool's init callback once, then publishes the chains. Called by the
/// forwarders of the functions that may come first (api/gen_qmpi.py `STARTS_TOOLS`) with
/// qmpi.c's table of `QMPI_X`; a call from inside a callback, or after the first, returns at once.
#[no_mangle]
pub extern "C" fn weft_qmpi_start(builtin: *const usize, measure: *const usize) {
    BUILTIN.store(builtin.cast_mut(), Ordering::Release);
    MEASURE.store(measure.cast_mut(), Ordering::Release);
    if STARTED.load(Ordering::Acquire) != 0
        || STARTED
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
    {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let t = tools();
        for id in 1..=t.count() {
            let init = t.inits[id as usize - 1].load(Ordering::Acquire);
            if init != 0 {
                // `init` was stored from the non-null `extern "C" fn(int)` the tool passed to
                // `QMPI_Register_tool_name`.
                // SAFETY: an address of that function type (above).
                let init = unsafe { std::mem::transmute::<usize, extern "C" fn(c_int)>(init) };
                init(id);
            }
        }
        for index in 0..QMPI_FUNCTIONS {
            t.publish(index);
        }
    }));
    STARTED.store(2, Ordering::Release);
}

/// An error code for a QMPI function: these are called before MPI exists (a tool's
/// constructor), so they return the code and never call an errhandler.
fn fail(class: ErrorClass, message: String) -> c_int {
    error_codes::encode(&MpiError::new(class, message))
}

fn check_tool(function: &str, argument: &str, id: c_int, lowest: c_int) -> Result<(), c_int> {
    let count = tools().count();
    if id < lowest || id > count {
        let loaded = if count == 0 {
            "no tool is loaded (QMPI_TOOL_LIST is empty)".to_string()
        } else {
            format!("the loaded tools are {lowest}..={count}")
        };
        return Err(fail(
            ErrorClass::Arg,
            format!("{function}: {argument} {id} is not a tool id: {loaded}"),
        ));
    }
    Ok(())
}

fn check_index(function: &str, index: c_int) -> Result<usize, c_int> {
    if index < 0 || index as usize >= QMPI_FUNCTIONS {
        return Err(fail(
            ErrorClass::Arg,
            format!("{function}: function_enum {index} is not in enum QMPI_Functions_enum (0..{QMPI_FUNCTIONS})"),
        ));
    }
    Ok(index as usize)
}

fn null(function: &str, argument: &str) -> c_int {
    fail(ErrorClass::Arg, format!("{function}: {argument} is NULL"))
}

fn code(result: Result<(), c_int>) -> c_int {
    match result {
        Ok(()) => MPI_SUCCESS,
        Err(code) => code,
    }
}

/// # Safety
/// `tool_name` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn QMPI_Register_tool_name(
    tool_name: *const c_char,
    init_function_ptr: Option<extern "C" fn(c_int)>,
) -> c_int {
    const F: &str = "QMPI_Register_tool_name";
    if tool_name.is_null() {
        return null(F, "tool_name");
    }
    let Some(init) = init_function_ptr else {
        return null(F, "init_function_ptr");
    };
    // SAFETY: non-null, and the caller passes a NUL-terminated string (the contract above).
    let name = unsafe { CStr::from_ptr(tool_name) }.to_bytes();
    let t = tools();
    let mut found = false;
    for (slot, listed) in t.inits.iter().zip(&t.names) {
        if listed.as_slice() == name
            && slot
                .compare_exchange(0, init as usize, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            found = true;
        }
    }
    if found {
        return MPI_SUCCESS;
    }
    let shown = String::from_utf8_lossy(name);
    if t.names.iter().any(|listed| listed.as_slice() == name) {
        return fail(ErrorClass::Arg, format!("{F}: tool_name \"{shown}\" is already registered as often as QMPI_TOOL_LIST names it"));
    }
    fail(
        ErrorClass::Arg,
        format!(
            "{F}: tool_name \"{shown}\" is not named in QMPI_TOOL_LIST, so the tool is not loaded"
        ),
    )
}

#[no_mangle]
pub extern "C" fn QMPI_Register_tool_storage(tool_id: c_int, tool_storage: *mut c_void) -> c_int {
    code(
        check_tool("QMPI_Register_tool_storage", "tool_id", tool_id, 1).map(|()| {
            tools().storage[tool_id as usize].store(tool_storage as usize, Ordering::Release);
        }),
    )
}

#[no_mangle]
pub extern "C" fn QMPI_Register_function(
    calling_tool_id: c_int,
    function_enum: c_int,
    function_ptr: Option<extern "C" fn()>,
) -> c_int {
    const F: &str = "QMPI_Register_function";
    code((|| {
        check_tool(F, "calling_tool_id", calling_tool_id, 1)?;
        let index = check_index(F, function_enum)?;
        let t = tools();
        let f = function_ptr.map_or(0, |f| f as usize);
        t.functions[(calling_tool_id as usize - 1) * QMPI_FUNCTIONS + index]
            .store(f, Ordering::Release);
        // Registered after the tools started (outside an init callback): the chain changes now.
        if STARTED.load(Ordering::Acquire) == 2 {
            t.publish(index);
        }
        Ok(())
    })())
}

/// # Safety
/// `function_ptr` and `next_tool_id` are null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn QMPI_Get_function(
    calling_tool_id: c_int,
    function_enum: c_int,
    function_ptr: *mut usize,
    next_tool_id: *mut c_int,
) -> c_int {
    const F: &str = "QMPI_Get_function";
    if function_ptr.is_null() {
        return null(F, "function_ptr");
    }
    if next_tool_id.is_null() {
        return null(F, "next_tool_id");
    }
    let index = match check_tool(F, "calling_tool_id", calling_tool_id, 0)
        .and_then(|()| check_index(F, function_enum))
    {
        Ok(index) => index,
        Err(code) => return code,
    };
    let t = tools();
    let next = (calling_tool_id + 1..=t.count()).find_map(|id| {
        let f = t.function(id, index);
        (f != 0).then_some((id, f))
    });
    let builtin = BUILTIN.load(Ordering::Acquire);
    if next.is_none() && builtin.is_null() {
        return fail(ErrorClass::Other, format!("{F}: called before MPI loaded the tools (at the first MPI_Init, MPI_Initialized, ...)"));
    }
    // SAFETY: non-null only as qmpi.c's constant table of QMPI_FUNCTIONS entries; index < QMPI_FUNCTIONS.
    let (id, f) = next.unwrap_or_else(|| (0, unsafe { *builtin.add(index) }));
    // SAFETY: both are non-null and writable by the caller's contract.
    unsafe {
        function_ptr.write(f);
        next_tool_id.write(id);
    }
    MPI_SUCCESS
}

/// The C `QMPI_Context`, passed by value along a chain. Weft does not keep a storage stack in
/// it: the field holds the program's address that called the intercepted function.
#[repr(C)]
pub struct QmpiContext {
    storage_stack: *mut *mut c_void,
}

/// # Safety
/// `storage` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn QMPI_Get_tool_storage(
    _context: QmpiContext,
    tool_id: c_int,
    storage: *mut *mut c_void,
) -> c_int {
    const F: &str = "QMPI_Get_tool_storage";
    if storage.is_null() {
        return null(F, "storage");
    }
    if let Err(code) = check_tool(F, "tool_id", tool_id, 0) {
        return code;
    }
    let value = tools().storage[tool_id as usize].load(Ordering::Acquire) as *mut c_void;
    // SAFETY: non-null and writable by the caller's contract.
    unsafe { storage.write(value) };
    MPI_SUCCESS
}

/// The address in the program that called the MPI function a tool intercepts, as MPICH gives
/// it: a `malloc`ed string `0x...` the tool frees. The forwarder that started the chain put
/// its return address in the context (api/gen_qmpi.py), which the tools pass on unchanged.
///
/// # Safety
/// `address` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn QMPI_Get_calling_address(
    context: QmpiContext,
    address: *mut *mut c_void,
) -> c_int {
    const F: &str = "QMPI_Get_calling_address";
    if address.is_null() {
        return null(F, "address");
    }
    if context.storage_stack.is_null() {
        return fail(
            ErrorClass::Arg,
            format!("{F}: context is not one an intercepted MPI function passed to its tool"),
        );
    }
    let text = format!("{:p}\0", context.storage_stack);
    // SAFETY: a fresh allocation of text's length, filled with its bytes (NUL included).
    unsafe {
        let copy = libc::malloc(text.len()) as *mut u8;
        if copy.is_null() {
            return fail(ErrorClass::NoMem, format!("{F}: out of memory"));
        }
        std::ptr::copy_nonoverlapping(text.as_ptr(), copy, text.len());
        address.write(copy as *mut c_void);
    }
    MPI_SUCCESS
}
