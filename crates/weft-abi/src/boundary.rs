//! Crossing the C boundary: every generated entry point runs its implementation through
//! `call`, which catches panics (they never unwind into C), turns errors into codes and
//! invokes the errhandler of the object the call was made on.

use std::cell::{Cell, RefCell};
use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::instance;
use weft_core::mpi_err;
use weft_core::object::{Errhandler, ErrhandlerAction, ErrhandlerKind};
use weft_core::runtime::world;

use crate::constants::MPI_SUCCESS;
use crate::ctypes::*;
use crate::{error_codes, objects};

/// The object whose errhandler handles a failure of a call.
#[derive(Clone, Copy, Debug)]
pub enum Scope {
    /// No object: `MPI_COMM_SELF`'s errhandler once initialized, else fatal.
    Default,
    Comm(MPI_Comm),
    Win(MPI_Win),
    File(MPI_File),
    Session(MPI_Session),
    /// An errhandler given as an argument (`MPI_Session_init`, `MPI_Comm_create_from_group`):
    /// the call fails before the object it is meant for exists.
    Errhandler(MPI_Errhandler),
}

thread_local! {
    /// Set by an implementation whose error belongs to another object than the call's
    /// arguments show (a request's communicator in `MPI_Wait`).
    static SCOPE_OVERRIDE: Cell<Option<Scope>> = const { Cell::new(None) };
}

/// Report the error the current call is about to return on `scope`'s errhandler.
pub fn raise_on(scope: Scope) {
    SCOPE_OVERRIDE.with(|s| s.set(Some(scope)));
}

/// The handle behind a pointer argument, or 0 (no object) for a null pointer: the object a
/// releasing call (`MPI_Comm_free`, `MPI_Session_finalize`, ...) reports errors on.
///
/// # Safety
/// `ptr` is null or points to a readable handle (the standard's contract for these
/// arguments).
pub unsafe fn read_handle(ptr: *mut usize) -> usize {
    if ptr.is_null() {
        0
    } else {
        // SAFETY: non-null, so readable per the contract.
        unsafe { ptr.read() }
    }
}

/// The object whose errhandler reports a completed request's error: its owner, a file
/// handle (nonblocking file accesses) or a communicator handle (everything else).
pub fn owner_scope(owner: usize) -> Scope {
    if crate::handles::is_user_handle_of(owner, crate::handles::Kind::File) {
        Scope::File(owner)
    } else {
        Scope::Comm(owner)
    }
}

/// Forget a `raise_on` (the call got past the point where it applied).
pub fn clear_raise_on() {
    SCOPE_OVERRIDE.with(|s| s.set(None));
}

/// Run an implementation that returns success or an error. `WEFT_STATS`/`WEFT_TRACE` cost
/// nothing here: while they are on, the measuring wrappers of qmpi.rs stand first in every
/// `MPI_X` chain (the `MPI_X` forwarders already test for a chain).
#[inline(always)]
pub fn call(name: &'static str, scope: Scope, body: impl FnOnce() -> MpiResult<()>) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => MPI_SUCCESS,
        Ok(Err(err)) => {
            let scope = SCOPE_OVERRIDE.with(|s| s.take()).unwrap_or(scope);
            raise(scope, err)
        }
        Err(panic) => {
            SCOPE_OVERRIDE.with(|s| s.take());
            raise(scope, internal_error(name, panic.as_ref()))
        }
    }
}

thread_local! {
    /// The measured MPI calls this thread is inside, innermost last (a callback may call MPI
    /// again); as long as the deepest nesting of calls.
    static OPEN: RefCell<Vec<Probe>> = const { RefCell::new(Vec::new()) };
}

/// An MPI call being measured: an outermost call's duration adds to the time in MPI
/// (`WEFT_STATS`), and every call is a trace event (`WEFT_TRACE`).
pub(crate) struct Probe {
    timed: Option<std::time::Instant>,
    traced: Option<u64>,
}

