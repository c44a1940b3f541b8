//! Handle -> object resolution for every kind, predefined handles included. Each resolver
//! returns the error class the standard asks for, with a message naming the function and
//! the argument.

use std::cell::RefCell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};

use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::instance::{calls_may_overlap, Instance};
use weft_core::mpi_err;
use weft_core::object::Session;
use weft_core::object::{Comm, Errhandler, Group, Info};
use weft_core::runtime::world;

use crate::constants::*;
use crate::ctypes::*;
use crate::handles::{BadHandle, Kind, Table};
use crate::win_object::WinObject;

pub static COMMS: Table<Comm> = Table::new(Kind::Comm);
pub use crate::errhandler_handles::ERRHANDLERS;
pub static INFOS: Table<Info> = Table::new(Kind::Info);
pub static GROUPS: Table<Group> = Table::new(Kind::Group);

static GROUP_EMPTY: LazyLock<Arc<Group>> = LazyLock::new(|| Arc::new(Group::empty()));
pub static SESSIONS: Table<Session> = Table::new(Kind::Session);
pub static WINS: Table<WinObject> = Table::new(Kind::Win);

static FATAL: LazyLock<Arc<Errhandler>> = LazyLock::new(|| Arc::new(Errhandler::FATAL));
static ABORT: LazyLock<Arc<Errhandler>> = LazyLock::new(|| Arc::new(Errhandler::ABORT));
static RETURN: LazyLock<Arc<Errhandler>> = LazyLock::new(|| Arc::new(Errhandler::RETURN));

fn bad(
    class: ErrorClass,
    func: &str,
    arg: &str,
    what: &str,
    handle: usize,
    why: BadHandle,
) -> MpiError {
    MpiError::new(
        class,
        format!("{func}({arg}={handle:#x}): {what} {}", why.describe()),
    )
}

/// The communicator a handle names (`MPI_COMM_NULL` is invalid here).
pub fn comm(handle: MPI_Comm, func: &str, arg: &str) -> MpiResult<Arc<Comm>> {
    match handle {
        MPI_COMM_WORLD => Ok(world::get(func)?.world.clone()),
        MPI_COMM_SELF => Ok(world::get(func)?.self_comm.clone()),
        MPI_COMM_NULL => Err(mpi_err!(
            Comm,
            "{func}({arg}=MPI_COMM_NULL): a valid communicator is required"
        )),
        _ => {
            let c = user_comm(handle, func, arg)?;
            resolved(&c, func)?;
            Ok(c)
        }
    }
}

/// `comm` for calls that only read or set what the communicator object keeps (size, rank,
/// groups, name, errhandler, attributes, info, topology): `MPI_Comm_idup`'s communicator is
/// taken as it is while its context id is still being agreed (MPICH accepts these calls
/// there, and mpi4py sets the errhandler right after `MPI_Comm_idup`).
pub fn comm_local(handle: MPI_Comm, func: &str, arg: &str) -> MpiResult<Arc<Comm>> {
    match handle {
        MPI_COMM_WORLD | MPI_COMM_SELF | MPI_COMM_NULL => comm(handle, func, arg),
        _ => {
            let c = user_comm(handle, func, arg)?;
            if !c.refuses_early_use() {
                resolved(&c, func)?;
            }
            Ok(c)
        }
    }
}

/// `comm_local`, or the thread communicator `handle` names when this thread is one of its
/// ranks now (the calls that act on the communicator object alone: errhandlers).
pub fn comm_local_or_thread(handle: MPI_Comm, func: &str, arg: &str) -> MpiResult<Arc<Comm>> {
    match crate::thread_ranks::comm(handle) {
        Some(c) => Ok(c),
        None => comm_local(handle, func, arg),
    }
}

/// A user communicator from the table, as it is (perhaps not resolved yet).
/// A thread communicator is refused here (`thread_ranks::misuse`): the calls that handle one
/// route it before looking the handle up, or use `comm_any`.
fn user_comm(handle: MPI_Comm, func: &str, arg: &str) -> MpiResult<Arc<Comm>> {
    let c = comm_any(handle, func, arg)?;
    if c.thread.is_some() {
        return Err(crate::thread_ranks::misuse(handle, func));
    }
    Ok(c)
}

