//! Request-based completion notification (Weft's extension; seed 004 §5.1 asks for it to
//! integrate with requests). Each rank of a window has `NOTIFY_SLOTS` counters in the
//! window's segment. A put or accumulate with a notification index (`MPIX_Put_notify`,
//! `MPIX_Accumulate_notify`) runs the operation, which completes at the call, then adds 1 to
//! the target's counter with release ordering (no fence of its own: the release add orders
//! the operation's stores, and a cross-memory attach call's, before the count). `MPIX_Win_notify_request` on the target
//! returns a generalized request that completes once the counter reaches the notifications
//! earlier requests on that index claimed plus `count`: requests on one index are served in
//! the order they were made, and every notification is counted by exactly one of them. The
//! request is a generalized request whose class answers `ready` (`GreqClass::has_ready`):
//! every completion call (`MPI_Wait*`, `MPI_Test*`) checks it inline with one acquire load of
//! the counter against the threshold (no polled list, no progress pass), so it mixes with
//! any other request, and `MPI_Wait` on it alone spins on that load.
//!
//! `MPI_Cancel` of a request whose notifications have not all arrived cancels it: it
//! completes at once with the cancelled flag, and gives its claim back, so every later
//! request on the index waits for `count` fewer notifications (as a cancelled receive
//! leaves its message to the next one). Only making and cancelling a request take the
//! index's lock; polls read one counter and one threshold.
#![forbid(unsafe_code)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use super::{words, WinRma};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::instance::Instance;
use crate::message::Status;
use crate::progress;
use crate::request::grequest::GreqClass;
use crate::request::ReqId;
use crate::transport::shm::win_area::{WinArea, NOTIFY_SLOTS};

/// Check a notification index (`MPI_ERR_ARG` outside `0..NOTIFY_SLOTS`).
pub fn check_index(idx: i32, func: &str) -> MpiResult<usize> {
    if idx < 0 || idx as usize >= NOTIFY_SLOTS {
        return Err(MpiError::new(
            ErrorClass::Arg,
            format!(
                "{func}(notification_idx={idx}): must lie in 0..{NOTIFY_SLOTS} (MPIX_WIN_NOTIFY_SLOTS)"
            ),
        ));
    }
    Ok(idx as usize)
}

/// One index's claims, this process as target: the notifications requests claimed so far,
/// and the requests that may still be waiting, in the order made (with some that no longer
/// wait: see `forget_done`).
#[derive(Default)]
struct Slot {
    taken: u64,
    waiting: VecDeque<Arc<NotifyWait>>,
    /// The length of `waiting` at which `forget_done` looks past its front.
    compact_at: usize,
    /// States of finished requests, theirs alone, kept for the next requests on the index
    /// (no allocation per request once the index is busy).
    spare: Vec<Arc<NotifyWait>>,
}

/// `waiting`'s length below which `forget_done` looks only at its front.
const COMPACT_MIN: usize = 64;
/// Finished requests' states kept per index for reuse.
const SPARE_MAX: usize = 32;

/// Whether a request no longer waits: it completed or was cancelled, or its request is gone
/// (freed: `waiting` holds the last reference, and no completion call can reach it).
fn finished(r: &Arc<NotifyWait>) -> bool {
    !r.pending() || Arc::strong_count(r) == 1
}

impl Slot {
    /// Forget requests that completed, were cancelled or were freed. Requests on an index
    /// complete in the order they were made, so those gather at the front, where one look
    /// per request made finds them (no walk over the requests still waiting, which an
    /// `early` batch of many makes long). Cancelled or freed ones behind a waiting front
    /// are swept out by a whole pass once the list has doubled since the last one, so it
    /// stays within twice the requests that may still be waiting.
    fn forget_done(&mut self) {
        while self.waiting.front().is_some_and(finished) {
            if let Some(r) = self.waiting.pop_front() {
                self.keep_spare(r);
            }
        }
        if self.waiting.len() >= self.compact_at.max(COMPACT_MIN) {
            self.waiting.retain(|r| !finished(r));
            self.compact_at = 2 * self.waiting.len();
        }
    }

    /// Keep a finished request's state for reuse when nothing else refers to it.
    fn keep_spare(&mut self, r: Arc<NotifyWait>) {
        if self.spare.len() < SPARE_MAX && Arc::strong_count(&r) == 1 {
            self.spare.push(r);
        }
    }

    /// A waiting state for a request claiming `count` notifications up to `until`: a spare
    /// one reset, or `make`'s.
    fn state_for(
        &mut self,
        count: u64,
        until: u64,
        make: impl FnOnce() -> NotifyWait,
    ) -> Arc<NotifyWait> {
        if let Some(mut r) = self.spare.pop() {
            // Unique (`keep_spare`, and no weak references are ever made).
            if let Some(w) = Arc::get_mut(&mut r) {
                w.count = count;
                *w.until.get_mut() = until;
                *w.state.get_mut() = PENDING;
                *w.id.get_mut() = NO_ID;
                return r;
            }
        }
        let mut w = make();
        w.count = count;
        *w.until.get_mut() = until;
        Arc::new(w)
    }
}

/// The claims on every index of a window, shared by its views.
pub struct Claims(Vec<Mutex<Slot>>);

impl Claims {
    pub fn new() -> Arc<Claims> {
        Arc::new(Claims(
            (0..NOTIFY_SLOTS).map(|_| Mutex::default()).collect(),
        ))
    }

