//! Progress, partitioned into VCIs (virtual communication interfaces), and waiting.
#![forbid(unsafe_code)]

pub mod vci;

pub use vci::Vci;

use crate::pt2pt::engine;
use crate::request::{ReqId, Status};
use crate::runtime::Instance;

/// How a waiting thread spends empty polls: spinning (no system call) for the configured
/// number of polls, then yielding its core between polls.
pub struct Backoff {
    idle: u32,
    spin: u32,
}

impl Backoff {
    pub fn new(inst: &Instance) -> Backoff {
        Backoff {
            idle: 0,
            spin: inst.config.progress_spin,
        }
    }

    pub fn idle(&mut self) {
        if self.idle < self.spin {
            self.idle += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }

    pub fn reset(&mut self) {
        self.idle = 0;
    }
}

/// One progress pass on a VCI.
pub fn poke(inst: &Instance, vci: usize) -> bool {
    let mut st = inst.vcis[vci].lock();
    engine::progress(&inst.transports, vci, &mut st)
}

/// One progress pass on every VCI (`MPIX_Stream_progress(MPIX_STREAM_NULL)`).
pub fn poke_all(inst: &Instance) -> bool {
    (0..inst.vcis.len()).fold(false, |worked, v| poke(inst, v) | worked)
}

/// A finished request: its status and the owner id its creator stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completed {
    pub status: Status,
    pub owner: usize,
}

/// If request `id` is complete, release it and return its status.
pub fn take_if_complete(inst: &Instance, id: ReqId) -> Option<Completed> {
    let vci = id.vci as usize;
    let mut st = inst.vcis[vci].lock();
    if !st.requests.get(id).is_some_and(|r| r.complete) {
        engine::progress(&inst.transports, vci, &mut st);
    }
    match st.requests.get(id) {
        Some(r) if r.complete => st.requests.release(id).map(|r| Completed {
            status: r.status,
            owner: r.owner,
        }),
        _ => None,
    }
}

/// Wait until request `id` completes; release it and return its status.
pub fn wait(inst: &Instance, id: ReqId) -> Completed {
    let mut backoff = Backoff::new(inst);
    loop {
        if let Some(done) = take_if_complete(inst, id) {
            return done;
        }
        backoff.idle();
    }
}

/// The status of request `id` if it is complete, without releasing it
/// (`MPI_Request_get_status`). `None` while pending or for an unknown id.
pub fn peek_status(inst: &Instance, id: ReqId) -> Option<Status> {
    let vci = id.vci as usize;
    let mut st = inst.vcis[vci].lock();
    engine::progress(&inst.transports, vci, &mut st);
    st.requests.get(id).filter(|r| r.complete).map(|r| r.status)
}

/// Whether `id` names a live request.
pub fn exists(inst: &Instance, id: ReqId) -> bool {
    inst.vcis
        .get(id.vci as usize)
        .is_some_and(|v| v.lock().requests.get(id).is_some())
}

/// `MPI_Request_free`: a complete request goes now, a pending one when it completes.
pub fn detach(inst: &Instance, id: ReqId) -> bool {
    let mut st = inst.vcis[id.vci as usize].lock();
    match st.requests.get_mut(id) {
        Some(r) if r.complete => {
            st.requests.release(id);
            true
        }
        Some(r) => {
            r.detached = true;
            true
        }
        None => false,
    }
}

/// A request that is complete from the start (operations with `MPI_PROC_NULL`).
pub fn completed(inst: &Instance, vci: usize, status: Status, owner: usize) -> ReqId {
    let mut req = crate::request::Request::completed(crate::request::Kind::Recv, status);
    req.owner = owner;
    inst.vcis[vci].lock().requests.alloc(req)
}
