//! The arrivals of one VCI, received into buffers posted to UCP ahead of them.
//!
//! Each VCI that takes messages keeps `SLOTS` receives posted on its worker for its message
//! tag (`message_tag`'s VCI bits, any sender), each into a buffer that holds the largest
//! message (a header and a shared-memory cell's payload: no message of the protocol is
//! longer). An arrival then completes the oldest of them inside `ucp_worker_progress`, with
//! no probe; more arrivals than posted receives wait in UCP's unexpected queue, and the
//! receive posted next takes the oldest of them.
//!
//! UCP matches receives with the same tag and mask in the order they were posted, and the
//! receive posted k-th takes the k-th arrival, so taking completed receives strictly in
//! posting order (none before the oldest completes) hands messages on in the order they
//! arrived: per sender, the order they were sent.

use std::collections::VecDeque;
use std::ffi::c_void;

use super::{ffi, VCI_MASK};

/// Receives kept posted per VCI.
const SLOTS: usize = 16;

/// One posted receive.
struct Slot {
    request: *mut c_void,
    /// Where UCP writes the message (always `size` bytes long).
    buffer: Vec<u8>,
}

/// A message taken: its buffer (`size` bytes), how many of them it filled, and its sender's
/// job rank.
pub struct Arrival {
    pub buffer: Vec<u8>,
    pub len: usize,
    pub sender: u32,
}

/// The receives posted for one VCI, oldest first.
pub struct Arrivals {
    vci: usize,
    /// The length of every buffer.
    size: usize,
    slots: VecDeque<Slot>,
}

impl Arrivals {
    pub fn new(vci: usize, size: usize) -> Arrivals {
        Arrivals {
            vci,
            size,
            slots: VecDeque::with_capacity(SLOTS),
        }
    }

    /// The oldest posted receive, if it completed: taken, and a new one posted in its place
    /// (into `spare`'s buffer, when it holds one of the right size). `Err` carries the
    /// status of a receive that failed (its sender lost midway), or of a post that failed.
    ///
    /// # Safety
    /// `worker` is live and used by the calling thread only (under its lock), and is the
    /// worker every earlier call on `self` was given.
    pub unsafe fn take(
        &mut self,
        worker: ffi::Worker,
        spare: &mut Vec<u8>,
    ) -> Result<Option<Arrival>, ffi::ucs_status_t> {
        while self.slots.len() < SLOTS {
            // SAFETY: caller's contract.
            unsafe { self.post(worker, spare) }?;
        }
        let head = self.slots.front().expect("SLOTS posted");
        let mut info = ffi::ucp_tag_recv_info_t {
            sender_tag: 0,
            length: 0,
        };
        // SAFETY: the request came from ucp_tag_recv_nbx and was not freed yet.
        let status = unsafe { ffi::ucp_tag_recv_request_test(head.request, &mut info) };
        if status == ffi::UCS_INPROGRESS {
            return Ok(None);
        }
        let done = self.slots.pop_front().expect("head exists");
        // SAFETY: completed; freed once (its buffer is no longer written).
        unsafe { ffi::ucp_request_free(done.request) };
        if status != ffi::UCS_OK {
            *spare = done.buffer;
            return Err(status);
        }
        // SAFETY: caller's contract.
        unsafe { self.post(worker, spare) }?;
        Ok(Some(Arrival {
            len: info.length.min(self.size),
            sender: (info.sender_tag >> 32) as u32,
            buffer: done.buffer,
        }))
    }

    /// Post one more receive, at the back.
    ///
    /// # Safety
    /// As `take`.
    unsafe fn post(
        &mut self,
        worker: ffi::Worker,
        spare: &mut Vec<u8>,
    ) -> Result<(), ffi::ucs_status_t> {
        let mut buffer = std::mem::take(spare);
        if buffer.len() != self.size {
            buffer = vec![0u8; self.size];
        }
        // A request even when the message is here already: only a request tells its length.
        let param = ffi::ucp_request_param_t {
            op_attr_mask: ffi::UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
            ..ffi::ucp_request_param_t::POLLED
        };
        // The buffer's heap block stays put while the buffer moves into the queue with its
        // request, and is neither read nor freed before the receive completes (`take`).
        // SAFETY: caller's contract for the worker.
        let request = unsafe {
            ffi::ucp_tag_recv_nbx(
                worker,
                buffer.as_mut_ptr() as *mut c_void,
                self.size,
                self.vci as u64,
                VCI_MASK,
                &param,
            )
        };
        if ffi::is_err(request) || request.is_null() {
            *spare = buffer;
            // (No request despite NO_IMM_CMPL: the message's length is unknown.)
            return Err(if request.is_null() {
                ffi::UCS_ERR_MESSAGE_TRUNCATED
            } else {
                ffi::err_status(request)
            });
        }
        self.slots.push_back(Slot { request, buffer });
        Ok(())
    }
}
