//! Request-based completion notification (Weft's extension; seed 004 §5.1 asks for it to
//! integrate with requests). Each rank of a window has `NOTIFY_SLOTS` counters in the
//! window's segment. A put or accumulate with a notification index (`MPIX_Put_notify`,
//! `MPIX_Accumulate_notify`) runs the operation, which completes at the call, then adds 1 to
//! the target's counter with release ordering. `MPIX_Win_notify_request` on the target
//! returns a generalized request that completes once the counter reaches the notifications
//! earlier requests on that index claimed plus `count`: requests on one index are served in
//! the order they were made, and every notification is counted by exactly one of them. The
//! request is polled by every completion call (`MPI_Wait*`, `MPI_Test*`), so it mixes with any
//! other request.
#![forbid(unsafe_code)]

use std::sync::atomic::{fence, Ordering};
use std::sync::{Arc, OnceLock};

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

/// The generalized-request class of one notification request.
struct NotifyWait {
    inst: Arc<Instance>,
    area: Arc<WinArea>,
    me: u32,
    idx: usize,
    /// The counter value that completes it.
    until: u64,
    id: OnceLock<ReqId>,
}

impl NotifyWait {
    fn done(&self) -> bool {
        words::reached(&self.area.extra(self.me).notify[self.idx], self.until)
    }
}

impl GreqClass for NotifyWait {
    fn query(&self, _state: usize) -> Status {
        Status::default()
    }
    fn free(&self, _state: usize) -> i32 {
        0
    }
    fn cancel(&self, _state: usize, _complete: bool) -> i32 {
        0
    }
    fn has_poll(&self) -> bool {
        true
    }
    fn poll(&self, _state: usize) -> i32 {
        if self.done() {
            if let Some(&id) = self.id.get() {
                let _ = progress::greq::complete(&self.inst, id, "MPIX_Win_notify_request");
            }
        }
        0
    }
    fn has_wait(&self) -> bool {
        false
    }
    fn wait(&self, _states: &[usize], _timeout: f64) -> i32 {
        0
    }
}

impl WinRma {
    /// Count one notification on `idx` at target `t`, after the operation it notifies of
    /// (complete already): whoever sees the count sees the data.
    pub fn notify(&self, t: u32, idx: usize) {
        fence(Ordering::SeqCst);
        words::count(&self.area.extra(t).notify[idx]);
    }

    /// `MPIX_Win_notify_request`: a request that completes once `count` more notifications
    /// than earlier requests on `idx` claimed have reached this process.
    pub fn notify_request(&self, idx: usize, count: u64, owner: usize) -> ReqId {
        let until = self.notify_taken[idx].fetch_add(count, Ordering::AcqRel) + count;
        let inst = self.comm.session.instance.clone();
        let class = Arc::new(NotifyWait {
            inst: inst.clone(),
            area: self.area.clone(),
            me: self.me,
            idx,
            until,
            id: OnceLock::new(),
        });
        let id = progress::greq::start(&inst, class.clone(), 0, owner);
        let _ = class.id.set(id);
        if class.done() {
            let _ = progress::greq::complete(&inst, id, "MPIX_Win_notify_request");
        }
        id
    }

    /// Notifications received on `idx` so far (`MPIX_Win_notify_get_value`).
    pub fn notify_count(&self, idx: usize) -> u64 {
        self.area.extra(self.me).notify[idx].load(Ordering::Acquire)
    }
}
