//! The instance: everything one process shares between its sessions (configuration, the
//! launcher connection, job layout, VCIs). The first session (or `MPI_Init`) builds it; when
//! the last one ends it is released, and the next session builds a new one that carries on
//! where it stopped (see `Instance::release`).
#![forbid(unsafe_code)]

mod foreign;
pub mod layout;
mod network;
pub mod psets;
pub mod thread_level;

pub use layout::{job, JobLayout, ProcId, WorldAttrs};
pub use thread_level::ThreadLevel;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use weft_pmi::PmiClient;

use crate::config::Config;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::sync::Backoff;
use crate::transport::Transports;
use crate::vci::{Carried, Vci};
use layout::job_layout;

/// State shared by all sessions of this process.
pub struct Instance {
    pub config: Config,
    pub job: &'static JobLayout,
    pub processor_name: String,
    /// The implicit VCIs (`config.num_vcis`), then one for each possible MPIX stream
    /// (`config.max_streams`).
    pub vcis: Vec<Vci>,
    /// The stream VCIs no stream holds (creating and freeing streams only).
    free_stream_vcis: Mutex<Vec<usize>>,
    pub transports: Transports,
    /// Empty progress polls before a waiting thread yields (see `spin_polls`), unless set
    /// at run time (`set_spin`).
    spin: u32,
    /// Tells this instance apart from earlier and later ones of the same process (and from
    /// other processes): names of shared objects that only one instance may use carry it
    /// (`transport::shm::pair`).
    pub nonce: u64,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field("job", &self.job)
            .field("vcis", &self.vcis.len())
            .finish()
    }
}

/// The live instance and the number of sessions using it.
struct Current {
    instance: Option<Arc<Instance>>,
    sessions: usize,
}

static CURRENT: Mutex<Current> = Mutex::new(Current {
    instance: None,
    sessions: 0,
});

/// Changes whenever the live instance does (bootstrap, release), so that callers may cache a
/// weak reference to it and know when the cache is stale.
static LIVE_EPOCH: AtomicU64 = AtomicU64::new(0);

/// The configuration, read from the environment by the first bootstrap: later instances
/// rejoin the node's rings, whose geometry must not change.
static CONFIG: OnceLock<Config> = OnceLock::new();

/// The spin budget set at run time (`Instance::set_spin`); `u64::MAX`: none.
static SPIN_SET: AtomicU64 = AtomicU64::new(u64::MAX);

/// What the VCIs of a released instance handed on to the next one (`Vci::new`).
static CARRIED: Mutex<Vec<Carried>> = Mutex::new(Vec::new());

/// Whether any session or `MPI_Init_thread` of this process asked for `MPI_THREAD_MULTIPLE`
/// (never reset: threads of an earlier session may still be inside).
static CONCURRENT_CALLS: AtomicBool = AtomicBool::new(false);

/// Whether MPI calls of this process may overlap in time (some caller asked for
/// `MPI_THREAD_MULTIPLE`). Below that level the application calls one at a time.
#[inline]
pub fn calls_may_overlap() -> bool {
    CONCURRENT_CALLS.load(Ordering::Relaxed)
}

/// A library thread calls MPI beside the program's (an offload stream's queue): from now on
/// calls may overlap, whatever level the program asked for.
pub fn note_library_thread() {
    CONCURRENT_CALLS.store(true, Ordering::SeqCst);
}

fn current() -> MutexGuard<'static, Current> {
    CURRENT.lock().unwrap_or_else(|p| p.into_inner())
}

impl Instance {
    /// The live instance, if any session (or the world) is initialized.
    pub fn live() -> Option<Arc<Instance>> {
        current().instance.clone()
    }

    /// The process's configuration: the first bootstrap's, or (before any) what the
    /// environment says now (the defaults where it is malformed: initialization reports that).
    pub fn configuration() -> Config {
        match CONFIG.get() {
            Some(c) => c.clone(),
            None => Config::from_env().unwrap_or_default(),
        }
    }

    /// See `LIVE_EPOCH`.
    pub fn live_epoch() -> u64 {
        LIVE_EPOCH.load(Ordering::Acquire)
    }

    /// Register a new session: the live instance, or a freshly bootstrapped one.
    pub fn acquire(level: ThreadLevel) -> MpiResult<Arc<Instance>> {
        let mut current = current();
        let instance = match &current.instance {
            Some(instance) => instance.clone(),
            None => {
                let fresh = Arc::new(Instance::bootstrap(level)?);
                LIVE_EPOCH.fetch_add(1, Ordering::AcqRel);
                fresh
            }
        };
        if level.concurrent() {
            CONCURRENT_CALLS.store(true, Ordering::SeqCst);
            // A stream's VCI never locks: its user promises serial use.
            instance.vcis[instance.implicit_vcis()]
                .iter()
                .for_each(Vci::enable_threads);
        }
        current.instance = Some(instance.clone());
        current.sessions += 1;
        Ok(instance)
    }

