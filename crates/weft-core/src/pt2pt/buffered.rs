//! Buffered sends (`MPI_Bsend`, `MPI_Ibsend`, `MPI_Bsend_init`): the bookkeeping of attached
//! buffers. A buffered send copies its message into free space of the buffer that applies
//! (the communicator's, else the session's, else the process's) and sends from there; the
//! space is reused once that internal send completes. The ABI layer does the copy (it alone
//! can address the user's buffer); this module decides where it goes and tracks the sends.
//!
//! Space is charged per message as its size rounded up to 16 bytes plus `OVERHEAD`, which is
//! below the ABI's `MPI_BSEND_OVERHEAD` (512), so a buffer sized by the standard's rule always
//! suffices. The per-message records live outside the user's buffer, bounded by its size.
//!
//! Session buffers (`MPI_Session_attach_buffer`) are consulted between the communicator's and
//! the process's.
#![forbid(unsafe_code)]

use std::sync::{Arc, Mutex, MutexGuard, Weak};

use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::instance::Instance;
use crate::message::Status;
use crate::object::Comm;
use crate::object::Session;
use crate::progress;
use crate::request::grequest::GreqClass;
use crate::request::ReqId;

/// Bytes charged per message on top of its rounded size.
pub const OVERHEAD: usize = 64;

/// A message's share of the buffer.
pub fn charge(len: usize) -> usize {
    len.div_ceil(16) * 16 + OVERHEAD
}

/// Which attachment a buffer belongs to.
#[derive(Clone, Debug)]
pub enum Scope {
    Process,
    Comm(Arc<Comm>),
    /// `MPI_Session_attach_buffer`: used by communicators derived from the session.
    Session(Arc<Session>),
}

/// Where a message's copy lives.
#[derive(Debug)]
pub enum Space {
    /// `offset` bytes into the attached buffer.
    Offset(usize),
    /// A heap block of its own (`MPI_BUFFER_AUTOMATIC`).
    Heap(Box<[u8]>),
}

struct Segment {
    offset: usize,
    charge: usize,
    req: ReqId,
    /// The heap copy of an automatic buffer's message, freed with the record.
    _heap: Option<Box<[u8]>>,
}

/// An attached buffer.
pub struct Pool {
    /// The user's buffer (`addr`, `size`), or `None` for `MPI_BUFFER_AUTOMATIC`.
    pub region: Option<(usize, usize)>,
    segments: Vec<Segment>,
}

impl Pool {
    /// Release the records of completed sends. Returns whether any remain.
    fn reclaim(&mut self, inst: &Instance) -> bool {
        self.segments
            .retain(|s| progress::take_if_complete(inst, s.req).is_none());
        !self.segments.is_empty()
    }

    /// The first gap of `need` bytes, segments kept sorted by offset.
    fn find_gap(&self, need: usize) -> Option<usize> {
        let (_, size) = self.region?;
        let mut at = 0;
        for s in &self.segments {
            if s.offset - at >= need {
                return Some(at);
            }
            at = s.offset + s.charge;
        }
        (size.saturating_sub(at) >= need).then_some(at)
    }

    /// Room for a message of `len` bytes: reclaim completed sends, progress once if needed.
    pub fn reserve(&mut self, inst: &Instance, len: usize, func: &str) -> MpiResult<Space> {
        let Some((_, size)) = self.region else {
            self.reclaim(inst);
            return Ok(Space::Heap(vec![0u8; len].into_boxed_slice()));
        };
        let need = charge(len);
        for attempt in 0..2 {
            self.reclaim(inst);
            if let Some(at) = self.find_gap(need) {
                return Ok(Space::Offset(at));
            }
            if attempt == 0 {
                progress::poke_all(inst);
            }
        }
        Err(MpiError::new(
            ErrorClass::Buffer,
            format!(
                "{func}: the attached buffer ({size} bytes) has no room for a message of {len} bytes \
                 (each buffered message needs its size + MPI_BSEND_OVERHEAD)"
            ),
        ))
    }

