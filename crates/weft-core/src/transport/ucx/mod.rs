//! The `ucx` transport: messages between ranks on different nodes, over UCP's tagged API.
//!
//! One UCP worker per implicit VCI (a message for VCI `v` travels on worker `v % workers` and
//! carries `v` in its UCP tag); each worker sits behind its own mutex, taken only by the VCI
//! that uses it. A message is the protocol's wire header followed by its payload, sent with
//! `ucp_tag_send_nbx` (UCP picks eager or its own rendezvous per size). MPI matching and
//! ordering stay in Weft's engine: a worker keeps receives posted ahead for each VCI it
//! serves (`ucp_tag_recv_nbx` for the VCI's tag, any sender, each into a buffer of the
//! largest message), so an arrival lands in one of them inside `ucp_worker_progress` without
//! passing through UCP's unexpected queue; the VCI takes them strictly in the order they were
//! posted (UCP matches arrivals to them in that order), so messages from one peer reach the
//! engine in the order they were sent.
//!
//! A UCP tag is the sender's job rank (high 32 bits) and the VCI (low 32 bits): the VCI
//! selects the arrivals a posted receive takes, the rank tells whom a worker heard from. The
//! `GOODBYE` bit marks a process's last word (see `goodbye`), which no receive for messages
//! takes.
//!
//! Workers are made once per process, by its first instance: each worker's address goes into
//! the launcher's key-value space (hex, in chunks that fit PMI values) and every rank reads
//! the addresses of the ranks on other nodes after a fence. Endpoints are created on first
//! use, with `WEFT_UCX_PEER_FAILURE=1` in UCP's peer error mode: a peer that dies (or a node
//! that becomes unreachable) makes the endpoint's requests fail and its error handler run.
//! Every UCX failure is recorded in `health` (never a panic, which would leave a VCI's lock
//! poisoned mid-operation): sends to a lost peer are refused from then on, and the engine
//! fails the operations waiting on the network when it sees the failure count grow. A peer
//! that said goodbye (it finished) is not lost when its connection closes.
//!
//! `rma`: memory registration, remote keys and one-sided put/get/atomics on worker 0, for RMA
//! windows that span nodes (`rma::far`).

mod bulk;
mod ffi;
mod health;
mod rma;

pub use bulk::{BulkOp, BulkStart};
pub use rma::{Registration, RemoteKey};

use std::collections::VecDeque;
use std::ffi::{c_void, CStr};
use std::sync::{Mutex, MutexGuard};

use super::shm::WIRE_HEADER_BYTES;
use health::Health;

/// Most sends a worker keeps in flight; beyond it `try_send` reports no room.
const MAX_IN_FLIGHT: usize = 1024;
/// Largest capacity of a send buffer a worker keeps for the next message (`spare_tx`):
/// small messages then need no allocation.
const SPARE_MAX: usize = 64 * 1024;
/// About how many bytes of buffers a worker keeps posted ahead for each VCI it serves
/// (`WorkerState::post_ahead`): 16 receives of the default 16 KiB cell, never fewer than 2
/// or more than 64.
const POSTED_BYTES: usize = 256 * 1024;

/// The part of a UCP tag a receive for messages of one VCI compares (the VCI, and no
/// `GOODBYE` bit).
const VCI_MASK: u64 = 0xffff_ffff;
/// Set in the tag of a goodbye (a process ending: see `UcxTransport::goodbye`).
const GOODBYE: u64 = 1 << 31;

/// The UCP tag of a message from job rank `sender` for VCI `vci`.
fn message_tag(sender: u32, vci: usize) -> u64 {
    (u64::from(sender) << 32) | (vci as u64 & (VCI_MASK >> 1))
}

/// The UCP tag of job rank `sender`'s goodbye.
fn goodbye_tag(sender: u32) -> u64 {
    (u64::from(sender) << 32) | GOODBYE
}