    fn slot(&self, idx: usize) -> MutexGuard<'_, Slot> {
        self.0[idx].lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl std::fmt::Debug for Claims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Claims")
    }
}

/// A request's state: it leaves `PENDING` once, by completing or by being cancelled.
const PENDING: u8 = 0;
const DONE: u8 = 1;
const CANCELLED: u8 = 2;

/// The generalized-request class of one notification request.
struct NotifyWait {
    inst: Arc<Instance>,
    area: Arc<WinArea>,
    /// Weak: the claims keep their waiting requests (gone with the window: nothing to give
    /// back then).
    claims: Weak<Claims>,
    me: u32,
    idx: usize,
    /// The notifications it claimed.
    count: u64,
    /// The counter value that completes it (lowered when an earlier request is cancelled).
    until: AtomicU64,
    state: AtomicU8,
    /// Its request's id (`ReqId::bits`; `NO_ID` until `notify_request` stored it), which a
    /// cancel completes.
    id: AtomicU64,
}

const NO_ID: u64 = u64::MAX;

impl NotifyWait {
    fn arrived(&self) -> bool {
        let counter = &self.area.extra(self.me).notify[self.idx];
        words::reached(counter, self.until.load(Ordering::Acquire))
    }

    fn pending(&self) -> bool {
        self.state.load(Ordering::Acquire) == PENDING
    }

    /// Cancelled: complete the generalized request (a completed one is the completion
    /// call's to mark, through `ready`).
    fn finish(&self) {
        let id = self.id.load(Ordering::Acquire);
        if id != NO_ID {
            let id = ReqId::from_bits(id);
            let _ = progress::greq::complete(&self.inst, id, "MPIX_Win_notify_request");
        }
    }
}

impl GreqClass for NotifyWait {
    fn query(&self, _state: usize) -> Status {
        Status {
            cancelled: self.state.load(Ordering::Acquire) == CANCELLED,
            ..Status::default()
        }
    }
    fn free(&self, _state: usize) -> i32 {
        0
    }
    fn cancel(&self, _state: usize, complete: bool) -> i32 {
        if complete {
            return 0;
        }
        let claims = self.claims.upgrade();
        let mut slot = claims.as_ref().map(|c| c.slot(self.idx));
        if self.arrived()
            || self
                .state
                .compare_exchange(PENDING, CANCELLED, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
        {
            return 0;
        }
        // Give the claim back: every later request waits for `count` fewer. None of them
        // completed (this one's notifications have not all arrived, and theirs come after).
        if let Some(slot) = slot.as_mut() {
            slot.taken -= self.count;
            let me = slot
                .waiting
                .iter()
                .position(|w| std::ptr::eq(Arc::as_ptr(w), self));
            if let Some(me) = me {
                for later in slot.waiting.range(me + 1..) {
                    later.until.fetch_sub(self.count, Ordering::AcqRel);
                }
            }
        }
        drop(slot);
        self.finish();
        0
    }
    fn has_poll(&self) -> bool {
        false
    }
    fn poll(&self, _state: usize) -> i32 {
        0
    }
    fn has_wait(&self) -> bool {
        false
    }
    fn wait(&self, _states: &[usize], _timeout: f64) -> i32 {
        0
    }
    fn has_ready(&self) -> bool {
        true
    }
    /// One acquire load of the counter against the threshold; when reached, `state` moves
    /// once, so a cancel racing with it either wins or finds it done.
    fn ready(&self, _state: usize) -> bool {
        self.arrived()
            && self
                .state
                .compare_exchange(PENDING, DONE, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }
}

impl WinRma {
    /// Count one notification on `idx` at target `t`, after the operation it notifies of
    /// (complete already): whoever sees the count sees the data.
    pub fn notify(&self, t: u32, idx: usize, func: &str) -> MpiResult<()> {
        self.count_at(t, &self.area.extra(t).notify[idx], func)
    }

    /// `MPIX_Win_notify_request`: a request that completes once `count` more notifications
    /// than earlier requests on `idx` claimed have reached this process.
    pub fn notify_request(&self, idx: usize, count: u64, owner: usize) -> ReqId {
        let inst = &self.comm.session.instance;
        let class = {
            let mut slot = self.claims.slot(idx);
            slot.taken += count;
            if words::reached(&self.area.extra(self.me).notify[idx], slot.taken) {
                // Its notifications (and every earlier request's) have all arrived: a request
                // complete from the start, with nothing to check and nothing a cancel could
                // give back (`cancel` leaves arrived requests alone).
                drop(slot);
                return progress::completed(inst, 0, Status::default(), owner);
            }
            slot.forget_done();
            let until = slot.taken;
            let class = slot.state_for(count, until, || NotifyWait {
                inst: inst.clone(),
                area: self.area.clone(),
                claims: Arc::downgrade(&self.claims),
                me: self.me,
                idx,
                count,
                until: AtomicU64::new(until),
                state: AtomicU8::new(PENDING),
                id: AtomicU64::new(NO_ID),
            });
            slot.waiting.push_back(class.clone());
            class
        };
        let id = progress::greq::start(inst, class.clone(), 0, owner);
        class.id.store(id.bits(), Ordering::Release);
        id
    }

    /// Notifications received on `idx` so far (`MPIX_Win_notify_get_value`).
    pub fn notify_count(&self, idx: usize) -> u64 {
        self.area.extra(self.me).notify[idx].load(Ordering::Acquire)
    }
}
