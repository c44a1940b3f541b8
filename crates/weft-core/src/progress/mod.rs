//! Progress over an instance's VCIs, and completion: waiting for and taking finished
//! requests of every kind (point-to-point, persistent, generalized, schedules) out of their
//! pools. `persistent` starts persistent requests, `greq` drives generalized ones.
#![forbid(unsafe_code)]

pub mod greq;
pub mod persistent;
pub mod thread;

use std::sync::Arc;

use crate::instance::Instance;
use crate::message::Status;
use crate::polled;
use crate::request::{Ext, Grequest, Kind, PersistentState, ReqId, Request};
use crate::sync::Backoff;
use crate::vci::schedule::{self, Schedule};
use crate::vci::{engine, VciState};

/// One progress pass on a VCI.
pub fn poke(inst: &Instance, vci: usize) -> bool {
    let mut st = inst.vcis[vci].lock();
    engine::progress(&inst.transports, vci, &mut st)
}

/// One progress pass on every implicit VCI (a stream's VCI is progressed only through its
/// own operations, `MPIX_Stream_progress` and its progress thread: its user serialises it).
pub fn poke_all(inst: &Instance) -> bool {
    inst.implicit_vcis()
        .fold(false, |worked, v| poke(inst, v) | worked)
}

/// `MPIX_Stream_progress(MPIX_STREAM_NULL)`: every implicit VCI and the polled work.
pub fn progress_all(inst: &Instance) -> bool {
    let worked = poke_all(inst);
    polled::run() | worked
}

/// A finished request: its status and the owner id its creator stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completed {
    pub status: Status,
    pub owner: usize,
    /// A persistent request: its handle stays valid (it became inactive, not freed).
    pub persistent: bool,
    /// It was an inactive persistent request: the status is the empty status.
    pub inactive: bool,
}

impl Completed {
    /// A standard send that completed when it started.
    pub const SEND: Completed = Completed {
        status: Status {
            source: 0,
            tag: 0,
            error: 0,
            bytes: 0,
            cancelled: false,
            sizes_differ: false,
        },
        owner: 0,
        persistent: false,
        inactive: false,
    };

    fn of(req: &Request, status: Status) -> Completed {
        Completed {
            status,
            owner: req.owner,
            persistent: req.kind == Kind::Persistent,
            inactive: false,
        }
    }
}

/// What one look at a request found (with its VCI locked).
enum Look {
    /// No request has this id (stale or forged).
    Unknown,
    Pending,
    Done(Completed),
    /// A complete generalized request whose slot was released: its `query_fn`/`free_fn` run
    /// after the lock is dropped.
    Greq(Arc<Grequest>, usize),
}

fn look(inst: &Instance, st: &mut VciState, vci: usize, id: ReqId, progress: bool) -> Look {
    if id.is_completed_send() {
        let Some(real) = st.requests.stand_in(id) else {
            return Look::Done(Completed::SEND);
        };
        // Its send is being cancelled: as the request carrying the cancel, taken with it.
        let found = look(inst, st, vci, real, progress);
        if !matches!(found, Look::Pending) {
            st.requests.end_stand_in(id);
            inst.vcis[vci].note_stand_ins(st);
        }
        return found;
    }
    let Some(req) = st.requests.get(id) else {
        return Look::Unknown;
    };
    match (&req.kind, &req.ext) {
        (Kind::Generalized, Ext::Greq(g)) => {
            if g.settle() {
                let g = g.clone();
                let owner = req.owner;
                st.requests.release(id);
                Look::Greq(g, owner)
            } else {
                Look::Pending
            }
        }
        (Kind::Persistent, Ext::Persistent(p)) => match p.state {
            PersistentState::Inactive => Look::Done(Completed {
                status: Status::default(),
                owner: req.owner,
                persistent: true,
                inactive: true,
            }),
            PersistentState::Done(status) => {
                let done = Completed::of(req, status);
                persistent::set_state(st, id, PersistentState::Inactive);
                Look::Done(done)
            }
            PersistentState::Running(inner) => {
                let owner = req.owner;
                if progress && !st.requests.get(inner).is_some_and(|r| r.complete) {
                    engine::progress(&inst.transports, vci, st);
                }
                match st.requests.get(inner) {
                    Some(r) if r.complete => {
                        let status = r.status;
                        st.requests.release(inner);
                        persistent::set_state(st, id, PersistentState::Inactive);
                        Look::Done(Completed {
                            status,
                            owner,
                            persistent: true,
                            inactive: false,
                        })
                    }
                    _ => Look::Pending,
                }
            }
        },
        _ => {
            let mut complete = req.complete;
            if progress && !complete {
                engine::progress(&inst.transports, vci, st);
                complete = st.requests.get(id).is_some_and(|r| r.complete);
            }
            if complete {
                let done = st.requests.release_with(id, |r| Completed::of(r, r.status));
                Look::Done(done.expect("just seen"))
            } else {
                Look::Pending
            }
        }
    }
}