/// Any user communicator the handle names, thread communicators included.
pub fn comm_any(handle: MPI_Comm, func: &str, arg: &str) -> MpiResult<Arc<Comm>> {
    COMMS
        .get(handle)
        .map_err(|why| bad(ErrorClass::Comm, func, arg, "communicator:", handle, why))
}

/// `comm` for releasing a communicator: waits until its context-id agreement settled (so no
/// agreement outlives the handle) but also accepts one whose agreement failed.
pub fn comm_settled(handle: MPI_Comm, func: &str, arg: &str) -> MpiResult<Arc<Comm>> {
    match handle {
        MPI_COMM_WORLD | MPI_COMM_SELF | MPI_COMM_NULL => comm(handle, func, arg),
        _ => {
            let c = user_comm(handle, func, arg)?;
            if c.refuses_early_use() && !c.is_settled() {
                return Err(not_yet(func));
            }
            // A failed agreement is this communicator's last news; freeing it is fine.
            let _ = c.resolve();
            Ok(c)
        }
    }
}

/// Wait, if needed, until a communicator from `MPI_Comm_create_from_group` has its context
/// id (agreed in the progress engine after that call returned); its error if the agreement
/// failed. `MPI_Comm_idup`'s communicator is refused until then instead. Every
/// communicator handed to the core goes through here first.
#[inline]
fn resolved(c: &Comm, func: &str) -> MpiResult<()> {
    if c.is_resolved() {
        return Ok(());
    }
    if c.refuses_early_use() && !c.is_settled() {
        return Err(not_yet(func));
    }
    c.resolve().map_err(|e| MpiError {
        message: format!("{func}(comm): {}", e.message),
        ..e
    })
}

/// The error for a use of `MPI_Comm_idup`'s communicator before its request completed.
#[cold]
fn not_yet(func: &str) -> MpiError {
    mpi_err!(
        Comm,
        "{func}(comm): the communicator from MPI_Comm_idup is not yet available (its \
             context id is still being agreed): complete the MPI_Comm_idup request first"
    )
}

/// A communicator borrowed for one call: the predefined ones without touching a reference
/// count (they live as long as the world); user ones the same way while calls cannot overlap
/// (below `MPI_THREAD_MULTIPLE`) or when the program serialises the communicator itself (a
/// stream communicator, whatever the thread level), else through the handle table's `Arc`.
pub struct CommRef {
    /// The communicator, inside the `Arc` that `hold` says keeps it alive. Two words in all,
    /// so a `CommRef` (and `Option<CommRef>`) travels in registers, and dereferencing it is
    /// one load, whatever the kind.
    comm: NonNull<Comm>,
    hold: Hold,
}

/// What keeps a `CommRef`'s communicator alive.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// A predefined communicator: the world, which lives until the process exits.
    Static,
    /// A user communicator in the handle table, borrowed without a count (see `BORROWED`).
    Borrowed,
    /// A stream communicator borrowed without a count: its own borrow count
    /// (`StreamMap::borrows`) keeps it from being dropped (see `release_comm`).
    Serial,
    /// A count of its own: `comm` came from `Arc::into_raw` and is given back on drop.
    Owned,
}

/// User communicators borrowed (`Hold::Borrowed`) and not released: non-zero while a
/// blocking call runs a callback that frees a communicator. Borrows happen only while calls
/// cannot overlap (one thread in the library at a time), so a load and a store suffice: no
/// read-modify-write and no thread-local lookup (a function call in a shared library).
static BORROWED: AtomicU32 = AtomicU32::new(0);

fn borrowed_add(delta: i32) {
    let now = BORROWED.load(Ordering::Relaxed);
    BORROWED.store(now.wrapping_add_signed(delta), Ordering::Relaxed);
}

/// A stream communicator's borrows (`Hold::Serial`). Its user serialises its calls, so a
/// load and a store suffice here too.
fn serial_borrows_add(c: &Comm, delta: i32) {
    if let Some(s) = &c.streams {
        let now = s.borrows.load(Ordering::Relaxed);
        s.borrows
            .store(now.wrapping_add_signed(delta), Ordering::Relaxed);
    }
}

