//! A VCI owns one partition of the communication state (matching queues, request pool,
//! transport receive position, queued outgoing messages) behind its own lock, so that
//! traffic on different VCIs never contends. The lock is an `OptLock`: it really locks only
//! under `MPI_THREAD_MULTIPLE`.
#![forbid(unsafe_code)]

use std::collections::VecDeque;

use crate::progress::schedule::Schedule;
use crate::pt2pt::engine::{Outgoing, Stream};
use crate::pt2pt::matching::{Matching, Unexpected};
use crate::request::{ReqId, RequestPool};
use crate::sync::{OptGuard, OptLock};

/// The per-VCI state guarded by the VCI's lock.
pub struct VciState {
    pub requests: RequestPool,
    pub matching: Matching,
    /// This process's consumer position in its shared-memory ring for this VCI.
    pub shm_head: u64,
    /// Messages waiting for room in a peer's ring, in order.
    pub pending: VecDeque<Outgoing>,
    /// Pipelined rendezvous sends still streaming.
    pub streams: Vec<Stream>,
    /// Internal schedules still running (`progress::schedule`), with their requests.
    pub schedules: Vec<(ReqId, Box<dyn Schedule>)>,
}

/// What a VCI hands on to the same VCI of the next instance when its own goes away between
/// sessions: its position in its ring, and the messages it took from the ring that nothing
/// has received yet (a peer may have sent them for a communicator this process creates
/// next, such as the context-id agreement of a peer's `MPI_Comm_create_from_group`).
pub struct Carried {
    shm_head: u64,
    unexpected: VecDeque<Unexpected>,
}

impl VciState {
    /// Whether nothing is in flight that needs this state to finish: no send waiting for
    /// ring space or streaming, no internal schedule running.
    pub fn is_quiet(&self) -> bool {
        self.pending.is_empty() && self.streams.is_empty() && self.schedules.is_empty()
    }

    /// Hand on what the next instance's VCI needs (see `Carried`); posted receives and
    /// requests go with this state.
    pub fn carry(&mut self) -> Carried {
        Carried {
            shm_head: self.shm_head,
            unexpected: self.matching.take_all_unexpected(),
        }
    }
}

/// One virtual communication interface.
pub struct Vci {
    pub index: usize,
    state: OptLock<VciState>,
}

impl Vci {
    /// VCI `index`, fresh or continuing from what an earlier instance's VCI `carried`.
    pub fn new(index: usize, threaded: bool, carried: Option<Carried>) -> Vci {
        let carried = carried.unwrap_or(Carried {
            shm_head: 0,
            unexpected: VecDeque::new(),
        });
        let state = VciState {
            requests: RequestPool::new(index as u8),
            matching: Matching::with_unexpected(carried.unexpected),
            shm_head: carried.shm_head,
            pending: VecDeque::new(),
            streams: Vec::new(),
            schedules: Vec::new(),
        };
        Vci {
            index,
            state: OptLock::new(state, threaded),
        }
    }

    /// Make the lock really lock (a session asked for `MPI_THREAD_MULTIPLE`).
    pub fn enable_threads(&self) {
        self.state.enable_threads();
    }

    /// Whether several threads may use this VCI at once.
    pub fn is_threaded(&self) -> bool {
        self.state.is_threaded()
    }

    /// Lock this VCI's state.
    pub fn lock(&self) -> OptGuard<'_, VciState> {
        self.state.lock()
    }
}