/// Finish a complete generalized request outside every lock: `query_fn` then `free_fn`.
fn finish_greq(g: &Grequest, owner: usize) -> Completed {
    let mut status = g.class.query(g.state);
    let code = g.class.free(g.state);
    if status.error == 0 && code != 0 {
        status.error = code;
    }
    Completed {
        status,
        owner,
        persistent: false,
        inactive: false,
    }
}

/// `id` names no live request (a stale or forged handle).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoSuchRequest;

/// If request `id` is complete, release it (persistent ones become inactive) and return its
/// status. Runs the polled work first, so generalized requests' `poll_fn`s get their turn.
pub fn try_take(inst: &Instance, id: ReqId) -> Result<Option<Completed>, NoSuchRequest> {
    polled::run();
    let vci = id.vci() as usize;
    let found = {
        let mut st = inst.vcis.get(vci).ok_or(NoSuchRequest)?.lock();
        look(inst, &mut st, vci, id, true)
    };
    match found {
        Look::Unknown => Err(NoSuchRequest),
        Look::Pending => Ok(None),
        Look::Done(c) => Ok(Some(c)),
        Look::Greq(g, owner) => Ok(Some(finish_greq(&g, owner))),
    }
}

/// `try_take` for an id the library itself holds (it always names a live request).
pub fn take_if_complete(inst: &Instance, id: ReqId) -> Option<Completed> {
    try_take(inst, id).expect("an internal request id names a live request")
}

/// One pass over many requests (`MPI_Waitall`): run the polled work, make one progress pass
/// on each VCI involved, and take the complete requests of each VCI in order up to its first
/// pending one (each VCI locked once). Requests mostly complete in the order they were
/// started, so later ones are looked at in a later pass rather than again and again in
/// every pass; progress itself does not depend on being looked at. With `full`, every
/// request is looked at (the first pass, so that a stale handle is reported at once).
/// Each `ids[i]` that completed is handed to `on_done(i, ..)` (some with a VCI locked: it
/// must not call into the library) and becomes `None`; returns how many completed, or
/// `Err(i)` if `ids[i]` names no request (a stale or forged handle).
pub fn sweep(
    inst: &Instance,
    ids: &mut [Option<ReqId>],
    full: bool,
    mut on_done: impl FnMut(usize, Completed),
) -> Result<usize, usize> {
    polled::run();
    let mut count = 0;
    let mut greqs: Vec<(usize, Arc<Grequest>, usize)> = Vec::new();
    let mut vci_done = 0u64; // bit v: VCI v (< 64) already handled in this pass
    let mut i = 0;
    while i < ids.len() {
        let Some(first) = ids[i] else {
            i += 1;
            continue;
        };
        let vci = first.vci() as usize;
        if vci >= inst.vcis.len() {
            return Err(i);
        }
        if vci < 64 && vci_done & (1 << vci) != 0 {
            i += 1;
            continue;
        }
        if vci < 64 {
            vci_done |= 1 << vci;
        }
        let mut st = inst.vcis[vci].lock();
        engine::progress(&inst.transports, vci, &mut st);
        for (j, slot) in ids.iter_mut().enumerate().skip(i) {
            let Some(id) = *slot else { continue };
            if id.vci() as usize != vci {
                continue;
            }
            match look(inst, &mut st, vci, id, false) {
                Look::Unknown => return Err(j),
                Look::Pending if full => {}
                Look::Pending => break,
                Look::Done(c) => {
                    on_done(j, c);
                    *slot = None;
                    count += 1;
                }
                Look::Greq(g, owner) => {
                    greqs.push((j, g, owner));
                    *slot = None;
                }
            }
        }
        drop(st);
        i += 1;
    }
    // Generalized requests' query_fn/free_fn run with no lock held.
    for (j, g, owner) in greqs {
        on_done(j, finish_greq(&g, owner));
        count += 1;
    }
    Ok(count)
}