/// Whether job rank `rank` said goodbye to `worker` (its goodbye waits, never received, in
/// the worker's unexpected queue).
///
/// # Safety
/// `worker` is live and used by the calling thread only (under its lock, or from its error
/// handler, which UCP calls inside `ucp_worker_progress`).
unsafe fn said_goodbye(worker: ffi::Worker, rank: u32) -> bool {
    let mut info = ffi::ucp_tag_recv_info_t {
        sender_tag: 0,
        length: 0,
    };
    // SAFETY: caller's contract; a probe that does not remove the message only looks it up.
    let found = unsafe { ffi::ucp_tag_probe_nb(worker, goodbye_tag(rank), !0, 0, &mut info) };
    !found.is_null()
}

/// The UCP library loaded at run time, as it reports its version (`None` where it cannot
/// be loaded).
pub fn library_version() -> Option<String> {
    ffi::load().ok()?;
    // SAFETY: ucp_get_version_string returns a static NUL-terminated string.
    let v = unsafe { CStr::from_ptr(ffi::ucp_get_version_string()) };
    Some(v.to_string_lossy().into_owned())
}

/// The UCX version this build was compiled against.
pub const BUILD_VERSION: &str = env!("WEFT_UCX_BUILD_VERSION");

/// The transports and devices UCP finds on this machine under the current `UCX_*`
/// settings (such as `tcp/lo`, `posix/memory`), from a context made for the purpose.
pub fn transports_seen() -> std::io::Result<Vec<String>> {
    let context = new_context()?;
    let mut text: *mut std::ffi::c_char = std::ptr::null_mut();
    let mut size = 0usize;
    // The stream is written by UCP and closed once below, before the buffer is read and freed.
    // SAFETY: open_memstream writes the buffer pointer and size it allocates.
    let info = unsafe {
        let stream = libc::open_memstream(&mut text, &mut size);
        if stream.is_null() {
            ffi::ucp_cleanup(context);
            return Err(std::io::Error::last_os_error());
        }
        ffi::ucp_context_print_info(context, stream);
        libc::fclose(stream);
        ffi::ucp_cleanup(context);
        let info = std::slice::from_raw_parts(text as *const u8, size).to_vec();
        libc::free(text as *mut c_void);
        info
    };
    Ok(String::from_utf8_lossy(&info)
        .lines()
        .filter(|l| l.contains("resource"))
        .filter_map(|l| l.split("-- ").nth(1))
        .map(|t| t.trim().to_owned())
        .collect())
}

/// A UCP context for tagged messages and one-sided operations, configured from the environment (`UCX_*`).
fn new_context() -> std::io::Result<ffi::Context> {
    ffi::load().map_err(std::io::Error::other)?;
    let params = ffi::ucp_params_t {
        field_mask: ffi::UCP_PARAM_FIELD_FEATURES,
        features: ffi::UCP_FEATURE_TAG | ffi::UCP_FEATURE_RMA | ffi::UCP_FEATURE_AMO64,
        rest: [0; 32],
    };
    let mut context: ffi::Context = std::ptr::null_mut();
    // params is a valid ucp_params_t whose field_mask names only set fields.
    // SAFETY: a null config makes UCP read its configuration from the environment (UCX_*).
    check("init", unsafe {
        ffi::ucp_init_version(
            ffi::UCP_API_MAJOR,
            ffi::UCP_API_MINOR,
            &params,
            std::ptr::null(),
            &mut context,
        )
    })?;
    Ok(context)
}

fn status_text(status: ffi::ucs_status_t) -> String {
    // SAFETY: ucs_status_string returns a static NUL-terminated string for any status.
    unsafe { CStr::from_ptr(ffi::ucs_status_string(status)) }
        .to_string_lossy()
        .into_owned()
}

fn check(what: &str, status: ffi::ucs_status_t) -> std::io::Result<()> {
    if status == ffi::UCS_OK {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "UCX {what}: {}",
            status_text(status)
        )))
    }
}

/// A UCP send still running (no callback: polled with `ucp_request_check_status`).
struct PendingSend {
    request: *mut c_void,
    /// The bytes UCP sends from (kept until it completes; then reused as `spare_tx`).
    buffer: Vec<u8>,
    /// The job rank it goes to.
    peer: u32,
}