/// Communicator handles whose VCI field carries this mark name stream communicators to
/// which this process attached a stream (`comm_handle`): calls on them borrow without a
/// lock or a reference count at every thread level, since the program promises to use each
/// stream from one thread at a time.
const SERIAL_MARK: u8 = 1;

#[inline(always)]
fn is_serial_handle(handle: MPI_Comm) -> bool {
    crate::handles::decode(handle).is_some_and(|d| d.vci == SERIAL_MARK)
}

/// Communicator handles whose VCI field carries this mark name thread communicators
/// (`comm_handle`), so that the hot point-to-point entry points route them to the `thread`
/// transport before any lookup (`is_thread_handle`: a shift and a compare).
const THREAD_MARK: u8 = 2;

/// Whether `handle` names a thread communicator (live or not: the callers still look it up).
#[inline(always)]
pub fn is_thread_handle(handle: MPI_Comm) -> bool {
    crate::handles::decode(handle).is_some_and(|d| d.vci == THREAD_MARK)
}

/// Freed communicators that a borrowing call on this thread may still be using; dropped by
/// the next `MPI_Comm_free` that holds no borrow (callbacks freeing communicators are rare).
static FREED_WHILE_BORROWED: Mutex<Vec<Arc<Comm>>> = Mutex::new(Vec::new());

impl std::ops::Deref for CommRef {
    type Target = Comm;
    #[inline]
    fn deref(&self) -> &Comm {
        // SAFETY: `comm` points into an `Arc` that `hold` keeps alive for as long as `self`.
        unsafe { self.comm.as_ref() }
    }
}

impl CommRef {
    #[inline(always)]
    fn of_static(comm: &'static Arc<Comm>) -> CommRef {
        CommRef {
            comm: NonNull::from(&**comm),
            hold: Hold::Static,
        }
    }

    fn owned(comm: Arc<Comm>) -> CommRef {
        CommRef {
            // SAFETY: `Arc::into_raw` never returns null.
            comm: unsafe { NonNull::new_unchecked(Arc::into_raw(comm).cast_mut()) },
            hold: Hold::Owned,
        }
    }

    /// A counted reference, for a communicator an operation keeps beyond the call.
    pub fn to_arc(&self) -> Arc<Comm> {
        let raw = self.comm.as_ptr().cast_const();
        // The world's, the handle table's or this reference's own `Arc` holds `raw`.
        // SAFETY: `raw` is the object of a live `Arc`, so one more count on it is valid.
        unsafe {
            Arc::increment_strong_count(raw);
            Arc::from_raw(raw)
        }
    }
}

impl Drop for CommRef {
    #[inline]
    fn drop(&mut self) {
        match self.hold {
            Hold::Static => {}
            Hold::Borrowed => borrowed_add(-1),
            Hold::Serial => serial_borrows_add(self, -1),
            // SAFETY: an owned `comm` came from `Arc::into_raw` and is released once, here.
            Hold::Owned => drop(unsafe { Arc::from_raw(self.comm.as_ptr().cast_const()) }),
        }
    }
}

/// `comm` for the hot paths (send, receive): same checks and errors, no reference count or
/// lock unless calls may overlap.
pub fn comm_ref(handle: MPI_Comm, func: &str, arg: &str) -> MpiResult<CommRef> {
    match handle {
        MPI_COMM_WORLD => Ok(CommRef::of_static(&world::get(func)?.world)),
        MPI_COMM_SELF => Ok(CommRef::of_static(&world::get(func)?.self_comm)),
        MPI_COMM_NULL => comm(handle, func, arg).map(CommRef::owned),
        // A handle the borrow refuses goes through `comm`, which says why.
        _ if !calls_may_overlap() => {
            borrow_user_comm(handle).or_else(|_| comm(handle, func, arg).map(CommRef::owned))
        }
        _ if is_serial_handle(handle) => {
            borrow_serial_comm(handle).or_else(|_| comm(handle, func, arg).map(CommRef::owned))
        }
        _ => comm(handle, func, arg).map(CommRef::owned),
    }
}

