//! The VCI unit: everything that runs under one VCI's lock. A VCI owns one partition of the
//! communication state (request pool, matching queues, transport receive position, queued
//! outgoing messages, pipelined sends, internal schedules) behind its own lock, so that
//! traffic on different VCIs never contends. The lock is an `OptLock`: it really locks only
//! under `MPI_THREAD_MULTIPLE`.
//!
//! - `engine`: sending, receiving, arrivals, the eager/rendezvous/synchronous protocols.
//! - `protocol`: the message kinds and the wire header the engine exchanges with peers.
//! - `matching`: the posted and unexpected queues.
//! - `cancel`: withdrawing a send's message (`MPI_Cancel`), here or at the receiver.
//! - `sent`: where the recent eager sends that returned the shared completed request went.
//! - `schedule`: internal schedules (nonblocking collectives, `MPI_Isendrecv`, `MPI_Comm_idup`)
//!   stepped by the progress pass.
//!
//! These files call each other (a schedule step starts sends through the engine; the
//! engine's progress pass steps the schedules): the one place where imports go both ways.
//! Outside the unit, the state is reached only through `Vci::lock` and the methods and
//! engine functions below; its queues are private to the unit.
#![forbid(unsafe_code)]

pub mod cancel;
pub mod engine;
pub mod matching;
pub mod protocol;
pub mod schedule;
pub mod sent;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::request::{ReqId, RequestPool};
use crate::sync::{OptGuard, OptLock};
use crate::transport::shm::pair::{PairEnd, PairRing, PairsIn, PairsOut};
use crate::transport::shm::Consumer;
use crate::transport::ucx::BulkOp;
use engine::{Bulk, Outgoing, Stream};
use matching::{Matching, Unexpected};
use schedule::Schedule;
use sent::SentLog;

/// The per-VCI state guarded by the VCI's lock.
pub struct VciState {
    pub requests: RequestPool,
    matching: Matching,
    /// The recent sends that returned the shared completed request (`sent`).
    sent: SentLog,
    /// This process's position in its receive queue for this VCI.
    rx: Consumer,
    /// Messages waiting for room in a peer's ring, in order.
    pending: VecDeque<Outgoing>,
    /// Pipelined rendezvous sends still streaming.
    streams: Vec<Stream>,
    /// Rendezvous data moving through UCX in one piece (`transport::ucx::bulk`).
    bulk: Vec<(BulkOp, Bulk)>,
    /// Internal schedules still running (`schedule`), with their requests.
    schedules: Vec<(ReqId, Box<dyn Schedule>)>,
    /// Single-producer rings to and from other processes' stream VCIs (a stream VCI's own;
    /// empty elsewhere): see `transport::shm::pair`.
    pairs_out: PairsOut,
    pairs_in: PairsIn,
    /// The network transport's failure count when this VCI last failed the operations
    /// waiting on it (`engine::fail_network_waits`).
    network_failures: u64,
    /// Rendezvous sends of this VCI not complete yet (their requests' `expected` is their
    /// size): while there are any, `WEFT_SHM_LARGE=auto` receives large messages with one copy.
    large_sends: u32,
}

/// What a VCI hands on to the same VCI of the next instance when its own goes away between
/// sessions: its position in its ring, and the messages it took from the ring that nothing
/// has received yet (a peer may have sent them for a communicator this process creates
/// next, such as the context-id agreement of a peer's `MPI_Comm_create_from_group`).
pub struct Carried {
    rx_position: u64,
    unexpected: VecDeque<Unexpected>,
}

impl VciState {
    /// Whether nothing is in flight that needs this state to finish: no send waiting for
    /// ring space or streaming (or moving through UCX), no internal schedule running.
    pub fn is_quiet(&self) -> bool {
        self.pending.is_empty()
            && self.streams.is_empty()
            && self.bulk.is_empty()
            && self.schedules.is_empty()
    }

    /// Whether operations on this VCI wait for something from peers: messages queued or
    /// streaming out, schedules running, or requests not complete yet.
    pub fn awaits_peers(&self) -> bool {
        !self.is_quiet() || self.requests.any_incomplete()
    }

