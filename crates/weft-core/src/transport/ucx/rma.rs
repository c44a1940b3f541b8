//! One-sided operations over UCP, for RMA windows whose ranks sit on different nodes
//! (`rma::far`): memory registered with `ucp_mem_map` and described to peers by a packed
//! remote key, which a peer unpacks on its endpoint; puts, gets and 32/64-bit atomics on
//! the peer's registered memory. They all travel on worker 0 (its endpoint to the peer) and
//! each completes before it returns: a put is followed by a flush of the endpoint, so its
//! bytes are in the target's memory when the call returns, as Weft's RMA operations promise.
//! While one waits, worker 0 makes progress (UCX may emulate an operation with active
//! messages, which the target's progress serves: Weft's progress engine polls every worker).

use std::ffi::c_void;

use super::{check, ffi, lose, status_text, UcxTransport};
use crate::transport::Amo;

/// Polls of a one-sided operation's request between yields of the core.
const YIELD_EVERY: u32 = 64;

/// The UCP context (a raw handle).
pub(super) struct ContextHandle(pub(super) ffi::Context);

// SAFETY: the context lives as long as the process and is only used under its mutex.
unsafe impl Send for ContextHandle {}

/// Memory of this process registered with UCP, and its packed remote key; unregistered on
/// drop.
pub struct Registration {
    ucx: &'static UcxTransport,
    memh: ffi::MemH,
    packed: Vec<u8>,
}

// SAFETY: the handle is only used under the context's mutex (drop).
unsafe impl Send for Registration {}
// SAFETY: shared references only read `packed`.
unsafe impl Sync for Registration {}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("key_bytes", &self.packed.len())
            .finish()
    }
}

impl Registration {
    /// The packed remote key, for the peers.
    pub fn packed(&self) -> &[u8] {
        &self.packed
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let ctx = self.ucx.context.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the handle came from ucp_mem_map on this context and is unmapped once.
        unsafe { ffi::ucp_mem_unmap(ctx.0, self.memh) };
    }
}

/// A peer's registered memory as this process reaches it: its remote key, unpacked on the
/// endpoint of worker 0 to that peer; destroyed on drop.
pub struct RemoteKey {
    ucx: &'static UcxTransport,
    rank: u32,
    rkey: ffi::Rkey,
}

// SAFETY: the key is only used under worker 0's mutex.
unsafe impl Send for RemoteKey {}
// SAFETY: as above: every use takes worker 0's mutex.
unsafe impl Sync for RemoteKey {}

impl std::fmt::Debug for RemoteKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteKey")
            .field("rank", &self.rank)
            .finish()
    }
}

impl Drop for RemoteKey {
    fn drop(&mut self) {
        let _state = self.ucx.lock(0);
        // Unpacked on worker 0's endpoint (never destroyed), destroyed once.
        // SAFETY: under worker 0's lock (held above).
        unsafe { ffi::ucp_rkey_destroy(self.rkey) };
    }
}

fn io_err(what: &str, status: ffi::ucs_status_t) -> std::io::Error {
    std::io::Error::other(format!("UCX {what}: {}", status_text(status)))
}