/// `comm_ref` for fast paths: `None` instead of an error (the general path then reports it).
#[inline(always)]
pub fn comm_ref_quiet(handle: MPI_Comm) -> Option<CommRef> {
    match handle {
        MPI_COMM_WORLD => Some(CommRef::of_static(&world::get_initialized()?.world)),
        MPI_COMM_SELF => Some(CommRef::of_static(&world::get_initialized()?.self_comm)),
        _ if handle >= crate::handles::FIRST_USER_HANDLE && !calls_may_overlap() => {
            borrow_user_comm(handle).ok()
        }
        _ if is_serial_handle(handle) => borrow_serial_comm(handle).ok(),
        _ => None,
    }
}

/// The communicator a handle names, for a fast path that runs no user code and never waits
/// (an eager send into a peer's ring): nothing can free the communicator meanwhile, so not
/// even the borrow count of `comm_ref_quiet` is taken. `None` where `comm_ref_quiet` says
/// `None`, and for a communicator whose context id is not agreed yet.
///
/// # Safety
/// While the reference is used, the caller runs no user code (callbacks) and does not wait
/// for other processes (which runs the progress engine).
#[inline(always)]
pub unsafe fn comm_quiet_unchecked<'a>(handle: MPI_Comm) -> Option<&'a Comm> {
    match handle {
        MPI_COMM_WORLD => Some(&world::get_initialized()?.world),
        MPI_COMM_SELF => Some(&world::get_initialized()?.self_comm),
        _ if !calls_may_overlap() || is_serial_handle(handle) => {
            // No other thread is in MPI (thread level below MULTIPLE), or none uses this stream
            // communicator (the program serialises it: the streams contract).
            // SAFETY: by the caller's contract nothing on this thread frees it meanwhile.
            let c = unsafe { COMMS.borrow(handle) }.ok()?;
            c.is_resolved().then_some(c)
        }
        _ => None,
    }
}

/// A user communicator borrowed without lock or reference count; only while calls cannot
/// overlap (the caller checks `calls_may_overlap`).
#[inline(always)]
fn borrow_user_comm(handle: MPI_Comm) -> Result<CommRef, BadHandle> {
    // A communicator freed while this thread borrows one is kept alive (`release_comm`).
    // SAFETY: no other thread is in MPI (thread level below MULTIPLE, checked by the callers).
    let c = unsafe { COMMS.borrow(handle) }?;
    if !c.is_resolved() {
        wait_resolved(c)?;
    }
    borrowed_add(1);
    Ok(CommRef {
        comm: NonNull::from(c),
        hold: Hold::Borrowed,
    })
}

/// A stream communicator borrowed without lock or reference count (the caller checked the
/// handle's mark): its own borrow count keeps a free from dropping it meanwhile.
#[inline(always)]
fn borrow_serial_comm(handle: MPI_Comm) -> Result<CommRef, BadHandle> {
    // No other thread frees it while this call runs, and a free on this thread (in a callback)
    // keeps it alive while it is borrowed (`release_comm`):
    // SAFETY: the program uses this communicator from one thread at a time (the streams contract).
    let c = unsafe { COMMS.borrow(handle) }?;
    if !c.is_resolved() {
        wait_resolved(c)?;
    }
    serial_borrows_add(c, 1);
    Ok(CommRef {
        comm: NonNull::from(c),
        hold: Hold::Serial,
    })
}

/// The wait of `borrow_user_comm` for a communicator whose context id is not agreed yet; a
/// failed agreement, or `MPI_Comm_idup`'s communicator before it has its id, refuses the
/// borrow (the general path, `comm`, then reports it).
#[cold]
#[inline(never)]
fn wait_resolved(c: &Comm) -> Result<(), BadHandle> {
    if c.refuses_early_use() && !c.is_settled() {
        return Err(BadHandle::Invalid);
    }
    c.resolve().map_err(|_| BadHandle::Invalid)
}