    /// Run `f` with the receive position taken out of the state, so that `f` may hand each
    /// arrival to code that needs the whole state. `f` must not receive through the state
    /// it is given (its position is a placeholder meanwhile); nothing in the engine does.
    #[inline]
    fn with_rx<R>(&mut self, f: impl FnOnce(&mut Consumer, &mut VciState) -> R) -> R {
        let mut rx = std::mem::replace(&mut self.rx, Consumer::at(u64::MAX));
        let r = f(&mut rx, self);
        self.rx = rx;
        r
    }

    /// Whether the pair ring to `end` is open already.
    pub fn has_pair_out(&self, end: PairEnd) -> bool {
        self.pairs_out.has(end)
    }

    /// Whether the pair ring from `end` is open already.
    pub fn has_pair_in(&self, end: PairEnd) -> bool {
        self.pairs_in.has(end)
    }

    /// Send to `end` through `ring` from now on (this VCI is its only producer).
    pub fn add_pair_out(&mut self, end: PairEnd, ring: PairRing) {
        self.pairs_out.add(end, ring);
    }

    /// Drain `ring`, from `end`, in every progress pass from now on.
    pub fn add_pair_in(&mut self, end: PairEnd, ring: PairRing) {
        self.pairs_in.add(end, ring);
    }

    /// Hand on what the next instance's VCI needs (see `Carried`); posted receives and
    /// requests go with this state.
    pub fn carry(&mut self) -> Carried {
        Carried {
            rx_position: self.rx.position(),
            unexpected: self.matching.take_all_unexpected(),
        }
    }
}

/// One virtual communication interface.
pub struct Vci {
    pub index: usize,
    state: OptLock<VciState>,
    /// `requests.stand_ins()` as of the last change, readable without the lock: while it
    /// is 0, a completed-send handle is complete and nothing more (`MPI_Wait`'s fast path).
    stand_ins: AtomicUsize,
}

impl Vci {
    /// VCI `index`, fresh or continuing from what an earlier instance's VCI `carried`.
    pub fn new(index: usize, threaded: bool, carried: Option<Carried>) -> Vci {
        let carried = carried.unwrap_or(Carried {
            rx_position: 0,
            unexpected: VecDeque::new(),
        });
        let state = VciState {
            requests: RequestPool::new(index as u8),
            matching: Matching::with_unexpected(index, carried.unexpected),
            rx: Consumer::at(carried.rx_position),
            sent: SentLog::default(),
            pending: VecDeque::new(),
            streams: Vec::new(),
            bulk: Vec::new(),
            schedules: Vec::new(),
            pairs_out: PairsOut::default(),
            pairs_in: PairsIn::default(),
            network_failures: 0,
            large_sends: 0,
        };
        Vci {
            index,
            state: OptLock::new(state, threaded),
            stand_ins: AtomicUsize::new(0),
        }
    }

    /// Make the lock really lock (a session asked for `MPI_THREAD_MULTIPLE`, or a progress
    /// thread starts on this VCI).
    pub fn enable_threads(&self) {
        self.state.enable_threads();
    }

    /// Stop really locking (see `OptLock::disable_threads`).
    pub fn disable_threads(&self) {
        self.state.disable_threads();
    }

    /// Whether several threads may use this VCI at once.
    #[inline]
    pub fn is_threaded(&self) -> bool {
        self.state.is_threaded()
    }

    /// Whether every completed-send handle of this VCI is simply complete: no `MPI_Cancel`
    /// of one is waiting to be taken (see `RequestPool::stand_in`). No lock: a cancel made
    /// before (in the program's order) is seen.
    #[inline]
    pub fn completed_sends_plain(&self) -> bool {
        self.stand_ins.load(Ordering::Relaxed) == 0
    }

    /// Publish `st.requests.stand_ins()` after it changed (`st` is this VCI's locked state).
    pub fn note_stand_ins(&self, st: &VciState) {
        self.stand_ins
            .store(st.requests.stand_ins(), Ordering::Relaxed);
    }

    /// Lock this VCI's state.
    #[inline]
    pub fn lock(&self) -> OptGuard<'_, VciState> {
        self.state.lock()
    }
}
