//! The bytes of a rendezvous message across nodes, as one UCP tagged message.
//!
//! Weft's own rendezvous header (RTS) and clear-to-send (CTS) still travel as messages of the
//! protocol (matching stays in the engine), but the data then moves in one piece: the
//! receiver posts `ucp_tag_recv_nbx` for a tag of its choosing before it sends the CTS, and
//! the sender answers with one `ucp_tag_send_nbx` of the whole message to that tag, so UCP
//! picks its own protocol for the size (its rendezvous, zero-copy where the transport can:
//! CMA over shared memory, zero-copy sends over TCP). Contiguous buffers are sent from and
//! received into user memory directly; a non-contiguous one (or a receive buffer shorter
//! than the message) goes through a packed copy.
//!
//! A bulk tag is the sender's job rank (high 32 bits), the `BULK` bit and an id the
//! receiving worker numbers its bulk receives with; a VCI's probe for messages never takes
//! it (its low half is no VCI).

use std::ffi::c_void;
use std::sync::MutexGuard;

use super::{ffi, lose, UcxTransport, WorkerState};
use crate::datatype::Buf;

/// Set in the tag of a bulk transfer.
const BULK: u64 = 1 << 30;
/// The bits of a bulk tag that hold the receiver's id.
const ID_MASK: u64 = BULK - 1;

/// The UCP tag of bulk transfer `id` from job rank `sender`.
fn bulk_tag(sender: u32, id: u32) -> u64 {
    (u64::from(sender) << 32) | BULK | (u64::from(id) & ID_MASK)
}

/// A bulk send or receive UCP has not completed yet; `UcxTransport::reap_bulk` finishes it.
pub struct BulkOp {
    worker: usize,
    request: *mut c_void,
    /// The packed bytes of a non-contiguous send, or the landing place of a receive that
    /// cannot land in its buffer directly.
    staging: Option<Vec<u8>>,
    /// Where a staged receive's bytes go at completion (`Buf::EMPTY` for a send).
    dest: Buf,
    /// The peer, for a send (a failed one loses it).
    peer: Option<u32>,
}

// SAFETY: the request is only touched under its worker's lock (`reap_bulk`), from whichever
// thread holds the VCI that owns the operation.
unsafe impl Send for BulkOp {}

/// How starting a bulk transfer went.
pub enum BulkStart {
    /// Completed at once (the buffer is free, or filled).
    Done,
    /// Running: pass it to `reap_bulk` until it finishes.
    Running(BulkOp),
    /// UCX refused it (recorded in the transport's health: the peer is lost).
    Failed,
}

impl UcxTransport {
    /// Post the receive of the `total` bytes of a rendezvous message from job rank `from`
    /// into `dest` (truncated to its length), on the worker of VCI `vci`. Returns the id the
    /// sender must send to (`send_bulk`), to be given to it in the CTS.
    pub fn recv_bulk(&self, vci: usize, from: u32, total: usize, dest: Buf) -> (u32, BulkStart) {
        let w = vci % self.workers.len();
        let mut state = self.lock(w);
        let id = state.next_bulk;
        state.next_bulk = state.next_bulk.wrapping_add(1) & ID_MASK as u32;
        let direct = dest.is_contiguous() && dest.len() >= total;
        let mut staging = (!direct).then(|| vec![0u8; total]);
        let at = match &mut staging {
            Some(v) => v.as_mut_ptr() as *mut c_void,
            None => dest.addr() as *mut c_void,
        };
        let param = ffi::ucp_request_param_t {
            op_attr_mask: 0,
            rest: [0; 63],
        };
        // `at` holds `total` writable bytes until the request completes: the staging vector
        // moves into the returned operation (its heap block stays put), and `dest` is a receive
        // buffer whose constructor vouched for it for the whole operation (`Buf::new`).
        // SAFETY: the worker is ours under its lock.
        let request = unsafe {
            ffi::ucp_tag_recv_nbx(state.worker, at, total, bulk_tag(from, id), !0, &param)
        };
        let op = BulkOp {
            worker: w,
            request,
            staging,
            dest,
            peer: None,
        };
        (id, self.started(op))
    }

