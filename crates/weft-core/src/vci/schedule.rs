//! Internal schedules: requests whose completion is driven by code that runs inside a VCI's
//! progress pass, with the VCI's state in hand (`&mut VciState`), so that it can start and
//! finish sends and receives through the engine without taking any lock.
//!
//! This is the hook nonblocking collectives (and `MPI_Isendrecv`) are built on:
//!
//! ```ignore
//! let id = progress::start_schedule(inst, comm.vci, owner, Box::new(move |cx: &mut Cx<'_>| {
//!     // called once at start (under the lock), then in every progress pass of the VCI
//!     // until it returns Step::Done(status); the request `id` then completes with `status`.
//!     ...
//!     Step::Pending
//! }));
//! ```
//!
//! Rules for a schedule: it runs with the VCI lock held, so it must not block, must not
//! call back into MPI, and must not run user callbacks (user reduction operators included:
//! a schedule that needs one returns `Step::Pending` and lets its waiter run the operator
//! outside the lock, or uses the polled-work hook in `progress::polled`). It may only touch
//! requests of its own VCI (`cx`). Returning `Done` releases the schedule (its captured
//! buffers are dropped then).
#![forbid(unsafe_code)]

use super::engine::{self, SendStart};
use super::VciState;
use crate::datatype::Buf;
use crate::error::MpiResult;
use crate::message::{Pattern, SendMode, Status, Target};
use crate::request::{Kind, ReqId, Request};
use crate::transport::Transports;

/// What a schedule step reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Pending,
    /// The schedule is finished; its request completes with this status.
    Done(Status),
}

/// A schedule's view of its VCI during a step.
pub struct Cx<'a> {
    pub transports: &'a Transports,
    pub vci: usize,
    pub st: &'a mut VciState,
}

impl Cx<'_> {
    /// Start a send; the returned request is the schedule's to `take`.
    pub fn isend(&mut self, target: Target, buf: Buf, mode: SendMode) -> MpiResult<ReqId> {
        match engine::start_send(self.transports, self.vci, self.st, target, buf, mode, true)? {
            SendStart::Pending(id) => Ok(id),
            SendStart::Done => unreachable!("a forced request is always returned"),
        }
    }

    /// Post a receive; the returned request is the schedule's to `take`.
    pub fn irecv(&mut self, pattern: Pattern, buf: Buf) -> ReqId {
        engine::start_recv(self.transports, self.vci, self.st, pattern, buf, 0)
    }

    /// Whether request `id` is complete.
    pub fn is_complete(&self, id: ReqId) -> bool {
        self.st.requests.get(id).is_some_and(|r| r.complete)
    }

    /// If `id` is complete, release it and return its status.
    pub fn take(&mut self, id: ReqId) -> Option<Status> {
        if !self.is_complete(id) {
            return None;
        }
        self.st.requests.release(id).map(|r| r.status)
    }
}

/// The code of a schedule.
pub trait Schedule: Send {
    fn step(&mut self, cx: &mut Cx<'_>) -> Step;
}

impl<F: FnMut(&mut Cx<'_>) -> Step + Send> Schedule for F {
    fn step(&mut self, cx: &mut Cx<'_>) -> Step {
        self(cx)
    }
}

/// Start a schedule on `vci`, whose lock the caller holds (`progress::start_schedule`
/// takes it): it runs its first step now. Returns the request that completes when the
/// schedule reports `Done`; a `detached` one is released then instead (nobody waits for it).
pub fn start(
    t: &Transports,
    vci: usize,
    st: &mut VciState,
    owner: usize,
    detached: bool,
    mut sched: Box<dyn Schedule>,
) -> ReqId {
    let mut req = Request::new(Kind::Schedule, Buf::EMPTY);
    req.owner = owner;
    req.detached = detached;
    let id = st.requests.alloc(req);
    let step = sched.step(&mut Cx {
        transports: t,
        vci,
        st,
    });
    match step {
        Step::Done(status) => engine::complete(st, id, status),
        Step::Pending => st.schedules.push((id, sched)),
    }
    id
}

/// Run one step of every schedule of the VCI (from the progress pass). Returns whether one
/// finished.
pub fn run(t: &Transports, vci: usize, st: &mut VciState) -> bool {
    if st.schedules.is_empty() {
        return false;
    }
    let mut list = std::mem::take(&mut st.schedules);
    let mut finished = false;
    list.retain_mut(|(id, sched)| {
        let step = sched.step(&mut Cx {
            transports: t,
            vci,
            st: &mut *st,
        });
        match step {
            Step::Pending => true,
            Step::Done(status) => {
                engine::complete(st, *id, status);
                finished = true;
                false
            }
        }
    });
    // Schedules started during the steps were pushed onto the (emptied) list: keep them after.
    list.append(&mut st.schedules);
    st.schedules = list;
    finished
}
