//! Generalized requests (`MPI_Grequest_start`, `MPIX_Grequest_start`, request classes).
//!
//! A generalized request lives in a VCI's request pool like any other (so its handle is an
//! ordinary request handle), with an `Arc<Grequest>` holding its callbacks. Its completion is
//! an atomic flag, so `MPI_Grequest_complete` never needs more than a short lookup under the
//! VCI lock, and every user callback (poll, wait, query, free, cancel) runs with no internal
//! lock held: callers clone the `Arc` out of the pool, drop the lock, then call.
//!
//! The callbacks are behind the `GreqClass` trait: the ABI layer implements it for C function
//! pointers (one class object per `MPIX_Grequest_class_create`, or one per
//! `MPI_Grequest_start`/`MPIX_Grequest_start`), and the core implements it for its own
//! internal requests (`MPI_Buffer_iflush`, RMA notification requests). An internal class may
//! answer `ready` instead of having a `poll_fn`: completion calls then check it inline.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;

use crate::message::Status;

/// The callbacks of a class of generalized requests. `state` is the request's extra state.
pub trait GreqClass: Send + Sync {
    /// `query_fn`: the request's status; its `error` field carries the callback's result.
    fn query(&self, state: usize) -> Status;
    /// `free_fn`; returns its error code.
    fn free(&self, state: usize) -> i32;
    /// `cancel_fn(state, complete)`; returns its error code.
    fn cancel(&self, state: usize, complete: bool) -> i32;
    /// Whether the class has a `poll_fn`.
    fn has_poll(&self) -> bool;
    /// `poll_fn`: check the task, completing the request if it is done; returns its code.
    fn poll(&self, state: usize) -> i32;
    /// Whether the class has a `wait_fn`.
    fn has_wait(&self) -> bool;
    /// `wait_fn(count, states, timeout)`: block until at least one task completes (and its
    /// request is completed) or `timeout` seconds pass; returns its code.
    fn wait(&self, states: &[usize], timeout: f64) -> i32;
    /// Whether the class answers `ready` (internal classes whose task is a word of memory
    /// reaching a value, such as RMA notification requests): completion calls ask it
    /// directly, under the pool's lock, instead of polling it from the polled list.
    fn has_ready(&self) -> bool {
        false
    }
    /// For a `has_ready` class: whether the task is done, and if so the request is now
    /// this caller's to mark complete (exactly one caller is answered true). A few loads
    /// and at most one compare-and-swap: no lock, no MPI call.
    fn ready(&self, _state: usize) -> bool {
        false
    }
}

const COMPLETE: u8 = 1;
const FREED: u8 = 2;

/// One generalized request.
pub struct Grequest {
    pub class: Arc<dyn GreqClass>,
    pub state: usize,
    /// `COMPLETE` (`MPI_Grequest_complete` was called) | `FREED` (the user freed the handle).
    flags: AtomicU8,
    /// A thread is inside `poll_fn` for it (no concurrent or re-entrant poll of one request).
    busy: AtomicBool,
}

impl std::fmt::Debug for Grequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grequest")
            .field("state", &self.state)
            .field("flags", &self.flags.load(Ordering::Relaxed))
            .finish()
    }
}

impl Grequest {
    pub fn new(class: Arc<dyn GreqClass>, state: usize) -> Grequest {
        Grequest {
            class,
            state,
            flags: AtomicU8::new(0),
            busy: AtomicBool::new(false),
        }
    }

    pub fn is_complete(&self) -> bool {
        self.flags.load(Ordering::Acquire) & COMPLETE != 0
    }

    /// Mark complete. Returns true when the user had already freed the handle (the caller
    /// then releases the slot and calls `free_fn`).
    pub fn mark_complete(&self) -> Result<bool, ()> {
        let old = self.flags.fetch_or(COMPLETE, Ordering::AcqRel);
        if old & COMPLETE != 0 {
            return Err(());
        }
        Ok(old & FREED != 0)
    }

    /// Mark freed by the user. Returns true when it was already complete.
    pub fn mark_freed(&self) -> bool {
        self.flags.fetch_or(FREED, Ordering::AcqRel) & COMPLETE != 0
    }

    /// Whether it is complete, completing it first if its class answers `ready` and its task
    /// is done (the inline check of completion calls).
    pub fn settle(&self) -> bool {
        if self.is_complete() {
            return true;
        }
        if self.class.has_ready() && self.class.ready(self.state) {
            let _ = self.mark_complete();
            return true;
        }
        false
    }

    /// Call `poll_fn` unless the request is complete, has none, or another thread (or an
    /// outer frame of this one) is polling it. Returns whether it is complete afterwards.
    pub fn poll(&self) -> bool {
        if self.is_complete() {
            return true;
        }
        if !self.class.has_poll() || self.busy.swap(true, Ordering::Acquire) {
            return false;
        }
        self.class.poll(self.state);
        self.busy.store(false, Ordering::Release);
        self.is_complete()
    }
}

/// Same class object?
pub fn same_class(a: &Arc<dyn GreqClass>, b: &Arc<dyn GreqClass>) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b))
}