    /// Send the bytes of `src` to bulk receive `id` of job rank `rank` (its VCI `vci`), as
    /// that receiver's CTS asked.
    pub fn send_bulk(&'static self, rank: u32, vci: usize, id: u32, src: Buf) -> BulkStart {
        if self.health.lost(rank).is_some() {
            return BulkStart::Failed;
        }
        let w = vci % self.workers.len();
        let mut state = self.lock(w);
        let Some(ep) = self.endpoint(&mut state, w, rank) else {
            return BulkStart::Failed;
        };
        let staging = (!src.is_contiguous()).then(|| {
            let mut v = vec![0u8; src.len()];
            src.pack(0, &mut v);
            v
        });
        let from = match &staging {
            Some(v) => v.as_ptr() as *const c_void,
            None => src.addr() as *const c_void,
        };
        let param = ffi::ucp_request_param_t {
            op_attr_mask: 0,
            rest: [0; 63],
        };
        // `from` holds `src.len()` readable bytes until the request completes (the staging
        // vector moves into the operation; a contiguous `src` is the send buffer, vouched for
        // by its constructor for the operation).
        let tag = bulk_tag(self.rank, id);
        // SAFETY: ep belongs to this worker, held under its lock.
        let request = unsafe { ffi::ucp_tag_send_nbx(ep, from, src.len(), tag, &param) };
        drop(state);
        self.started(BulkOp {
            worker: w,
            request,
            staging,
            dest: Buf::EMPTY,
            peer: Some(rank),
        })
    }

    /// What a `_nbx` call's returned status pointer (in `op.request`) means.
    fn started(&self, mut op: BulkOp) -> BulkStart {
        if ffi::is_err(op.request) {
            lose(&self.health, op.peer, ffi::err_status(op.request));
            return BulkStart::Failed;
        }
        if op.request.is_null() {
            op.land();
            return BulkStart::Done;
        }
        BulkStart::Running(op)
    }

    /// Make UCP progress on the workers of `ops` and remove the operations that finished,
    /// calling `done` with each one's tag and whether it succeeded (a failure is recorded in
    /// the transport's health).
    pub fn reap_bulk<T>(&self, ops: &mut Vec<(BulkOp, T)>, mut done: impl FnMut(T, bool)) {
        let mut i = 0;
        let mut held: Option<(usize, MutexGuard<'_, WorkerState>)> = None;
        while i < ops.len() {
            let w = ops[i].0.worker;
            if held.as_ref().map(|h| h.0) != Some(w) {
                // One worker lock at a time.
                drop(held.take());
                let mut state = self.lock(w);
                state.progress(&self.health);
                held = Some((w, state));
            }
            // The request came from a bulk `_nbx` call and is not freed yet.
            // SAFETY: its worker is held (`held`).
            let status = unsafe { ffi::ucp_request_check_status(ops[i].0.request) };
            if status == ffi::UCS_INPROGRESS {
                i += 1;
                continue;
            }
            let (mut op, tag) = ops.swap_remove(i);
            // SAFETY: completed; freed once (the staging it used is dropped after).
            unsafe { ffi::ucp_request_free(op.request) };
            if status == ffi::UCS_OK {
                op.land();
            } else {
                lose(&self.health, op.peer, status);
            }
            done(tag, status == ffi::UCS_OK);
        }
    }
}

impl BulkOp {
    /// A completed receive's staged bytes into its buffer (as many as fit).
    fn land(&mut self) {
        if let Some(bytes) = self.staging.take() {
            let n = bytes.len().min(self.dest.len());
            if n > 0 {
                self.dest.unpack(0, &bytes[..n]);
            }
        }
    }
}
