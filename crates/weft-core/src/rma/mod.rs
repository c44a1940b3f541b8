//! One-sided communication (RMA): on one node every operation moves data without the
//! target's CPU; ranks on other nodes are reached through UCX (`far`). What a window needs for it (`WinRma`, made collectively when the window is
//! created) is every rank's pid, base, size and displacement unit, and the window's shared
//! segment (`transport::shm::win_area`): the locks, the accumulate mutexes and the
//! post/complete counters of every rank, and, for windows whose memory the library
//! allocates, that memory, mapped into every process.
//!
//! - `access`: reaching a target's bytes (a mapped address, or cross-memory attach into the
//!   target process for memory the program owns: `MPI_Win_create`, dynamic windows).
//! - `ops`: put, get, the accumulates, fetch-and-op, compare-and-swap. Each completes at the
//!   call (locally and at the target), so flushes only order memory.
//! - `epoch`: the synchronisation calls (fence, lock/unlock, lock_all, flush, PSCW) and the
//!   check that an operation lies inside an access epoch to its target.
//! - `atomic`: accumulate-type operations by CPU atomics, element by element, on memory the
//!   segment holds (the intrinsic path of `MPIX_Win_op_intrinsic`); small elements a
//!   64-bit word at a time (`lanes`: lane-wise arithmetic on words).
//! - `direct`: the direct path of contiguous puts and gets on mapped memory.
//! - `notify`: notification counters and the requests that wait for them.
//! - `scope`: the operations each thread has in progress, which a process-scope flush waits
//!   for and a thread-scope one does not (`mpi_win_scope`).
//! - `memhandle`: memory handles of dynamic windows and the windows built from them.
//! - `peer_maps`: created windows over shareable memory, mapped in every process.
//! - `attach_table`, `dyn_maps`: the regions attached to dynamic windows, published in the
//!   segment, and the origin's per-target caches of them (shareable blocks mapped here).
//!
//! A `WinRma` is one view of a window's RMA state: the segment, the epochs and their flags
//! and the operations in progress are shared (`Arc`) between the views of one window
//! (`MPIX_Win_dup_with_info`, memory-handle windows), while each view has its own peers
//! table, memory handle, `mpi_assert_accumulate_intrinsic` and `mpi_win_scope` settings.
//!
//! Floor: above `coll` (fences and creation use its barrier and exchanges), below `io`.

pub mod access;
pub mod atomic;
pub mod attach_table;
pub mod direct;
pub mod dyn_maps;
pub mod epoch;
pub mod far;
pub mod lanes;
pub mod memhandle;
pub mod notify;
pub mod ops;
pub mod peer_maps;
pub mod scope;
pub mod words;

pub use access::Target;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use crate::coll;
use crate::datatype::access::Scratch;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::instance::calls_may_overlap;
use crate::object::win::{Flavor, Win};
use crate::object::Comm;
use crate::transport::shm::win_area::{WinArea, WinLayout};
use crate::transport::Transports;
use access::{AccPath, Reach};
use epoch::Epochs;

/// What one rank of a window exposes, as every process of the window knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    pub pid: i32,
    /// Its window's base address in its own address space (0 for dynamic windows).
    pub base: usize,
    pub size: u64,
    pub disp_unit: u32,
}

/// The RMA state of one window in this process (one view of it: see the module's doc).
#[derive(Debug)]
pub struct WinRma {
    pub peers: Vec<Peer>,
    /// The window's private communicator (fences and waits make progress on its instance).
    comm: Arc<Comm>,
    /// The ranks on other nodes, through UCX (`None`: the window lies within this node).
    /// Declared before `area`: its registrations of the segment go first.
    far: Option<Arc<far::Far>>,
    area: Arc<WinArea>,
    /// Whether the segment holds every rank's memory (allocated windows).
    mapped: bool,
    /// Other ranks' memory mapped here (created windows over shareable memory).
    remote: Arc<peer_maps::PeerMaps>,
    /// Dynamic windows: the attached regions published and seen (shared by the views).
    dyn_maps: Arc<dyn_maps::DynMaps>,
    flavor: Flavor,
    me: u32,
    epochs: Arc<Mutex<Epochs>>,
    /// The epochs as one flag byte per target (`epoch::ACCESS`, `epoch::PASSIVE`).
    flags: Arc<[AtomicU8]>,
    /// Notifications on each index promised to requests (this process as target).
    claims: Arc<notify::Claims>,
    /// `mpi_assert_accumulate_intrinsic`: accumulates off the intrinsic path are errors.
    strict: AtomicBool,
    /// The operations each thread has in progress (shared by the views).
    in_flight: Arc<scope::Tracker>,
    /// `mpi_win_scope=thread`: this view's flushes wait for no other thread's operations.
    thread_scope: AtomicBool,
    /// For a window built from a memory handle: its one target and the handle.
    handle: Option<memhandle::HandleView>,
    /// Where accumulates on this view's memory run: CPU atomics where every process reaches
    /// every rank's memory by address (allocated windows, created windows mapped everywhere,
    /// memory-handle windows over a shareable block), else the mutex. A dynamic window's
    /// regions decide for themselves (`dyn_maps`).
    acc: AccPath,
    /// The same in every process of the window (memory handles carry it).
    key: u32,
}