/// Let go of a communicator removed from the table by `MPI_Comm_free`/`disconnect`. If a
/// call on this thread may still be borrowing it (the free ran inside a callback of that
/// call), it is kept until a later free finds no borrow.
pub fn release_comm(comm: Arc<Comm>) {
    let mut freed = FREED_WHILE_BORROWED
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    freed.push(comm);
    if BORROWED.load(Ordering::Relaxed) == 0 {
        // Stream communicators still borrowed (by a call whose callback freed them) stay.
        let (kept, drained): (Vec<_>, Vec<_>) =
            std::mem::take(&mut *freed).into_iter().partition(|c| {
                c.streams
                    .as_ref()
                    .is_some_and(|s| s.borrows.load(Ordering::Relaxed) != 0)
            });
        *freed = kept;
        drop(freed);
        drop(drained);
    }
}

/// The communicator a handle names, without requiring an initialized world for user
/// communicators or failing (used to find the errhandler of a failed call).
pub fn comm_for_errors(handle: MPI_Comm) -> Option<Arc<Comm>> {
    let w = world::get_any();
    match handle {
        MPI_COMM_WORLD => w.map(|w| w.world.clone()),
        MPI_COMM_SELF => w.map(|w| w.self_comm.clone()),
        _ => COMMS.get(handle).ok(),
    }
}

/// The errhandler a handle names.
pub fn errhandler(handle: MPI_Errhandler, func: &str, arg: &str) -> MpiResult<Arc<Errhandler>> {
    match handle {
        MPI_ERRORS_ARE_FATAL => Ok(FATAL.clone()),
        MPI_ERRORS_ABORT => Ok(ABORT.clone()),
        MPI_ERRORS_RETURN => Ok(RETURN.clone()),
        MPI_ERRHANDLER_NULL => Err(mpi_err!(
            Arg,
            "{func}({arg}=MPI_ERRHANDLER_NULL): a valid errhandler is required"
        )),
        _ => ERRHANDLERS
            .get(handle)
            .map_err(|why| bad(ErrorClass::Arg, func, arg, "errhandler:", handle, why)),
    }
}

/// A handle for an errhandler object: the predefined value for predefined ones, else its
/// handle with one more reference (each `MPI_Comm_get_errhandler` returns a handle the caller
/// must free; `errhandler_handles.rs`).
pub fn errhandler_handle(errhandler: &Arc<Errhandler>) -> MPI_Errhandler {
    use weft_core::object::ErrhandlerAction::*;
    match errhandler.action {
        Fatal => MPI_ERRORS_ARE_FATAL,
        Abort => MPI_ERRORS_ABORT,
        Return => MPI_ERRORS_RETURN,
        User { .. } => crate::errhandler_handles::get(errhandler),
    }
}

/// Whether a handle is one of the predefined errhandlers (they are never freed).
pub fn is_predefined_errhandler(handle: MPI_Errhandler) -> bool {
    matches!(
        handle,
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT | MPI_ERRORS_RETURN
    )
}

/// The session a handle names.
pub fn session(handle: MPI_Session, func: &str, arg: &str) -> MpiResult<Arc<Session>> {
    if handle == MPI_SESSION_NULL {
        return Err(mpi_err!(
            Session,
            "{func}({arg}=MPI_SESSION_NULL): a valid session is required"
        ));
    }
    SESSIONS
        .get(handle)
        .map_err(|why| bad(ErrorClass::Session, func, arg, "session:", handle, why))
}

/// The window a handle names (`MPI_WIN_NULL` is invalid here).
pub fn win(handle: MPI_Win, func: &str, arg: &str) -> MpiResult<Arc<WinObject>> {
    if handle == MPI_WIN_NULL {
        return Err(mpi_err!(
            Win,
            "{func}({arg}=MPI_WIN_NULL): a valid window is required"
        ));
    }
    WINS.get(handle)
        .map_err(|why| bad(ErrorClass::Win, func, arg, "window:", handle, why))
}

/// The group a handle names (`MPI_GROUP_EMPTY` included, `MPI_GROUP_NULL` invalid).
pub fn group(handle: MPI_Group, func: &str, arg: &str) -> MpiResult<Arc<Group>> {
    match handle {
        MPI_GROUP_EMPTY => Ok(GROUP_EMPTY.clone()),
        MPI_GROUP_NULL => Err(mpi_err!(
            Group,
            "{func}({arg}=MPI_GROUP_NULL): a valid group is required"
        )),
        _ => GROUPS
            .get(handle)
            .map_err(|why| bad(ErrorClass::Group, func, arg, "group:", handle, why)),
    }
}