/// A receive posted ahead for a VCI's next message (`WorkerState::post_ahead`).
struct Posted {
    request: *mut c_void,
    /// Where UCP writes the message (`message_max` bytes long).
    buffer: Vec<u8>,
}

/// What an endpoint's error handler is given: whose endpoint it is, its worker, and where
/// to record a loss.
struct EpArg {
    health: &'static Health,
    rank: u32,
    worker: ffi::Worker,
}

/// UCP's error handler of every endpoint (`UCP_ERR_HANDLING_MODE_PEER`): the peer is lost,
/// unless it said goodbye (it finished, and its connection closed after its last word).
extern "C" fn on_endpoint_error(arg: *mut c_void, _ep: ffi::Ep, status: ffi::ucs_status_t) {
    // arg is the EpArg boxed in the worker's state beside the endpoint.
    // SAFETY: both live as long as the process (endpoints are never destroyed).
    let arg = unsafe { &*(arg as *const EpArg) };
    // UCP calls the handler inside ucp_worker_progress of the endpoint's worker.
    // SAFETY: the progressing thread holds that worker under the worker's lock.
    if unsafe { said_goodbye(arg.worker, arg.rank) } {
        return;
    }
    lose(arg.health, Some(arg.rank), status);
}

/// Record a UCX failure (reported once per peer on stderr: the operations it fails carry
/// only the error class).
fn lose(health: &Health, rank: Option<u32>, status: ffi::ucs_status_t) {
    if health.record(rank, status) {
        match rank {
            Some(r) => eprintln!("weft: UCX lost job rank {r}: {}", status_text(status)),
            None => eprintln!("weft: a UCX receive failed: {}", status_text(status)),
        }
    }
}

struct WorkerState {
    worker: ffi::Worker,
    /// Endpoint to each job rank's worker of the same index (null: not created yet).
    eps: Vec<ffi::Ep>,
    /// The error-handler argument of each endpoint in `eps`.
    ep_args: Vec<Option<Box<EpArg>>>,
    sends: VecDeque<PendingSend>,
    /// For each VCI served by this worker (index: the VCI), its receives posted ahead,
    /// oldest first (empty until the VCI first looks for a message).
    posted: Vec<VecDeque<Posted>>,
    /// The job ranks this worker received from (they have an endpoint to it: each is told
    /// `goodbye`).
    heard: Vec<bool>,
    /// The id of this worker's next bulk receive (`bulk`).
    next_bulk: u32,
    /// The buffer of the last send UCP completed at once, and of the last arrival consumed,
    /// reused by the next send and the next receive posted (empty when none is kept).
    spare_tx: Vec<u8>,
    spare_rx: Vec<u8>,
}

// SAFETY: a worker is created in UCS_THREAD_MODE_SERIALIZED and is only touched through the
// mutex around its state, so it moves between threads but is never used by two at once.
unsafe impl Send for WorkerState {}

impl WorkerState {
    /// Keep `ahead` receives of `size` bytes posted for VCI `vci`'s messages (tag: the VCI,
    /// any sender). A receive UCP refuses is recorded in `health`, and no more are posted
    /// this time.
    fn post_ahead(&mut self, vci: usize, size: usize, ahead: usize, health: &Health) {
        if self.posted.len() <= vci {
            self.posted.resize_with(vci + 1, VecDeque::new);
        }
        while self.posted[vci].len() < ahead {
            let mut buffer = std::mem::take(&mut self.spare_rx);
            if buffer.len() != size {
                buffer = vec![0u8; size];
            }
            let param = ffi::ucp_request_param_t {
                op_attr_mask: ffi::UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
                rest: [0; 63],
            };
            // The worker is ours under its lock; the buffer's heap block stays put while it
            // moves into `posted`, where it lives until the request completes.
            // SAFETY: `buffer` holds `size` writable bytes for the whole receive.
            let request = unsafe {
                ffi::ucp_tag_recv_nbx(
                    self.worker,
                    buffer.as_mut_ptr() as *mut c_void,
                    size,
                    vci as u64,
                    VCI_MASK,
                    &param,
                )
            };
            if ffi::is_err(request) {
                lose(health, None, ffi::err_status(request));
                return;
            }
            if request.is_null() {
                // Not done by UCP under NO_IMM_CMPL: a message landing here would be lost.
                lose(health, None, ffi::UCS_ERR_IO_ERROR);
                return;
            }
            self.posted[vci].push_back(Posted { request, buffer });
        }
    }