/// Bytes of a segment name as broadcast (NUL padded; all zero: creation failed).
const NAME_BYTES: usize = 128;

/// Segments this process created (part of their names, with the pid).
static CREATED: AtomicU64 = AtomicU64::new(0);

fn encode_peer(p: &Peer) -> [u8; 24] {
    let mut b = [0u8; 24];
    b[0..4].copy_from_slice(&p.pid.to_le_bytes());
    b[4..8].copy_from_slice(&p.disp_unit.to_le_bytes());
    b[8..16].copy_from_slice(&(p.base as u64).to_le_bytes());
    b[16..24].copy_from_slice(&p.size.to_le_bytes());
    b
}

fn decode_peer(b: &[u8]) -> Peer {
    let word = |r: std::ops::Range<usize>| u64::from_le_bytes(b[r].try_into().expect("8 bytes"));
    Peer {
        pid: i32::from_le_bytes(b[0..4].try_into().expect("4 bytes")),
        disp_unit: u32::from_le_bytes(b[4..8].try_into().expect("4 bytes")),
        base: word(8..16) as usize,
        size: word(16..24),
    }
}

fn shm_error(func: &str, e: std::io::Error) -> MpiError {
    MpiError::new(
        ErrorClass::NoMem,
        format!("{func}: cannot set up the window's shared memory: {e}"),
    )
}

impl WinRma {
    /// Set up RMA for `win` (collective over its group): exchange what each rank exposes,
    /// create the window's segment on rank 0 and attach it everywhere. `own_pages` (for
    /// allocated windows) starts every rank's memory on its own page; for
    /// `MPI_Win_allocate_shared` without `alloc_shared_noncontig` the memory is contiguous.
    /// For allocated flavors the window's base is then `local_base()`.
    pub fn setup(win: &Win, own_pages: bool, func: &str) -> MpiResult<WinRma> {
        let comm = &win.comm;
        let inst = &comm.session.instance;
        let members = comm.group.members();
        // Which window ranks share this process's node.
        let local: Vec<bool> = members
            .iter()
            .map(|&p| Transports::is_node_local(inst.transports.route(p)))
            .collect();
        let spans = local.contains(&false);
        if let Some(far) = local.iter().position(|&l| !l) {
            if win.flavor == Flavor::Shared {
                return Err(MpiError::new(
                    ErrorClass::RmaShared,
                    format!(
                        "{func}(comm): rank {far} of the communicator is on another node, and \
                         a shared-memory window needs every rank on one node; create it on a \
                         communicator within one node (MPI_Comm_split_type with \
                         MPI_COMM_TYPE_SHARED)"
                    ),
                ));
            }
        }
        let n = comm.size() as usize;
        let mine = Peer {
            pid: inst.transports.pid,
            base: win.memory.base,
            size: win.memory.size,
            disp_unit: win.memory.disp_unit,
        };
        let mut send = Scratch::from_bytes(&encode_peer(&mine));
        let mut all = Scratch::new(24 * n);
        coll::allgather(comm, Some(&send.buf()), &all.buf())?;
        let mut peers: Vec<Peer> = all.bytes().chunks(24).map(decode_peer).collect();
        let mapped = matches!(win.flavor, Flavor::Allocate | Flavor::Shared);
        // A node's segment holds the memory of its own ranks only.
        let sizes: Vec<u64> = if mapped {
            peers
                .iter()
                .zip(&local)
                .map(|(p, &l)| if l { p.size } else { 0 })
                .collect()
        } else {
            vec![0; n]
        };
        let far_keys = spans && win.flavor == Flavor::Dynamic;
        let layout = WinLayout::new(&sizes, own_pages, far_keys).map_err(|e| shm_error(func, e))?;
        let (area, key) = Self::node_segment(comm, &local, layout, func)?;
        if mapped {
            for (r, p) in peers.iter_mut().enumerate() {
                if local[r] {
                    p.base = area.data_addr(r as u32);
                }
            }
        }
        let far = if spans {
            Some(Arc::new(Self::connect_far(
                win, &area, &local, &mut peers, func,
            )?))
        } else {
            None
        };
        let remote = match win.flavor {
            Flavor::Create if !spans => {
                peer_maps::map_peers(comm, &peers, win.memory.base, win.memory.size)?
            }
            _ => Arc::default(),
        };
        // CPU atomics only where every process reaches every rank's memory by address (never
        // on a window spanning nodes: UCP and CPU updates must not race on one element).
        let acc = if (mapped || remote.everywhere) && !spans {
            AccPath::Atomics
        } else {
            AccPath::Mutex
        };
        Ok(WinRma {
            peers,
            comm: comm.clone(),
            mapped,
            remote,
            dyn_maps: Arc::new(dyn_maps::DynMaps::new(n)),
            flavor: win.flavor,
            me: comm.rank,
            epochs: Arc::new(Mutex::new(Epochs::new(n))),
            flags: epoch::new_flags(n).into(),
            claims: notify::Claims::new(),
            strict: AtomicBool::new(false),
            in_flight: Arc::new(scope::Tracker::new()),
            thread_scope: AtomicBool::new(false),
            handle: None,
            acc,
            far,
            area: Arc::new(area),
            key,
        })
    }