    /// From now on several threads may call MPI at once, whatever thread level was asked
    /// for: a thread communicator's ranks do (`MPIX_Threadcomm_init`, called by one thread
    /// outside any parallel region, switches this on for good).
    pub fn allow_concurrent_calls(&self) {
        CONCURRENT_CALLS.store(true, Ordering::SeqCst);
        self.vcis[self.implicit_vcis()]
            .iter()
            .for_each(Vci::enable_threads);
    }

    /// A session ended. When it was the last one, the launcher is told this process
    /// finished normally (its connection closes), and the instance is released: its VCIs,
    /// request pools and queues go, and its mapping of the node's rings goes when the last
    /// object of the ended sessions that still holds the instance does. Peers may still be
    /// using the rings, so the next bootstrap maps the same segment again (a kept
    /// descriptor) and each VCI carries on from its ring position and its messages not yet
    /// received (`Carried`): a process may end its last session and start another while its
    /// peer's first is still open. An instance with a send or an internal schedule still in
    /// flight is not released (dropping it would lose the message); the next session
    /// reuses it.
    pub fn release(&self) {
        let mut current = current();
        current.sessions = current.sessions.saturating_sub(1);
        if current.sessions > 0 {
            return;
        }
        // Nothing useful can be done if the launcher fails at this point (or the connection
        // was already closed by an earlier last session): a later session then reports the
        // missing fact when it needs it.
        let _ = self.job.learn_everything();
        let _ = self.pmi().finalize();
        // The last messages (of `MPI_Finalize`'s synchronization, say) may still be queued
        // in UCX, and the process may exit next: its network peers are told so.
        self.transports.leave_network();
        let mut states: Vec<_> = self.vcis.iter().map(Vci::lock).collect();
        if states.iter().all(|st| st.is_quiet()) {
            *CARRIED.lock().unwrap_or_else(|p| p.into_inner()) =
                states.iter_mut().map(|st| st.carry()).collect();
            drop(states);
            current.instance = None;
            LIVE_EPOCH.fetch_add(1, Ordering::AcqRel);
        }
    }

    fn bootstrap(level: ThreadLevel) -> MpiResult<Instance> {
        let config = match CONFIG.get() {
            Some(config) => config.clone(),
            None => {
                let config = Config::from_env()?;
                CONFIG.get_or_init(|| config).clone()
            }
        };
        let job = job_layout(config.pmi_version, config.nodes)?;
        let threaded = level.concurrent() || calls_may_overlap();
        let mut carried =
            std::mem::take(&mut *CARRIED.lock().unwrap_or_else(|p| p.into_inner())).into_iter();
        let total = config.num_vcis + config.max_streams;
        let vcis = (0..total)
            .map(|i| Vci::new(i, threaded && i < config.num_vcis, carried.next()))
            .collect();
        let node = job.node_of[job.rank as usize];
        let segment = job.segment_name(node);
        let ucx =
            network::ucx_transport(job, config.num_vcis, crate::transport::message_max(&config))?;
        let transports = Transports::open(
            job.rank,
            job.size,
            &job.local_ranks(),
            &segment,
            total,
            &config,
            ucx,
        )
        .map_err(|e| MpiError::new(ErrorClass::Other, format!("shared-memory transport: {e}")))?;
        let spin = spin_polls(&config, job.local_ranks().len());
        Ok(Instance {
            spin,
            nonce: instance_nonce(),
            processor_name: hostname(),
            vcis,
            free_stream_vcis: Mutex::new((config.num_vcis..total).rev().collect()),
            transports,
            config,
            job,
        })
    }

    /// How a thread of this process waits for progress (see `Backoff`).
    pub fn backoff(&self) -> Backoff {
        Backoff::new(self.spin())
    }

    /// Empty progress polls before a waiting thread yields: `set_spin`'s value, else the
    /// configured or measured one.
    #[inline]
    pub fn spin(&self) -> u32 {
        match SPIN_SET.load(Ordering::Relaxed) {
            u64::MAX => self.spin,
            n => n as u32,
        }
    }

    /// Set the spin budget of waiting threads from now on (the MPI_T control variable
    /// `WEFT_PROGRESS_SPIN`); it stays for later instances of the process.
    pub fn set_spin(polls: u32) {
        SPIN_SET.store(polls.into(), Ordering::Relaxed);
    }