    /// Record the send `req` that now uses `space` for a message of `len` bytes.
    pub fn commit(&mut self, space: Space, len: usize, req: ReqId) {
        let (offset, heap) = match space {
            Space::Offset(o) => (o, None),
            Space::Heap(h) => (0, Some(h)),
        };
        let seg = Segment {
            offset,
            charge: if heap.is_some() { 0 } else { charge(len) },
            req,
            _heap: heap,
        };
        let at = self.segments.partition_point(|s| s.offset <= offset);
        self.segments.insert(at, seg);
    }

    /// Sends still using the buffer.
    pub fn pending(&self) -> Vec<ReqId> {
        self.segments.iter().map(|s| s.req).collect()
    }
}

/// A shared attached buffer.
pub type PoolRef = Arc<Mutex<Pool>>;

pub fn lock(pool: &PoolRef) -> MutexGuard<'_, Pool> {
    pool.lock().unwrap_or_else(|p| p.into_inner())
}

static PROCESS: Mutex<Option<PoolRef>> = Mutex::new(None);
static COMMS: Mutex<Vec<(Weak<Comm>, PoolRef)>> = Mutex::new(Vec::new());
static SESSIONS: Mutex<Vec<(Weak<Session>, PoolRef)>> = Mutex::new(Vec::new());

fn guard<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn comm_pool(comm: &Arc<Comm>) -> Option<PoolRef> {
    let mut list = guard(&COMMS);
    list.retain(|(w, _)| w.strong_count() > 0);
    list.iter()
        .find(|(w, _)| std::ptr::eq(w.as_ptr(), Arc::as_ptr(comm)))
        .map(|(_, p)| p.clone())
}

/// The buffer attached to `session`, if any.
fn session_pool(session: &Arc<Session>) -> Option<PoolRef> {
    let mut list = guard(&SESSIONS);
    list.retain(|(w, _)| w.strong_count() > 0);
    list.iter()
        .find(|(w, _)| std::ptr::eq(w.as_ptr(), Arc::as_ptr(session)))
        .map(|(_, p)| p.clone())
}

/// The buffer a buffered send on `comm` uses.
pub fn pool_for(comm: &Arc<Comm>, func: &str) -> MpiResult<PoolRef> {
    comm_pool(comm)
        .or_else(|| session_pool(&comm.session))
        .or_else(|| guard(&PROCESS).clone())
        .ok_or_else(|| {
            MpiError::new(
                ErrorClass::Buffer,
                format!(
                    "{func}: no buffer is attached (MPI_Buffer_attach or MPI_Comm_attach_buffer)"
                ),
            )
        })
}

fn already(func: &str) -> MpiError {
    MpiError::new(
        ErrorClass::Buffer,
        format!("{func}: a buffer is already attached"),
    )
}

/// Attach a buffer (`None` region: `MPI_BUFFER_AUTOMATIC`).
pub fn attach(scope: &Scope, region: Option<(usize, usize)>, func: &str) -> MpiResult<()> {
    let pool = Arc::new(Mutex::new(Pool {
        region,
        segments: Vec::new(),
    }));
    match scope {
        Scope::Process => {
            let mut p = guard(&PROCESS);
            if p.is_some() {
                return Err(already(func));
            }
            *p = Some(pool);
        }
        Scope::Comm(comm) => {
            if comm_pool(comm).is_some() {
                return Err(already(func));
            }
            guard(&COMMS).push((Arc::downgrade(comm), pool));
        }
        Scope::Session(session) => {
            if session_pool(session).is_some() {
                return Err(already(func));
            }
            guard(&SESSIONS).push((Arc::downgrade(session), pool));
        }
    }
    Ok(())
}

fn attached(scope: &Scope, func: &str) -> MpiResult<PoolRef> {
    let found = match scope {
        Scope::Process => guard(&PROCESS).clone(),
        Scope::Comm(comm) => comm_pool(comm),
        Scope::Session(session) => session_pool(session),
    };
    found.ok_or_else(|| MpiError::new(ErrorClass::Buffer, format!("{func}: no buffer is attached")))
}