    /// The window's segment for this process's node (collective): the node's lowest rank of
    /// the window creates it for the node's ranks (`local`), every rank learns every
    /// segment's name, and the others of the node attach it. Also the window's key (from
    /// rank 0's segment name, the same everywhere).
    fn node_segment(
        comm: &Comm,
        local: &[bool],
        layout: WinLayout,
        func: &str,
    ) -> MpiResult<(WinArea, u32)> {
        let n = local.len();
        let inst = &comm.session.instance;
        let leader = local.iter().position(|&l| l).unwrap_or(comm.rank as usize);
        let participants = local.iter().filter(|&&l| l).count() as u32;
        // Each rank sends its node's leader, then (a leader) its segment's name.
        const ENTRY: usize = 4 + NAME_BYTES;
        let mut name = Scratch::new(ENTRY);
        name.bytes_mut()[..4].copy_from_slice(&(leader as u32).to_le_bytes());
        let mut area = None;
        if comm.rank as usize == leader {
            let k = CREATED.fetch_add(1, Ordering::Relaxed);
            let path = inst
                .job
                .segment_name(format_args!("win.{}.{k}", std::process::id()));
            if path.len() < NAME_BYTES {
                if let Ok(a) = WinArea::create(&path, layout.clone(), participants) {
                    name.bytes_mut()[4..4 + path.len()].copy_from_slice(path.as_bytes());
                    area = Some(a);
                }
            }
        }
        let mut names = Scratch::new(ENTRY * n);
        coll::allgather(comm, Some(&name.buf()), &names.buf())?;
        let names = names.bytes();
        let leader_of = |r: usize| {
            u32::from_le_bytes(names[r * ENTRY..r * ENTRY + 4].try_into().expect("4 bytes"))
                as usize
        };
        let name_of = |r: usize| {
            let b = &names[r * ENTRY + 4..(r + 1) * ENTRY];
            &b[..b.iter().position(|&c| c == 0).unwrap_or(NAME_BYTES)]
        };
        // Every rank sees every node's outcome, so all of them fail together.
        if (0..n).any(|r| leader_of(r) >= n || name_of(leader_of(r)).is_empty()) {
            return Err(MpiError::new(
                ErrorClass::NoMem,
                format!("{func}: a node's lowest rank could not create the window's shared memory"),
            ));
        }
        let key = memhandle::window_key(name_of(0));
        let area = match area {
            Some(a) => a,
            None => {
                let path = String::from_utf8_lossy(name_of(leader)).into_owned();
                WinArea::attach(&path, layout, participants).map_err(|e| shm_error(func, e))?
            }
        };
        Ok((area, key))
    }