    /// The spin budget `set_spin` set, if any.
    pub fn spin_set() -> Option<u32> {
        match SPIN_SET.load(Ordering::Relaxed) {
            u64::MAX => None,
            n => Some(n as u32),
        }
    }

    /// The implicit VCI for a communicator's context id.
    /// Both ids of a communicator (point-to-point and collective) map to the same VCI.
    pub fn vci_for_context(&self, context_id: u32) -> usize {
        (context_id as usize / 2) % self.config.num_vcis
    }

    /// The implicit VCIs (those communicators are hashed onto).
    pub fn implicit_vcis(&self) -> std::ops::Range<usize> {
        0..self.config.num_vcis
    }

    /// Claim a VCI for a new MPIX stream; `None` when `WEFT_MAX_STREAMS` are in use.
    pub fn claim_stream_vci(&self) -> Option<usize> {
        self.free_stream_vcis
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop()
    }

    /// A freed stream's VCI is free again.
    pub fn release_stream_vci(&self, vci: usize) {
        debug_assert!(vci >= self.config.num_vcis && vci < self.vcis.len());
        self.free_stream_vcis
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(vci);
    }

    /// The launcher connection (bootstrap, fences and aborts; never on a hot path).
    pub fn pmi(&self) -> MutexGuard<'static, PmiClient> {
        layout::connection()
            .expect("an instance exists only after PMI connected")
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// End the whole job: tell the launcher, then exit with `code`.
    pub fn abort_job(&self, code: i32, message: &str) -> ! {
        // WEFT_TRACE: this rank's part is kept (rank 0 will not merge it).
        crate::trace::write_part();
        self.transports.release_names();
        // A process that holds the PMI lock while aborting must not deadlock here.
        if let Some(Ok(mut pmi)) = layout::connection().map(Mutex::try_lock) {
            pmi.abort(code, message);
        }
        std::process::exit(exit_status(code))
    }
}

/// An exit status for an error or abort code: codes outside 1..=255 become 1.
pub fn exit_status(code: i32) -> i32 {
    if (1..=255).contains(&code) {
        code
    } else {
        1
    }
}

/// Empty polls before yielding when ranks outnumber CPUs (measured: 4 ranks on 2 CPUs take
/// about 40 us per `MPI_Comm_dup` with 10 polls, 8 ms with 20000).
const OVERSUBSCRIBED_SPIN: u32 = 16;

/// Empty polls before a waiting thread yields: `WEFT_PROGRESS_SPIN` if set; otherwise long
/// spins (no system call while a peer on another core is about to answer) unless this node
/// runs more ranks than it has CPUs, where the peer may need this CPU to answer at all.
fn spin_polls(config: &Config, local_ranks: usize) -> u32 {
    match config.progress_spin {
        Some(n) => n,
        None if local_ranks > online_cpus() => OVERSUBSCRIBED_SPIN,
        None => DEDICATED_SPIN,
    }
}

/// Empty polls before yielding when every rank has a CPU (about 1 ms of polling).
const DEDICATED_SPIN: u32 = 20_000;

/// CPUs online (`/sys/devices/system/cpu/online`: ranges like `0-3,8`), not this process's
/// affinity (a rank bound to one core is not oversubscribed).
fn online_cpus() -> usize {
    let count = std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .map(|s| {
            s.trim()
                .split(',')
                .filter_map(|r| {
                    let mut it = r.split('-');
                    let a: usize = it.next()?.parse().ok()?;
                    let b: usize = it.next().map_or(Some(a), |x| x.parse().ok())?;
                    Some(b.saturating_sub(a) + 1)
                })
                .sum::<usize>()
        })
        .unwrap_or(0);
    if count > 0 {
        count
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// The host's name (for `MPI_Get_processor_name`).
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_owned())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// Abort without a live instance (errors before init or after teardown).
pub fn abort_without_instance(code: i32) -> ! {
    let instance = current().instance.clone();
    if let Some(instance) = instance {
        instance.abort_job(code, "aborted")
    }
    std::process::exit(exit_status(code))
}

/// A value no other instance (of this process, or of another process of the job) has:
/// the pid, and how many instances this process started before.
fn instance_nonce() -> u64 {
    static STARTED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    (u64::from(std::process::id()) << 32) | u64::from(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_status_is_in_range() {
        assert_eq!(exit_status(7), 7);
        assert_eq!(exit_status(0), 1);
        assert_eq!(exit_status(300), 1);
        assert_eq!(exit_status(-2), 1);
    }
}