impl UcxTransport {
    /// Register `len` bytes at `addr` (this process's memory) for peers' one-sided access.
    ///
    /// # Safety
    /// The bytes stay mapped, and peers may write them, for as long as the registration lives.
    pub unsafe fn register(
        &'static self,
        addr: usize,
        len: usize,
    ) -> std::io::Result<Registration> {
        let params = ffi::ucp_mem_map_params_t {
            field_mask: ffi::UCP_MEM_MAP_PARAM_FIELD_ADDRESS | ffi::UCP_MEM_MAP_PARAM_FIELD_LENGTH,
            address: addr as *mut c_void,
            length: len,
            rest: [0; 16],
        };
        let ctx = self.context.lock().unwrap_or_else(|p| p.into_inner());
        let mut memh: ffi::MemH = std::ptr::null_mut();
        // params names only its address and length; the context is ours under its lock.
        // SAFETY: the caller's memory stays mapped while the registration lives.
        check("mem map", unsafe {
            ffi::ucp_mem_map(ctx.0, &params, &mut memh)
        })?;
        let mut buf: *mut c_void = std::ptr::null_mut();
        let mut size = 0usize;
        // SAFETY: memh was just mapped on this context.
        let packed = match check("rkey pack", unsafe {
            ffi::ucp_rkey_pack(ctx.0, memh, &mut buf, &mut size)
        }) {
            Ok(()) => {
                // SAFETY: UCP returned `size` readable bytes at `buf`, released once after the copy.
                let v = unsafe { std::slice::from_raw_parts(buf as *const u8, size) }.to_vec();
                // SAFETY: as above.
                unsafe { ffi::ucp_rkey_buffer_release(buf) };
                v
            }
            Err(e) => {
                // SAFETY: mapped above, unmapped once.
                unsafe { ffi::ucp_mem_unmap(ctx.0, memh) };
                return Err(e);
            }
        };
        Ok(Registration {
            ucx: self,
            memh,
            packed,
        })
    }

    /// Unpack job rank `rank`'s packed remote key on worker 0's endpoint to it.
    pub fn remote_key(&'static self, rank: u32, packed: &[u8]) -> std::io::Result<RemoteKey> {
        let mut state = self.lock(0);
        let ep = self.endpoint(&mut state, 0, rank).ok_or_else(|| {
            std::io::Error::other(format!("UCX: no endpoint reaches job rank {rank}"))
        })?;
        let mut rkey: ffi::Rkey = std::ptr::null_mut();
        // SAFETY: `packed` is a key ucp_rkey_pack made in the peer; the endpoint is live.
        check("rkey unpack", unsafe {
            ffi::ucp_ep_rkey_unpack(ep, packed.as_ptr() as *const c_void, &mut rkey)
        })?;
        Ok(RemoteKey {
            ucx: self,
            rank,
            rkey,
        })
    }

    /// Start the operations `ops` issues on worker 0's endpoint to `key`'s rank and wait
    /// for them (and, with `flush`, for the endpoint's flush after them: remote completion).
    fn complete(
        &'static self,
        key: &RemoteKey,
        flush: bool,
        what: &str,
        ops: impl FnOnce(ffi::Ep) -> Vec<ffi::StatusPtr>,
    ) -> std::io::Result<()> {
        let mut state = self.lock(0);
        let ep = self.endpoint(&mut state, 0, key.rank).ok_or_else(|| {
            std::io::Error::other(format!("UCX: no endpoint reaches job rank {}", key.rank))
        })?;
        let mut requests = ops(ep);
        if flush {
            let param = rma_param(0, 0, std::ptr::null_mut());
            // SAFETY: the endpoint is live, worker 0 ours under its lock.
            requests.push(unsafe { ffi::ucp_ep_flush_nbx(ep, &param) });
        }
        let mut failed = None;
        for request in requests {
            if request.is_null() {
                continue;
            }
            if ffi::is_err(request) {
                failed.get_or_insert(ffi::err_status(request));
                continue;
            }
            let mut polls = 0u32;
            let status = loop {
                // SAFETY: the request came from a _nbx call and was not freed yet.
                let s = unsafe { ffi::ucp_request_check_status(request) };
                if s != ffi::UCS_INPROGRESS {
                    break s;
                }
                state.progress(&self.health);
                polls += 1;
                if polls.is_multiple_of(YIELD_EVERY) {
                    // The target may need a core to answer (UCX emulating the operation):
                    // let it run, and let this process's other threads use worker 0.
                    drop(state);
                    std::thread::yield_now();
                    state = self.lock(0);
                }
            };
            // SAFETY: completed; freed once.
            unsafe { ffi::ucp_request_free(request) };
            if status != ffi::UCS_OK {
                failed.get_or_insert(status);
            }
        }
        match failed {
            None => Ok(()),
            Some(status) => {
                lose(&self.health, Some(key.rank), status);
                Err(io_err(what, status))
            }
        }
    }