    /// Register this process's memory with UCX and reach the ranks on other nodes
    /// (collective); their `peers` entries get their memory's address in their process.
    fn connect_far(
        win: &Win,
        area: &WinArea,
        local: &[bool],
        peers: &mut [Peer],
        func: &str,
    ) -> MpiResult<far::Far> {
        let comm = &win.comm;
        let n = local.len();
        let me = comm.rank;
        let ucx = comm.session.instance.transports.ucx.ok_or_else(|| {
            MpiError::new(
                ErrorClass::Other,
                format!("{func}: the window spans nodes but this process has no UCX transport"),
            )
        })?;
        let (data, data_base) = match win.flavor {
            Flavor::Create => (
                Some((win.memory.base, win.memory.size as usize)),
                win.memory.base as u64,
            ),
            _ => (None, area.data_addr(me) as u64),
        };
        // The segment is mapped while `area` lives, which the window's `WinRma` keeps beyond its
        // `Far` (declared first, dropped first); a created window's memory is the program's,
        // valid until `MPI_Win_free` (MPI 4.1 §12.2.1), which drops the `WinRma`.
        // SAFETY: both stay mapped while the registrations live (above).
        let (regs, card) = unsafe { far::Far::register(ucx, area.span(), data, data_base) };
        let mut send = Scratch::from_bytes(&card.encode());
        let mut all = Scratch::new(far::Card::BYTES * n);
        coll::allgather(comm, Some(&send.buf()), &all.buf())?;
        let cards: Vec<far::Card> = all
            .bytes()
            .chunks(far::Card::BYTES)
            .map(far::Card::decode)
            .collect();
        if let Some(bad) = cards.iter().position(|c| c.seg_key == 0) {
            return Err(MpiError::new(
                ErrorClass::Other,
                format!("{func}: window rank {bad} could not register its memory with UCX"),
            ));
        }
        let width = cards
            .iter()
            .map(|c| (c.seg_key + c.data_key) as usize)
            .max()
            .unwrap_or(0);
        let mut keys = Scratch::new(width);
        {
            let out = keys.bytes_mut();
            let mut at = 0;
            for r in &regs {
                out[at..at + r.packed().len()].copy_from_slice(r.packed());
                at += r.packed().len();
            }
        }
        let mut all_keys = Scratch::new(width * n);
        coll::allgather(comm, Some(&keys.buf()), &all_keys.buf())?;
        let key_bytes: Vec<&[u8]> = all_keys.bytes().chunks(width).collect();
        let members = comm.group.members();
        let far_jobs: Vec<Option<u32>> = (0..n).map(|r| (!local[r]).then(|| members[r])).collect();
        for (r, p) in peers.iter_mut().enumerate() {
            if !local[r] {
                p.base = cards[r].data_base as usize;
            }
        }
        far::Far::connect(
            ucx,
            regs,
            area.span().0,
            &cards,
            &key_bytes,
            &far_jobs,
            func,
        )
    }

    /// Another view of this window's RMA state (`MPIX_Win_dup_with_info`): same memory,
    /// segment and epochs, its own `mpi_assert_accumulate_intrinsic` setting.
    pub fn view(&self) -> WinRma {
        WinRma {
            peers: self.peers.clone(),
            comm: self.comm.clone(),
            far: self.far.clone(),
            area: self.area.clone(),
            mapped: self.mapped,
            remote: self.remote.clone(),
            dyn_maps: self.dyn_maps.clone(),
            flavor: self.flavor,
            me: self.me,
            epochs: self.epochs.clone(),
            flags: self.flags.clone(),
            claims: self.claims.clone(),
            strict: AtomicBool::new(self.strict.load(Ordering::Relaxed)),
            in_flight: self.in_flight.clone(),
            thread_scope: AtomicBool::new(self.thread_scope.load(Ordering::Relaxed)),
            handle: self.handle.clone(),
            acc: self.acc,
            key: self.key,
        }
    }

    /// Set `mpi_assert_accumulate_intrinsic` for this view.
    pub fn set_strict(&self, on: bool) {
        self.strict.store(on, Ordering::Relaxed);
    }

    /// Set `mpi_win_scope` for this view (`true`: `thread`).
    pub fn set_thread_scope(&self, on: bool) {
        self.thread_scope.store(on, Ordering::Relaxed);
    }

