//! A VCI owns one partition of the communication state (matching queues, request pool,
//! transport receive position, queued outgoing messages) behind its own lock, so that
//! traffic on different VCIs never contends. The lock is an `OptLock`: it really locks only
//! under `MPI_THREAD_MULTIPLE`.
#![forbid(unsafe_code)]

use std::collections::VecDeque;

use crate::progress::schedule::Schedule;
use crate::pt2pt::engine::{Outgoing, Stream};
use crate::pt2pt::matching::Matching;
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

/// One virtual communication interface.
pub struct Vci {
    pub index: usize,
    state: OptLock<VciState>,
}

impl Vci {
    pub fn new(index: usize, threaded: bool) -> Vci {
        let state = VciState {
            requests: RequestPool::new(index as u8),
            matching: Matching::default(),
            shm_head: 0,
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