/// A handle for a new group (`MPI_GROUP_EMPTY` for an empty one).
pub fn group_handle(group: Group) -> MPI_Group {
    if group.is_empty() {
        MPI_GROUP_EMPTY
    } else {
        GROUPS.insert(Arc::new(group))
    }
}

/// A handle for a new communicator, or `MPI_COMM_NULL`.
pub fn comm_handle(comm: Option<Arc<Comm>>) -> MPI_Comm {
    match comm {
        Some(c) if c.thread.is_some() => COMMS.insert_on_vci(c, THREAD_MARK),
        Some(c) if c.is_serial() => COMMS.insert_on_vci(c, SERIAL_MARK),
        Some(c) => COMMS.insert(c),
        None => MPI_COMM_NULL,
    }
}

thread_local! {
    /// This thread's view of the live instance (for sessions-only programs), valid while the
    /// instance epoch is unchanged. Weak, so that it never keeps a finalized instance alive.
    static LIVE: RefCell<(u64, Weak<Instance>)> = const { RefCell::new((u64::MAX, Weak::new())) };
}

/// The live instance without the process-wide lock: the cached weak reference if the
/// instance has not changed since, else a fresh look.
fn live_instance() -> Option<Arc<Instance>> {
    let epoch = Instance::live_epoch();
    LIVE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.0 == epoch {
            if let Some(instance) = cache.1.upgrade() {
                return Some(instance);
            }
        }
        let live = Instance::live();
        *cache = (epoch, live.as_ref().map_or_else(Weak::new, Arc::downgrade));
        live
    })
}

/// The live instance for one call: the world's without touching a reference count.
pub enum InstanceRef {
    World(&'static Arc<weft_core::instance::Instance>),
    Live(Arc<weft_core::instance::Instance>),
}

impl std::ops::Deref for InstanceRef {
    type Target = Arc<weft_core::instance::Instance>;
    fn deref(&self) -> &Arc<weft_core::instance::Instance> {
        match self {
            InstanceRef::World(i) => i,
            InstanceRef::Live(i) => i,
        }
    }
}

/// The instance requests and buffers belong to: the world's once `MPI_Init` ran (no lock),
/// else the live sessions' instance. The world's takes one load of the world's state, inlined
/// (it took three calls: callgrind, `MPI_Wait` of a completed 8-byte send 203 -> 135).
#[inline]
pub fn instance(func: &str) -> MpiResult<InstanceRef> {
    match world::get_initialized() {
        Some(w) => Ok(InstanceRef::World(&w.session.instance)),
        None => session_instance(func),
    }
}

/// `instance` outside `MPI_Init` .. `MPI_Finalize`: the live sessions' instance.
#[inline(never)]
fn session_instance(func: &str) -> MpiResult<InstanceRef> {
    live_instance().map(InstanceRef::Live).ok_or_else(|| {
        mpi_err!(
            Other,
            "{func}: called before MPI_Init or MPI_Session_init (or after finalize)"
        )
    })
}

/// The info object a handle names (`MPI_INFO_ENV` included).
pub(crate) fn info_object(handle: MPI_Info, func: &str) -> MpiResult<Arc<Info>> {
    if handle == MPI_INFO_ENV {
        return Ok(crate::env_info::INFO_ENV.clone());
    }
    if handle == MPI_INFO_NULL {
        return Err(mpi_err!(
            Info,
            "{func}(info=MPI_INFO_NULL): a valid info object is required"
        ));
    }
    INFOS
        .get(handle)
        .map_err(|why| mpi_err!(Info, "{func}(info={handle:#x}): {}", why.describe()))
}

/// Store a new communicator (or `MPI_COMM_NULL`) in an output argument checked beforehand.
pub(crate) unsafe fn out_comm(out: *mut MPI_Comm, c: Option<Arc<Comm>>) {
    let h = comm_handle(c);
    // SAFETY: the caller checked `out` for null.
    unsafe { out.write(h) };
}