    /// An operation of the calling thread begins (it ends when the guard is dropped): tracked
    /// for process-scope flushes while calls may overlap (`scope`), else nothing.
    #[inline(always)]
    fn begin_op(&self) -> Option<scope::InFlight<'_>> {
        calls_may_overlap().then(|| self.in_flight.begin())
    }

    /// This process's memory in the window when the segment holds it (allocated flavors).
    pub fn local_base(&self) -> usize {
        self.area.data_addr(self.me)
    }

    /// `MPI_Win_shared_query`: rank `r`'s memory as this process sees it (address, size,
    /// displacement unit); `None` for `MPI_PROC_NULL` means the lowest rank with memory.
    /// Memory this process cannot load from (a window over another process's own memory, a
    /// rank without memory) is a null address and size 0 (MPI 4.1 §12.2.3).
    pub fn shared_query(&self, r: Option<u32>) -> (usize, u64, u32) {
        let far = |r: u32| self.far.as_ref().is_some_and(|f| f.is_far(r));
        let r = match r {
            Some(r) => r,
            None => self.peers.iter().position(|p| p.size > 0).unwrap_or(0) as u32,
        };
        let p = self.peers[r as usize];
        if !self.mapped || p.size == 0 || far(r) {
            return (0, 0, p.disp_unit);
        }
        (self.area.data_addr(r), p.size, p.disp_unit)
    }

    /// `MPI_Win_attach`/`detach` changed this process's regions of a dynamic window:
    /// publish them (`regions` reads them) to the other processes.
    pub fn publish_attached(&self, regions: impl FnOnce() -> Vec<(usize, u64)>) {
        if self.flavor == Flavor::Dynamic {
            self.dyn_maps
                .publish(&self.area, self.me, self.far.as_deref(), regions);
        }
    }

    /// How this process reaches `len` bytes at address `addr` of target `t`'s dynamic window;
    /// `acc`: for an accumulate-type operation, which must not decide from a table being
    /// rewritten (`dyn_maps`), so waits for the rewrite to end.
    fn find_attached(&self, t: u32, addr: usize, len: usize, acc: bool) -> dyn_maps::Found {
        let pid = self.peers[t as usize].pid;
        let (area, me) = (&self.area, self.me);
        if !acc {
            return self.dyn_maps.find(area, t, me, pid, addr, len, None);
        }
        let mut backoff = self.comm.session.instance.backoff();
        let mut idle = || backoff.idle();
        self.dyn_maps
            .find(area, t, me, pid, addr, len, Some(&mut idle))
    }

    /// Target `t`'s process, reached by cross-memory attach.
    fn reach_process(&self, t: u32) -> Reach {
        let p = &self.peers[t as usize];
        Reach::Process {
            pid: p.pid,
            base: p.base,
        }
    }

    /// How this process reaches target `t`'s window memory (not a dynamic window's: its
    /// regions are found by `find_attached`).
    fn reach(&self, t: u32) -> Reach {
        let p = &self.peers[t as usize];
        if self.is_far(t) {
            return Reach::Far {
                rank: t,
                base: p.base,
            };
        }
        if self.mapped
            || (t == self.me && self.flavor != Flavor::Dynamic)
            || self.handle.as_ref().is_some_and(|h| h.is_mapped())
        {
            Reach::Mapped(p.base)
        } else if let Some(&Some(addr)) = self.remote.addrs.get(t as usize) {
            Reach::Mapped(addr)
        } else {
            self.reach_process(t)
        }
    }

    /// Where accumulate-type operations on this view's memory run (not a dynamic window's:
    /// each region decides, see `dyn_maps`), set at creation.
    #[inline]
    fn acc_path(&self) -> AccPath {
        self.acc
    }

    /// `acc` for a memory-handle view: CPU atomics over a shareable block (as on the dynamic
    /// window, which every process reaches by address), unless this process could not map it.
    fn handle_acc_path(&self) -> AccPath {
        match &self.handle {
            Some(h) if h.is_shared() => {
                if h.is_mapped() || h.target == self.me {
                    AccPath::Atomics
                } else {
                    AccPath::Refused
                }
            }
            Some(_) => AccPath::Mutex,
            None => self.acc,
        }
    }

    /// Whether window rank `t` is on another node (reached through UCX).
    #[inline]
    fn is_far(&self, t: u32) -> bool {
        self.far.as_ref().is_some_and(|f| f.is_far(t))
    }

    fn epochs(&self) -> std::sync::MutexGuard<'_, Epochs> {
        self.epochs.lock().unwrap_or_else(|p| p.into_inner())
    }
}