    /// The oldest receive posted for `vci`, if it completed: its buffer and the message's
    /// length. One that failed is recorded in `health` and yields nothing.
    fn take_arrival(&mut self, vci: usize, health: &Health) -> Option<(Vec<u8>, usize)> {
        let oldest = self.posted.get(vci)?.front()?;
        let mut info = ffi::ucp_tag_recv_info_t {
            sender_tag: 0,
            length: 0,
        };
        // SAFETY: the request came from ucp_tag_recv_nbx and was not freed yet.
        let status = unsafe { ffi::ucp_tag_recv_request_test(oldest.request, &mut info) };
        if status == ffi::UCS_INPROGRESS {
            return None;
        }
        let done = self.posted[vci].pop_front().expect("checked");
        // SAFETY: completed; freed once.
        unsafe { ffi::ucp_request_free(done.request) };
        if status != ffi::UCS_OK {
            lose(health, None, status);
            return None;
        }
        if let Some(heard) = self.heard.get_mut((info.sender_tag >> 32) as usize) {
            *heard = true;
        }
        Some((done.buffer, info.length))
    }

    /// Make UCP progress and reap completed sends (in order); a failed send loses its peer.
    /// Returns how many events UCP handled (0: no request of this worker changed).
    fn progress(&mut self, health: &Health) -> u32 {
        // SAFETY: the worker is live and used by this thread only (under its mutex).
        let events = unsafe { ffi::ucp_worker_progress(self.worker) };
        while let Some(front) = self.sends.front() {
            // SAFETY: the request came from ucp_tag_send_nbx and was not freed yet.
            let status = unsafe { ffi::ucp_request_check_status(front.request) };
            if status == ffi::UCS_INPROGRESS {
                break;
            }
            let done = self.sends.pop_front().expect("front exists");
            // SAFETY: the worker is ours under the lock.
            let finished = |r| unsafe { said_goodbye(self.worker, r) };
            if status != ffi::UCS_OK && !finished(done.peer) {
                lose(health, Some(done.peer), status);
            }
            // SAFETY: completed; freed once; UCP reads its buffer no more.
            unsafe { ffi::ucp_request_free(done.request) };
            if done.buffer.capacity() <= SPARE_MAX {
                self.spare_tx = done.buffer;
            }
        }
        events
    }
}

/// The process's UCP context and workers, and the peers' worker addresses.
pub struct UcxTransport {
    /// The largest message a peer sends (`transport::message_max`): the size of every
    /// receive posted ahead.
    message_max: usize,
    /// How many receives each VCI keeps posted ahead.
    posted_ahead: usize,
    /// The context, for registering memory (`rma`); UCP's context calls are not thread safe
    /// without its multi-thread mode, hence the lock.
    context: Mutex<rma::ContextHandle>,
    workers: Vec<Mutex<WorkerState>>,
    /// This process's job rank.
    rank: u32,
    /// For each job rank, the address of each of its workers (empty: same node, or self).
    peers: Vec<Vec<Vec<u8>>>,
    health: Health,
    /// `WEFT_UCX_PEER_FAILURE=1`: endpoints in `UCP_ERR_HANDLING_MODE_PEER`, so a lost peer
    /// is detected and fails the operations waiting on the network. Off by default (as in
    /// MPICH, where it comes with fault tolerance). In this mode a process says `goodbye`
    /// before it may exit, or UCX would report its closed connections as a loss ("Endpoint
    /// timeout") to peers still waiting on others.
    peer_failure: bool,
}