/// Wait until request `id` completes; release it and return its status.
pub fn wait_for(inst: &Instance, id: ReqId) -> Result<Completed, NoSuchRequest> {
    let mut backoff = inst.backoff();
    // Whether `id` is a generalized request that may block in its class's `wait_fn` (one
    // that answers `ready` is waited for by `wait_ready` instead).
    let mut is_greq = None;
    loop {
        if let Some(done) = try_take(inst, id)? {
            return Ok(done);
        }
        if is_greq.is_none() {
            let g = greq::pending(inst, id);
            if let Some(g) = g.as_ref().filter(|g| g.class.has_ready()) {
                wait_ready(inst, g, &mut backoff);
                continue;
            }
            is_greq = Some(g.is_some_and(|g| g.class.has_wait()));
        }
        let greq = is_greq == Some(true);
        if greq && greq::block_on(inst, &[id]) {
            continue;
        }
        watch_arrivals(inst, id.vci() as usize, &mut backoff);
    }
}

/// Polls of a `ready` class between progress passes (which may be what the request waits
/// for: a notification from another node through UCX).
const READY_POLLS: u32 = 64;

/// Wait until generalized request `g`, of a class that answers `ready`, is complete, asking
/// the class directly (a few loads per poll: no pool lock, no polled list), with a pass over
/// the VCIs and the polled work every `READY_POLLS` polls. The backoff counts those passes,
/// not the polls: counted per poll, the spin ran out in a few hundred nanoseconds and the
/// wait yielded its core while a peer's cross-memory put was on its way (`rt_notify_create`
/// of bench/rma_seed004.c: about 4000 `sched_yield` per 10000 waits).
fn wait_ready(inst: &Instance, g: &Grequest, backoff: &mut Backoff) {
    let mut polls = 0u32;
    while !g.settle() {
        polls += 1;
        if polls.is_multiple_of(READY_POLLS) {
            progress_all(inst);
            backoff.idle();
        }
    }
}

/// Full passes between arrivals cost dozens of instructions each; when only an arrival can
/// change anything, poll the ring's next cell with single loads for a while instead.
const WATCH_POLLS: u32 = 256;

/// Idle until something may have changed on VCI `vci`: a message in its ring, or (after
/// `WATCH_POLLS` polls, or at once when there is other work) time for a full pass. Not
/// under `MPI_THREAD_MULTIPLE`, where another thread may take the arrival meanwhile.
fn watch_arrivals(inst: &Instance, vci: usize, backoff: &mut Backoff) {
    let watch = if polled::any() || inst.vcis[vci].is_threaded() {
        None
    } else {
        let st = inst.vcis[vci].lock();
        engine::arrival_watch(&inst.transports, vci, &st)
    };
    backoff.idle();
    if let Some(watch) = watch {
        for _ in 0..WATCH_POLLS {
            if watch.arrived() {
                return;
            }
            backoff.idle();
        }
    }
}

/// `wait_for` for an id the library itself holds.
pub fn wait(inst: &Instance, id: ReqId) -> Completed {
    wait_for(inst, id).expect("an internal request id names a live request")
}

/// The status of request `id` if it is complete, without releasing it
/// (`MPI_Request_get_status`). `None` while pending or for an unknown id. A generalized
/// request's `query_fn` is called for the status.
pub fn peek_status(inst: &Instance, id: ReqId) -> Option<Completed> {
    polled::run();
    let vci = id.vci() as usize;
    let greq = {
        let mut st = inst.vcis[vci].lock();
        engine::progress(&inst.transports, vci, &mut st);
        let req = st.requests.get(st.requests.resolve(id))?;
        match (&req.kind, &req.ext) {
            (Kind::Generalized, Ext::Greq(g)) => {
                if !g.settle() {
                    return None;
                }
                (g.clone(), req.owner)
            }
            (Kind::Persistent, Ext::Persistent(p)) => {
                let (status, inactive) = match p.state {
                    PersistentState::Inactive => (Status::default(), true),
                    PersistentState::Done(s) => (s, false),
                    PersistentState::Running(inner) => {
                        (st.requests.get(inner).filter(|r| r.complete)?.status, false)
                    }
                };
                return Some(Completed {
                    status,
                    owner: req.owner,
                    persistent: true,
                    inactive,
                });
            }
            _ => return req.complete.then(|| Completed::of(req, req.status)),
        }
    };
    let (g, owner) = greq;
    Some(Completed {
        status: g.class.query(g.state),
        owner,
        persistent: false,
        inactive: false,
    })
}