/// The request `MPI_Ibsend` returns (and a start of `MPI_Bsend_init` runs) for the internal
/// send `sender` of a buffered message: complete at once, and cancellable with the message
/// (`vci::cancel::buffered_request`); `owner` as in `Request::owner`.
pub fn user_request(inst: &Instance, sender: ReqId, owner: usize) -> ReqId {
    let vci = sender.vci() as usize;
    let mut st = inst.vcis[vci].lock();
    let id = crate::vci::cancel::buffered_request(&mut st, sender, owner);
    drop(st);
    id.unwrap_or_else(|| progress::completed(inst, vci, Status::default(), owner))
}

/// Wait until every buffered send using `pool` has completed.
pub fn drain(inst: &Instance, pool: &PoolRef) {
    let mut backoff = inst.backoff();
    while lock(pool).reclaim(inst) {
        backoff.idle();
    }
}

/// `MPI_Buffer_flush` and friends: wait for the buffer's sends (the buffer stays attached).
pub fn flush(inst: &Instance, scope: &Scope, func: &str) -> MpiResult<()> {
    let pool = attached(scope, func)?;
    drain(inst, &pool);
    Ok(())
}

/// `MPI_Buffer_detach` and friends: wait for the buffer's sends, then detach it. Returns the
/// region (`None`: it was `MPI_BUFFER_AUTOMATIC`).
pub fn detach(inst: &Instance, scope: &Scope, func: &str) -> MpiResult<Option<(usize, usize)>> {
    let pool = attached(scope, func)?;
    drain(inst, &pool);
    match scope {
        Scope::Process => *guard(&PROCESS) = None,
        Scope::Comm(comm) => {
            guard(&COMMS).retain(|(w, _)| !std::ptr::eq(w.as_ptr(), Arc::as_ptr(comm)))
        }
        Scope::Session(session) => {
            guard(&SESSIONS).retain(|(w, _)| !std::ptr::eq(w.as_ptr(), Arc::as_ptr(session)))
        }
    }
    let region = lock(&pool).region;
    Ok(region)
}

/// The generalized-request class of `MPI_Buffer_iflush`: complete once the sends pending
/// at the call have completed.
struct Iflush {
    inst: Arc<Instance>,
    reqs: Mutex<Vec<ReqId>>,
    pool: PoolRef,
    id: std::sync::OnceLock<ReqId>,
}

impl GreqClass for Iflush {
    fn query(&self, _state: usize) -> Status {
        Status::default()
    }
    fn free(&self, _state: usize) -> i32 {
        0
    }
    fn cancel(&self, _state: usize, _complete: bool) -> i32 {
        0
    }
    fn has_poll(&self) -> bool {
        true
    }
    fn poll(&self, _state: usize) -> i32 {
        let mut reqs = guard(&self.reqs);
        progress::poke_all(&self.inst);
        // Those still recorded in the pool are pending (the pool reclaims completed ones).
        let remaining = {
            let mut p = lock(&self.pool);
            p.reclaim(&self.inst);
            p.pending()
        };
        reqs.retain(|r| remaining.contains(r));
        if reqs.is_empty() {
            if let Some(&id) = self.id.get() {
                let _ = progress::greq::complete(&self.inst, id, "MPI_Buffer_iflush");
            }
        }
        0
    }
    fn has_wait(&self) -> bool {
        false
    }
    fn wait(&self, _states: &[usize], _timeout: f64) -> i32 {
        0
    }
}

/// `MPI_Buffer_iflush` and friends: a request completing when the sends pending now have.
pub fn iflush(inst: &Arc<Instance>, scope: &Scope, owner: usize, func: &str) -> MpiResult<ReqId> {
    let pool = attached(scope, func)?;
    let reqs = lock(&pool).pending();
    let class = Arc::new(Iflush {
        inst: inst.clone(),
        reqs: Mutex::new(reqs),
        pool,
        id: std::sync::OnceLock::new(),
    });
    let id = progress::greq::start(inst, class.clone(), 0, owner);
    let _ = class.id.set(id);
    Ok(id)
}