impl UcxTransport {
    /// A UCP context with `nworkers` workers for job rank `rank` of a job of `job_size`
    /// ranks (peers' addresses are given later with `set_peer`), whose messages are at most
    /// `message_max` bytes (every rank's the same).
    pub fn open(
        nworkers: usize,
        rank: u32,
        job_size: u32,
        message_max: usize,
    ) -> std::io::Result<UcxTransport> {
        let context = new_context()?;
        let mut workers = Vec::with_capacity(nworkers);
        for _ in 0..nworkers {
            let wparams = ffi::ucp_worker_params_t {
                field_mask: ffi::UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                thread_mode: ffi::UCS_THREAD_MODE_SERIALIZED,
                rest: [0; 64],
            };
            let mut worker: ffi::Worker = std::ptr::null_mut();
            // context is live (it is never destroyed: workers live as long as the process).
            // SAFETY: wparams names only its thread mode.
            check("worker create", unsafe {
                ffi::ucp_worker_create(context, &wparams, &mut worker)
            })?;
            workers.push(Mutex::new(WorkerState {
                worker,
                eps: vec![std::ptr::null_mut(); job_size as usize],
                ep_args: (0..job_size).map(|_| None).collect(),
                sends: VecDeque::new(),
                posted: Vec::new(),
                heard: vec![false; job_size as usize],
                next_bulk: 0,
                spare_tx: Vec::new(),
                spare_rx: Vec::new(),
            }));
        }
        Ok(UcxTransport {
            message_max,
            posted_ahead: (POSTED_BYTES / message_max).clamp(2, 64),
            context: Mutex::new(rma::ContextHandle(context)),
            workers,
            rank,
            peers: vec![Vec::new(); job_size as usize],
            health: Health::new(job_size),
            peer_failure: std::env::var_os("WEFT_UCX_PEER_FAILURE").is_some_and(|v| v == "1"),
        })
    }