/// Whether request `id` is complete, without progress (`MPIX_Request_is_complete`).
pub fn is_complete(inst: &Instance, id: ReqId) -> bool {
    let st = inst.vcis[id.vci() as usize].lock();
    match st.requests.get(st.requests.resolve(id)) {
        None => false,
        Some(req) => match &req.ext {
            Ext::Greq(g) => g.settle(),
            Ext::Persistent(p) => match p.state {
                PersistentState::Inactive | PersistentState::Done(_) => true,
                PersistentState::Running(inner) => {
                    st.requests.get(inner).is_some_and(|r| r.complete)
                }
            },
            Ext::None | Ext::Sent { .. } => req.complete,
        },
    }
}

/// Whether `id` names a live request.
pub fn exists(inst: &Instance, id: ReqId) -> bool {
    inst.vcis
        .get(id.vci() as usize)
        .is_some_and(|v| v.lock().requests.get(id).is_some())
}

/// Whether `id` names a persistent request (and, if so, whether it is active).
pub fn persistent_state(inst: &Instance, id: ReqId) -> Option<PersistentState> {
    let st = inst.vcis[id.vci() as usize].lock();
    match &st.requests.get(id)?.ext {
        Ext::Persistent(p) => Some(p.state),
        _ => None,
    }
}

/// `MPI_Request_free`: a complete request goes now, a pending one when it completes. A
/// persistent request's running operation continues detached. A generalized request's
/// `free_fn` runs now if it is complete, else inside `MPI_Grequest_complete`.
pub fn detach(inst: &Instance, id: ReqId) -> bool {
    let greq = {
        let vci = id.vci() as usize;
        let mut st = inst.vcis[vci].lock();
        // A completed send is nothing to free, unless its send is being cancelled: then
        // the request carrying the cancel goes (when it completes).
        let id = match id.is_completed_send() {
            false => id,
            true => match st.requests.end_stand_in(id) {
                None => return true,
                Some(real) => {
                    inst.vcis[vci].note_stand_ins(&st);
                    real
                }
            },
        };
        let Some(r) = st.requests.get_mut(id) else {
            return false;
        };
        match &r.ext {
            Ext::Greq(g) => {
                let g = g.clone();
                // A request its class answers inline is only looked at by completion calls:
                // once freed none would, so it goes now, complete or not.
                let inline = g.settle() || g.class.has_ready();
                if !g.mark_freed() && !inline {
                    r.detached = true;
                    return true;
                }
                st.requests.release(id);
                g
            }
            Ext::Persistent(p) => {
                if let PersistentState::Running(inner) = p.state {
                    match st.requests.get_mut(inner) {
                        Some(i) if i.complete => {
                            st.requests.release(inner);
                        }
                        Some(i) => i.detached = true,
                        None => {}
                    }
                }
                st.requests.release(id);
                return true;
            }
            Ext::None | Ext::Sent { .. } => {
                if r.complete {
                    st.requests.release(id);
                } else {
                    r.detached = true;
                }
                return true;
            }
        }
    };
    greq.class.free(greq.state);
    true
}

/// A request that is complete from the start (operations with `MPI_PROC_NULL`).
pub fn completed(inst: &Instance, vci: usize, status: Status, owner: usize) -> ReqId {
    let mut req = crate::request::Request::completed(crate::request::Kind::Recv, status);
    req.owner = owner;
    inst.vcis[vci].lock().requests.alloc(req)
}

/// Start an internal schedule on `vci` (taking its lock): it runs its first step now.
/// Returns the request that completes when the schedule reports `Done` (see
/// `vci::schedule` for the rules a schedule follows).
pub fn start_schedule(
    inst: &Instance,
    vci: usize,
    owner: usize,
    sched: Box<dyn Schedule>,
) -> ReqId {
    let mut st = inst.vcis[vci].lock();
    schedule::start(&inst.transports, vci, &mut st, owner, false, sched)
}

/// `start_schedule` for a schedule nobody waits for: its request is released when it
/// finishes.
pub fn start_detached_schedule(inst: &Instance, vci: usize, sched: Box<dyn Schedule>) {
    let mut st = inst.vcis[vci].lock();
    schedule::start(&inst.transports, vci, &mut st, 0, true, sched);
}