impl Probe {
    /// Only the clocks that are needed: a traced call reads the wall clock twice, a timed
    /// outermost call the monotonic clock twice.
    #[cold]
    #[inline(never)]
    pub(crate) fn start() {
        OPEN.with(|open| {
            let mut open = open.borrow_mut();
            let outermost = open.is_empty();
            open.push(Probe {
                timed: (outermost && weft_core::stats::timing()).then(std::time::Instant::now),
                traced: weft_core::trace::on().then(weft_core::trace::now_ns),
            });
        });
    }

    /// The end of the innermost measured call (started by `start` in the same measuring
    /// link; an empty stack, which a panic in `start` would leave, ends nothing).
    #[cold]
    #[inline(never)]
    pub(crate) fn finish(name: &'static str, scope: Scope) {
        let Some(probe) = OPEN.with(|open| open.borrow_mut().pop()) else {
            return;
        };
        if let Some(start) = probe.timed {
            weft_core::stats::add_mpi_time(start.elapsed().as_nanos() as u64);
        }
        if let Some(ts) = probe.traced {
            let comm = match scope {
                Scope::Comm(c) => Some(c),
                _ => None,
            };
            weft_core::trace::record(name, ts, comm);
        }
    }
}

/// Run an MPI_T implementation: its error is returned as its class (MPI_T's classes are
/// returned as they are, never through an errhandler: MPI 4.1 §15.3.9), a panic as
/// `MPI_ERR_INTERN`.
pub fn tool_call(name: &'static str, body: impl FnOnce() -> MpiResult<()>) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => MPI_SUCCESS,
        Ok(Err(err)) => err.code,
        Err(panic) => {
            let err = internal_error(name, panic.as_ref());
            eprintln!("weft: {}", err.message);
            ErrorClass::Intern as c_int
        }
    }
}

/// Run an implementation that returns a value rather than an error code.
pub fn direct<T>(name: &'static str, body: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(panic) => {
            let err = internal_error(name, panic.as_ref());
            eprintln!("weft: fatal: {}", err.message);
            instance::abort_without_instance(ErrorClass::Intern as i32)
        }
    }
}

/// The entry point of a function Weft does not implement yet.
pub fn unsupported(name: &'static str, scope: Scope) -> c_int {
    raise(
        scope,
        mpi_err!(
            UnsupportedOperation,
            "{name}: not implemented in Weft yet (see weft-info)"
        ),
    )
}

fn internal_error(name: &str, panic: &(dyn std::any::Any + Send)) -> MpiError {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    mpi_err!(Intern, "{name}: internal error: {what}")
}

/// Hand an error to the errhandler of `scope` and return the code the call returns.
pub fn raise(scope: Scope, err: MpiError) -> c_int {
    let code = error_codes::encode(&err);
    let (errhandler, handle) = errhandler_for(scope);
    match errhandler.action {
        ErrhandlerAction::Return => code,
        ErrhandlerAction::Fatal | ErrhandlerAction::Abort => fatal(&err),
        ErrhandlerAction::User {
            kind,
            callback,
            extra_state,
        } => invoke_user(kind, callback, extra_state, handle, code),
    }
}

fn errhandler_for(scope: Scope) -> (Arc<Errhandler>, usize) {
    match scope {
        Scope::Comm(handle) => match objects::comm_for_errors(handle) {
            // A derived communicator on which no errhandler was ever chosen (see
            // `Comm::follows_default`); the predefined ones keep their own.
            Some(comm) if comm.follows_default() && !is_predefined_comm(handle) => {
                default_errhandler()
            }
            Some(comm) => (comm.errhandler(), handle),
            None => default_errhandler(),
        },
        Scope::Errhandler(handle) => match objects::errhandler(handle, "", "") {
            Ok(e) => (e, crate::constants::MPI_COMM_NULL),
            Err(_) => default_errhandler(),
        },
        Scope::Session(handle) => match objects::SESSIONS.get(handle) {
            Ok(session) => (session.errhandler(), handle),
            Err(_) => default_errhandler(),
        },
        Scope::Win(handle) => match objects::WINS.get(handle) {
            // No errhandler chosen for the window: see `Win::follows_default`.
            Ok(win) if win.follows_default() => default_errhandler(),
            Ok(win) => (win.errhandler(), handle),
            Err(_) => default_errhandler(),
        },
        // MPI_FILE_NULL (and a handle that names no open file): the default file
        // errhandler, MPI_ERRORS_RETURN unless the program set another (MPI 5.0 §9.3).
        Scope::File(handle) => match crate::file_object::FILES.get(handle) {
            Ok(file) => (file.errhandler(), handle),
            Err(_) => (
                weft_core::io::file::default_errhandler(),
                crate::constants::MPI_FILE_NULL,
            ),
        },
        Scope::Default => default_errhandler(),
    }
}