    /// Write `data`, in order, at the `pieces` (address, length) of the peer's memory that
    /// `key` describes; complete at the target on return.
    pub fn put(
        &'static self,
        key: &RemoteKey,
        pieces: &[(usize, usize)],
        data: &[u8],
    ) -> std::io::Result<()> {
        let param = rma_param(0, 0, std::ptr::null_mut());
        self.complete(key, true, "put", |ep| {
            let mut at = 0;
            pieces
                .iter()
                .map(|&(remote, len)| {
                    let from = data[at..at + len].as_ptr();
                    at += len;
                    // The key and endpoint are live.
                    // SAFETY: `data` outlives the wait in `complete`.
                    unsafe {
                        ffi::ucp_put_nbx(
                            ep,
                            from as *const c_void,
                            len,
                            remote as u64,
                            key.rkey,
                            &param,
                        )
                    }
                })
                .collect()
        })
    }

    /// Read the `pieces` (address, length) of the peer's memory that `key` describes, in
    /// order, into `out`.
    pub fn get(
        &'static self,
        key: &RemoteKey,
        pieces: &[(usize, usize)],
        out: &mut [u8],
    ) -> std::io::Result<()> {
        let param = rma_param(0, 0, std::ptr::null_mut());
        self.complete(key, false, "get", |ep| {
            let mut at = 0;
            pieces
                .iter()
                .map(|&(remote, len)| {
                    let to = out[at..at + len].as_mut_ptr();
                    at += len;
                    // The key and endpoint are live.
                    // SAFETY: `out` outlives the wait in `complete`.
                    unsafe {
                        ffi::ucp_get_nbx(
                            ep,
                            to as *mut c_void,
                            len,
                            remote as u64,
                            key.rkey,
                            &param,
                        )
                    }
                })
                .collect()
        })
    }

    /// Apply `op` with `value` to the 64-bit word at address `remote` of the peer's memory
    /// (8-byte aligned); its previous value.
    pub fn atomic(
        &'static self,
        key: &RemoteKey,
        remote: u64,
        op: Amo,
        value: u64,
    ) -> std::io::Result<u64> {
        // Result = Y; op(Y, X); for CSWAP: if X == Y then Y = Z, with X the operand and Z the
        // reply buffer's value before the call.
        let (code, operand, mut reply) = match op {
            Amo::Add => (ffi::UCP_ATOMIC_OP_ADD, value, 0u64),
            Amo::Swap => (ffi::UCP_ATOMIC_OP_SWAP, value, 0),
            Amo::Cswap(compare) => (ffi::UCP_ATOMIC_OP_CSWAP, compare, value),
        };
        let param = rma_param(
            ffi::UCP_OP_ATTR_FIELD_DATATYPE | ffi::UCP_OP_ATTR_FIELD_REPLY_BUFFER,
            ffi::dt_contig(8),
            &mut reply as *mut u64 as *mut c_void,
        );
        self.complete(key, false, "atomic", |ep| {
            // The key and endpoint are live; the datatype is one 8-byte element.
            // SAFETY: the operand and reply outlive the wait in `complete`.
            vec![unsafe {
                ffi::ucp_atomic_op_nbx(
                    ep,
                    code,
                    &operand as *const u64 as *const c_void,
                    1,
                    remote,
                    key.rkey,
                    &param,
                )
            }]
        })?;
        Ok(reply)
    }
}

fn rma_param(mask: u32, datatype: u64, reply: *mut c_void) -> ffi::ucp_rma_param_t {
    ffi::ucp_rma_param_t {
        op_attr_mask: mask,
        flags: 0,
        request: std::ptr::null_mut(),
        cb: std::ptr::null_mut(),
        datatype,
        user_data: std::ptr::null_mut(),
        reply_buffer: reply,
        rest: [0; 26],
    }
}