    /// The address of each worker, to publish.
    pub fn addresses(&self) -> std::io::Result<Vec<Vec<u8>>> {
        (0..self.workers.len())
            .map(|w| {
                let state = self.lock(w);
                let mut addr: *mut c_void = std::ptr::null_mut();
                let mut len = 0usize;
                // SAFETY: the worker is live and ours under the lock.
                check("worker address", unsafe {
                    ffi::ucp_worker_get_address(state.worker, &mut addr, &mut len)
                })?;
                // SAFETY: UCP returned `len` readable bytes at `addr`.
                let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) }.to_vec();
                // SAFETY: released once, with the worker that made it.
                unsafe { ffi::ucp_worker_release_address(state.worker, addr) };
                Ok(bytes)
            })
            .collect()
    }

    /// The worker addresses of job rank `rank` (one per worker, as its `addresses` gave).
    pub fn set_peer(&mut self, rank: u32, addresses: Vec<Vec<u8>>) {
        self.peers[rank as usize] = addresses;
    }

    pub fn workers(&self) -> usize {
        self.workers.len()
    }

    /// How many peer failures were recorded so far (only grows).
    #[inline]
    pub fn failures(&self) -> u64 {
        self.health.failures()
    }

    /// Wait until every send in flight has left (completed or failed): a process that
    /// exits with sends still queued in UCX (a connection not yet up) would lose them.
    fn flush(&self) {
        for w in 0..self.workers.len() {
            loop {
                let mut state = self.lock(w);
                state.progress(&self.health);
                if state.sends.is_empty() {
                    break;
                }
                drop(state);
                std::thread::yield_now();
            }
        }
    }

    /// The process is finalizing: peers that end from now on are not failures.
    pub fn closing(&self) {
        self.health.close();
    }

    /// The process releases its last instance and may exit: in peer-failure mode, tell every
    /// peer connected to a worker (it has an endpoint to the peer, or heard from it) that
    /// this process is finishing, and wait until UCX has delivered that. A peer's endpoint
    /// that then fails (this process exited and its connections closed) finds the goodbye
    /// in its worker's unexpected queue and records no loss (`on_endpoint_error`). The
    /// goodbye is sent on the worker pair it concerns, so it arrives before the close on
    /// the same connection. Without peer-failure mode closed connections are not reported,
    /// and only the sends in flight are waited for.
    pub fn goodbye(&'static self) {
        // This process is leaving: peers that end or are gone from now on are no failures.
        self.health.close();
        if self.peer_failure {
            for w in 0..self.workers.len() {
                let mut state = self.lock(w);
                let peers: Vec<u32> = (0..state.eps.len() as u32)
                    .filter(|&r| r != self.rank && self.health.lost(r).is_none())
                    .filter(|&r| !state.eps[r as usize].is_null() || state.heard[r as usize])
                    .collect();
                for r in peers {
                    self.send_tagged(&mut state, w, r, goodbye_tag(self.rank), Vec::new());
                }
            }
        }
        self.flush();
        if self.peer_failure {
            for w in 0..self.workers.len() {
                self.flush_worker(w);
            }
        }
    }

    /// Wait until UCX has completed everything worker `w` started (the bytes have left;
    /// with a peer lost midway, the flush fails, which is all that can be done).
    fn flush_worker(&self, w: usize) {
        let param = ffi::ucp_request_param_t {
            op_attr_mask: 0,
            rest: [0; 63],
        };
        let mut state = self.lock(w);
        // SAFETY: the worker is ours under the lock.
        let request = unsafe { ffi::ucp_worker_flush_nbx(state.worker, &param) };
        if request.is_null() || ffi::is_err(request) {
            return;
        }
        loop {
            // SAFETY: the request came from ucp_worker_flush_nbx and was not freed yet.
            if unsafe { ffi::ucp_request_check_status(request) } != ffi::UCS_INPROGRESS {
                break;
            }
            state.progress(&self.health);
            drop(state);
            std::thread::yield_now();
            state = self.lock(w);
        }
        // SAFETY: completed; freed once.
        unsafe { ffi::ucp_request_free(request) };
    }

    /// Why job rank `rank` cannot be reached any more, if UCX lost it.
    pub fn lost(&self, rank: u32) -> Option<String> {
        self.health.lost(rank).map(status_text)
    }

    fn lock(&self, w: usize) -> MutexGuard<'_, WorkerState> {
        self.workers[w].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Send `header` and `len` payload bytes (written by `fill`) to VCI `vci` of job rank
    /// `rank`. False, having done nothing, when too many sends are in flight or the peer is
    /// lost (a failure then recorded: see `failures`).
    pub fn try_send(
        &'static self,
        rank: u32,
        vci: usize,
        header: &[u8; WIRE_HEADER_BYTES],
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> bool {
        let w = vci % self.workers.len();
        if self.health.lost(rank).is_some() {
            return false;
        }
        let mut state = self.lock(w);
        if state.sends.len() >= MAX_IN_FLIGHT {
            state.progress(&self.health);
            if state.sends.len() >= MAX_IN_FLIGHT {
                return false;
            }
        }
        debug_assert!(
            WIRE_HEADER_BYTES + len <= self.message_max,
            "message over a cell"
        );
        let mut buffer = std::mem::take(&mut state.spare_tx);
        buffer.clear();
        buffer.resize(WIRE_HEADER_BYTES + len, 0);
        buffer[..WIRE_HEADER_BYTES].copy_from_slice(header);
        fill(&mut buffer[WIRE_HEADER_BYTES..]);
        self.send_tagged(&mut state, w, rank, message_tag(self.rank, vci), buffer)
    }

    /// Send `buffer` with UCP tag `tag` from worker `w` (held: `state`) to job rank `rank`.
    /// False when the peer is lost (recorded).
    fn send_tagged(
        &'static self,
        state: &mut WorkerState,
        w: usize,
        rank: u32,
        tag: u64,
        buffer: Vec<u8>,
    ) -> bool {
        let Some(ep) = self.endpoint(state, w, rank) else {
            return false;
        };
        let param = ffi::ucp_request_param_t {
            op_attr_mask: 0,
            rest: [0; 63],
        };
        // ep belongs to this worker (held under its lock).
        // SAFETY: buffer stays alive until the request completes (kept in `sends` with it).
        let request = unsafe {
            ffi::ucp_tag_send_nbx(
                ep,
                buffer.as_ptr() as *const c_void,
                buffer.len(),
                tag,
                &param,
            )
        };
        if ffi::is_err(request) {
            lose(&self.health, Some(rank), ffi::err_status(request));
            return false;
        }
        if !request.is_null() {
            state.sends.push_back(PendingSend {
                request,
                buffer,
                peer: rank,
            });
        } else if buffer.capacity() <= SPARE_MAX {
            // Sent at once: UCP no longer reads the buffer.
            state.spare_tx = buffer;
        }
        true
    }

    /// The endpoint of worker `w` to job rank `rank`, created on first use; `None` (the
    /// peer then lost) when UCX cannot create it.
    fn endpoint(&'static self, state: &mut WorkerState, w: usize, rank: u32) -> Option<ffi::Ep> {
        let ep = *state.eps.get(rank as usize)?;
        if !ep.is_null() {
            return Some(ep);
        }
        let Some(address) = self.peers[rank as usize].get(w) else {
            // The bring-up gave no address: nothing can reach that rank.
            lose(&self.health, Some(rank), ffi::UCS_ERR_UNREACHABLE);
            return None;
        };
        let arg = Box::new(EpArg {
            health: &self.health,
            rank,
            worker: state.worker,
        });
        let error_fields = if self.peer_failure {
            ffi::UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | ffi::UCP_EP_PARAM_FIELD_ERR_HANDLER
        } else {
            0
        };
        let params = ffi::ucp_ep_params_t {
            field_mask: ffi::UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | error_fields,
            address: address.as_ptr() as *const c_void,
            err_mode: ffi::UCP_ERR_HANDLING_MODE_PEER,
            err_handler: ffi::ucp_err_handler_t {
                cb: Some(on_endpoint_error),
                arg: &*arg as *const EpArg as *mut c_void,
            },
            rest: [0; 64],
        };
        let mut ep: ffi::Ep = std::ptr::null_mut();
        // The address is a worker address the peer published, alive for the call; the handler's
        // argument is kept (boxed, so it does not move) in `ep_args` for as long as the endpoint
        // lives.
        // SAFETY: the worker is ours under its lock.
        let status = unsafe { ffi::ucp_ep_create(state.worker, &params, &mut ep) };
        if status != ffi::UCS_OK {
            lose(&self.health, Some(rank), status);
            return None;
        }
        state.eps[rank as usize] = ep;
        state.ep_args[rank as usize] = Some(arg);
        Some(ep)
    }

    /// Take the next message that arrived for VCI `vci`, if any, and hand its header and
    /// payload to `consume` (called without the worker's lock: it may send).
    pub fn try_recv(
        &self,
        vci: usize,
        consume: impl FnOnce(&[u8; WIRE_HEADER_BYTES], &[u8]),
    ) -> bool {
        let w = vci % self.workers.len();
        let (message, length) = {
            let mut state = self.lock(w);
            state.post_ahead(vci, self.message_max, self.posted_ahead, &self.health);
            // UCP progress only when the oldest receive is not complete yet: one progress
            // call may complete several, and the next passes take them without one. A
            // progress call that handled nothing completed nothing.
            match state.take_arrival(vci, &self.health) {
                Some(m) => m,
                None => {
                    if state.progress(&self.health) == 0 {
                        return false;
                    }
                    match state.take_arrival(vci, &self.health) {
                        Some(m) => m,
                        None => return false,
                    }
                }
            }
        };
        let message_bytes = &message[..length.min(message.len())];
        let Some(header) = message_bytes.first_chunk::<WIRE_HEADER_BYTES>() else {
            // Not a message of Weft's (shorter than its header): dropped.
            lose(&self.health, None, ffi::UCS_ERR_MESSAGE_TRUNCATED);
            return false;
        };
        consume(header, &message_bytes[WIRE_HEADER_BYTES..]);
        // Kept for the next receive posted, unless another thread holds the worker now.
        if let Ok(mut state) = self.workers[w].try_lock() {
            state.spare_rx = message;
        }
        true
    }
}