fn is_predefined_comm(handle: usize) -> bool {
    handle == crate::constants::MPI_COMM_WORLD || handle == crate::constants::MPI_COMM_SELF
}

/// The errhandler of an error tied to no (valid) communicator, window, file or session:
/// `MPI_COMM_SELF`'s (MPI 4.1 §2.8, §9.3) — unless the program never set one on
/// `MPI_COMM_SELF` but did set one on `MPI_COMM_WORLD`, which then applies, as it did up to
/// MPI 3.1 (MPICH 5 and Open MPI 5 do the same, and programs written for MPI 3 rely on it).
/// Before `MPI_Init` (or with sessions only): fatal.
fn default_errhandler() -> (Arc<Errhandler>, usize) {
    match world::get_any() {
        Some(w) if !w.self_comm.errhandler_was_set() && w.world.errhandler_was_set() => {
            (w.world.errhandler(), crate::constants::MPI_COMM_WORLD)
        }
        Some(w) => (w.self_comm.errhandler(), crate::constants::MPI_COMM_SELF),
        None => (Arc::new(Errhandler::FATAL), crate::constants::MPI_COMM_NULL),
    }
}

/// Report a fatal error and end the job.
fn fatal(err: &MpiError) -> ! {
    // Before the world exists (a bad WEFT_* value at init) the launcher's PMI_RANK says
    // which rank this is; a singleton has none.
    let rank = world::get_any()
        .map(|w| w.world.rank.to_string())
        .or_else(|| std::env::var("PMI_RANK").ok())
        .unwrap_or_else(|| "?".into());
    let text = if err.message.is_empty() {
        // A user-raised code (MPI_Comm_call_errhandler) carries no message: describe the code.
        error_codes::string_of(err.code).unwrap_or_else(|| format!("error code {}", err.code))
    } else {
        err.message.clone()
    };
    eprintln!("Weft fatal error on rank {rank}: {text}");
    if world::get_any().is_some_and(|w| w.session.instance.config.error_backtrace) {
        eprintln!("{}", std::backtrace::Backtrace::force_capture());
    }
    let code = ErrorClass::from_i32(err.class()).map_or(1, |c| c as i32);
    match world::get_any() {
        Some(w) => w.session.instance.abort_job(code, &text),
        None => instance::abort_without_instance(code),
    }
}

/// Call a user errhandler and return the code the failing call returns: the one the handler
/// left in its `int*` argument (as MPICH does: a handler may change it, e.g. to
/// `MPI_SUCCESS`). Every kind's function has the C shape `(handle*, int*, ...)`; the
/// `_x` kinds take the code by value, so their call returns it unchanged.
fn invoke_user(
    _kind: ErrhandlerKind,
    callback: usize,
    extra_state: Option<usize>,
    handle: usize,
    code: c_int,
) -> c_int {
    if let Some(state) = extra_state {
        let f: MPIX_Comm_errhandler_function_x =
            // All MPIX_*_create_errhandler_x functions take (handle, int, void*) callbacks.
            // SAFETY: `callback` was stored from a non-null function pointer by one of them.
            unsafe { std::mem::transmute::<usize, _>(callback) };
        // SAFETY: the user function receives the handle, the code and its own state.
        unsafe { f(handle, code, state as *mut c_void) };
        return code;
    }
    let mut handle = handle;
    let mut code = code;
    // All MPI_*_create_errhandler functions take (handle*, int*, ...) callbacks.
    // SAFETY: `callback` was stored from a non-null errhandler function pointer by one of them.
    let f: MPI_Comm_errhandler_function = unsafe { std::mem::transmute::<usize, _>(callback) };
    // SAFETY: the user function receives pointers to live locals, as the standard says.
    unsafe { f(&mut handle, &mut code) };
    code
}
