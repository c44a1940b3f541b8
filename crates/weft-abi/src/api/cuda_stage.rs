//! Device buffers of operations queued on a CUDA stream: an operation runs in a host
//! function, which cannot touch device memory, so each device buffer it uses is staged
//! through a pinned host block: copied from the device before the operation and back after
//! it (if it writes it), both copies queued on the same stream, so the order holds. The
//! copy in comes first even for a buffer the operation only writes: a receive may write
//! less than its count, and a datatype with gaps writes none of them, and what it leaves
//! must come back unchanged. The span staged is the datatype's true extent over the count.
//! On a host queue nothing is staged (every buffer is host memory).

use weft_core::error::MpiResult;
use weft_core::object::stream::Stream;

use crate::constants::MPI_IN_PLACE;
use crate::ctypes::MPI_Datatype;
use crate::cuda::{CudaQueue, DEVICE_TO_HOST, HOST_TO_DEVICE};
use crate::cuda_pool::Pinned;
use crate::datatypes;

/// How a queued operation uses a buffer: only reads it, or may write (part of) it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    ReadWrite,
}

/// A buffer of a queued operation and, when it is device memory, its host copy.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Staged {
    device: usize,
    /// The host block's address (0: not staged, the operation uses `device` itself).
    host: usize,
    /// The host block's size (at least `len`: a block from the pool may be larger).
    cap: usize,
    /// Offset of the staged span from the buffer's address (the type's true lower bound).
    lo: isize,
    len: usize,
    access: Access,
}

fn cuda_queue(stream: &Stream) -> Option<&CudaQueue> {
    stream.offload()?.as_any().downcast_ref::<CudaQueue>()
}

/// The buffers `(address, count, datatype, access)` of an operation queued on `stream`:
/// empty (nothing to stage) unless it is a CUDA stream.
pub(crate) fn buffers(stream: &Stream, list: &[(usize, i64, MPI_Datatype, Access)]) -> Vec<Staged> {
    let Some(q) = cuda_queue(stream) else {
        return Vec::new();
    };
    list.iter()
        .map(|&(addr, count, datatype, access)| {
            let plain = Staged {
                device: addr,
                host: 0,
                cap: 0,
                lo: 0,
                len: 0,
                access,
            };
            if addr == 0 || addr == MPI_IN_PLACE || count <= 0 {
                return plain;
            }
            if !q.cuda().is_device(addr) {
                return plain;
            }
            let Ok(t) = datatypes::committed_ref(datatype, "", "") else {
                return plain;
            };
            let hi = (count as isize - 1) * t.extent + t.true_lb + t.true_extent;
            Staged {
                lo: t.true_lb,
                len: (hi - t.true_lb).max(0) as usize,
                ..plain
            }
        })
        .collect()
}

/// Where the queued operation finds buffer `i` (given at `addr`): its host copy if staged.
pub(crate) fn host_addr(staged: &[Staged], i: usize, addr: usize) -> usize {
    match staged.get(i) {
        Some(s) if s.host != 0 => (s.host as isize - s.lo) as usize,
        _ => addr,
    }
}

/// Staging in progress: the host blocks are taken and the copies to them queued.
pub(crate) struct Staging {
    staged: Vec<Staged>,
}

impl Staging {
    /// Take host blocks for the device buffers and queue the copies to them. On an error
    /// the blocks taken go back to the pool (after what was queued with them).
    pub(crate) fn start(stream: &Stream, staged: Vec<Staged>, func: &str) -> MpiResult<Staging> {
        let mut staging = Staging { staged };
        let Some(q) = cuda_queue(stream) else {
            return Ok(staging);
        };
        let r = staging.stage_in(q, func);
        match r {
            Ok(()) => Ok(staging),
            Err(e) => {
                staging.abandon(stream);
                Err(e)
            }
        }
    }

    fn stage_in(&mut self, q: &CudaQueue, func: &str) -> MpiResult<()> {
        for s in self.staged.iter_mut().filter(|s| s.len > 0) {
            let block = q.take_pinned(s.len, func)?;
            (s.host, s.cap) = (block.addr, block.len);
            let src = (s.device as isize + s.lo) as usize;
            // The device span is the program's buffer (valid until the queued operation ran: the
            // enqueue contract).
            // SAFETY: the block is ours until returned.
            unsafe { q.copy(s.host, src, s.len, DEVICE_TO_HOST, func)? };
        }
        Ok(())
    }

    /// The buffers as the queued operation sees them.
    pub(crate) fn buffers(&self) -> Vec<Staged> {
        self.staged.clone()
    }

    /// The host blocks taken.
    fn blocks(&self) -> Vec<Pinned> {
        self.staged
            .iter()
            .filter(|s| s.host != 0)
            .map(|s| Pinned {
                addr: s.host,
                len: s.cap,
            })
            .collect()
    }

    /// After the operation was queued: queue the copies back of what it writes; the blocks
    /// are free again once a later task of the stream started.
    pub(crate) fn finish(self, stream: &Stream, func: &str) -> MpiResult<()> {
        let Some(q) = cuda_queue(stream) else {
            return Ok(());
        };
        let mut r = Ok(());
        for s in self.staged.iter().filter(|s| s.host != 0) {
            if s.access == Access::ReadWrite && r.is_ok() {
                let dst = (s.device as isize + s.lo) as usize;
                // SAFETY: as in `stage_in`.
                r = unsafe { q.copy(dst, s.host, s.len, HOST_TO_DEVICE, func) };
            }
        }
        q.hold(self.blocks());
        r
    }

    /// The operation was not queued: the blocks go back (after the copies to them).
    pub(crate) fn abandon(self, stream: &Stream) {
        if let Some(q) = cuda_queue(stream) {
            q.hold(self.blocks());
        }
    }
}
