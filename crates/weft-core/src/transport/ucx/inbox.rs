//! The arrivals of a worker's VCIs, as UCP hands them to its active-message handler.
//!
//! Messages travel as UCP active messages (one handler, `AM_ID`), which UCP delivers inside
//! `ucp_worker_progress` with no tag matching, probe or request: `on_message` copies each
//! into a buffer (kept from earlier messages, so small ones allocate nothing) and queues it
//! for its VCI. Active messages from one endpoint arrive in the order they were sent, and
//! each VCI's queue is taken in order, so every sender's messages reach the engine in order.
//!
//! A message is `PREFIX` bytes (the sender's job rank and the destination VCI, both `u32`
//! little-endian) followed by the protocol's wire header and payload; sends ask UCP for its
//! eager protocol only, so the handler always has the whole message.

use std::collections::VecDeque;
use std::ffi::c_void;

use super::ffi;

/// The active-message id of Weft's messages.
pub const AM_ID: u32 = 0;
/// Bytes before the protocol's header: sender's job rank, destination VCI.
pub const PREFIX: usize = 8;
/// Buffers an inbox keeps for the next arrivals, and the largest capacity it keeps.
const POOL_MAX: usize = 64;
const BUFFER_MAX: usize = 64 * 1024;

/// The prefix of a message from job rank `sender` to VCI `vci`.
pub fn prefix(sender: u32, vci: usize) -> [u8; PREFIX] {
    let mut p = [0u8; PREFIX];
    p[..4].copy_from_slice(&sender.to_le_bytes());
    p[4..].copy_from_slice(&(vci as u32).to_le_bytes());
    p
}

/// The queued arrivals of one worker's VCIs (VCI `v` at `v / workers`).
pub struct Inbox {
    workers: usize,
    queues: Vec<VecDeque<Vec<u8>>>,
    pool: Vec<Vec<u8>>,
    /// The job ranks this worker received from (they have an endpoint to it).
    pub heard: Vec<bool>,
    /// Messages that could not be taken (not Weft's, or not whole): a failure to report.
    pub refused: u64,
}

impl Inbox {
    pub fn new(workers: usize, job_size: u32) -> Inbox {
        Inbox {
            workers,
            queues: Vec::new(),
            pool: Vec::new(),
            heard: vec![false; job_size as usize],
            refused: 0,
        }
    }

    /// The oldest arrival queued for `vci` (its wire header and payload).
    pub fn pop(&mut self, vci: usize) -> Option<Vec<u8>> {
        self.queues.get_mut(vci / self.workers)?.pop_front()
    }

    /// Keep a consumed message's buffer for a later arrival.
    pub fn recycle(&mut self, buffer: Vec<u8>) {
        if self.pool.len() < POOL_MAX && buffer.capacity() <= BUFFER_MAX {
            self.pool.push(buffer);
        }
    }

    fn push(&mut self, message: &[u8]) -> bool {
        let (Some(sender), Some(vci)) = (
            message.first_chunk::<4>().map(|b| u32::from_le_bytes(*b)),
            message
                .get(4..PREFIX)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        ) else {
            return false;
        };
        if let Some(heard) = self.heard.get_mut(sender as usize) {
            *heard = true;
        }
        let index = vci as usize / self.workers;
        if self.queues.len() <= index {
            self.queues.resize_with(index + 1, VecDeque::new);
        }
        let mut buffer = self.pool.pop().unwrap_or_default();
        buffer.clear();
        buffer.extend_from_slice(&message[PREFIX..]);
        self.queues[index].push_back(buffer);
        true
    }
}

/// UCP's handler of Weft's active messages; `arg` is the worker's `Inbox`.
pub extern "C" fn on_message(
    arg: *mut c_void,
    _header: *const c_void,
    _header_length: usize,
    data: *mut c_void,
    length: usize,
    param: *const ffi::ucp_am_recv_param_t,
) -> ffi::ucs_status_t {
    // UCP calls the handler inside ucp_worker_progress of the worker it was set on, which
    // runs only under that worker's lock; the inbox lives as long as the worker.
    // SAFETY: so the inbox is used by this thread alone for the call.
    let inbox = unsafe { &mut *(arg as *mut Inbox) };
    // SAFETY: UCP passes a valid parameter block for the call.
    let attr = unsafe { (*param).recv_attr };
    if attr & ffi::UCP_AM_RECV_ATTR_FLAG_RNDV != 0 || data.is_null() {
        // (Sends ask for eager only: a rendezvous announcement is no message of Weft's.)
        inbox.refused += 1;
        return ffi::UCS_OK;
    }
    // SAFETY: UCP hands `length` readable bytes at `data` for the call.
    let message = unsafe { std::slice::from_raw_parts(data as *const u8, length) };
    if !inbox.push(message) {
        inbox.refused += 1;
    }
    ffi::UCS_OK
}
