//! Reaching a target's bytes: `count` instances of a datatype at an offset in a rank's
//! window memory, read or written as the packed byte stream the type describes. Memory in
//! the window's segment (and this process's own) is reached by address through the
//! datatype engine's pack/unpack; memory another process owns by cross-memory attach, one
//! system call per 1024 contiguous pieces of the target layout.

use std::sync::Arc;

use super::ops::Target;
use super::WinRma;
use crate::datatype::{Buf, Type};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::object::win::Flavor;
use crate::transport::cma;

/// Where a target rank's window memory is, from this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Mapped here: the address of the target's window byte 0.
    Mapped(usize),
    /// In process `pid`, at `base` there.
    Process { pid: i32, base: usize },
}

/// `count` instances of `ty` at byte `offset` of a target's window memory. Constructing one
/// is the promise (`new`) that the whole typed extent lies inside that memory, checked
/// against the window's size by the caller (a dynamic window's memory is checked by the
/// kernel: cross-memory attach fails on unmapped addresses).
pub struct Region<'a> {
    reach: Reach,
    offset: usize,
    count: usize,
    ty: &'a Arc<Type>,
}

fn range_error(func: &str, e: std::io::Error) -> MpiError {
    MpiError::new(
        ErrorClass::RmaRange,
        format!("{func}: the target memory is not accessible: {e}"),
    )
}

impl<'a> Region<'a> {
    /// # Safety
    /// With `Reach::Mapped`, every byte the `count` instances of `ty` at `addr + offset`
    /// touch is valid memory of this process (the window's mapped memory, or this process's
    /// own window memory), used under the window's synchronisation rules.
    pub unsafe fn new(reach: Reach, offset: usize, count: usize, ty: &'a Arc<Type>) -> Region<'a> {
        Region {
            reach,
            offset,
            count,
            ty,
        }
    }

    /// Bytes in the packed stream.
    pub fn len(&self) -> usize {
        self.count * self.ty.size
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The mapped memory as a buffer of the target type.
    fn mapped(&self, addr: usize) -> Buf {
        // SAFETY: the constructor's contract: the instances lie in valid mapped memory.
        unsafe { Buf::typed(addr.wrapping_add(self.offset), self.count, self.ty) }
    }

    /// The remote pieces (address, length) of the layout, in packed order.
    fn pieces(&self, base: usize) -> Vec<(usize, usize)> {
        let start = base.wrapping_add(self.offset);
        let c = self.ty.compiled_layout();
        if let Some((disp, run)) = c.contiguous_run() {
            if self.count == 1 || (run == self.ty.size && self.ty.extent == run as isize) {
                return vec![(start.wrapping_add_signed(disp), self.len())];
            }
        }
        let segs = c.segments();
        let mut out = Vec::with_capacity((segs as usize).saturating_mul(self.count).min(1 << 16));
        for i in 0..self.count {
            let at = start.wrapping_add_signed(self.ty.extent * i as isize);
            for k in 0..segs {
                let (s, _) = c.segment(k);
                out.push((at.wrapping_add_signed(s.start), s.len));
            }
        }
        out
    }

    /// Read the packed stream into `out` (`len()` bytes).
    pub fn read(&self, out: &mut [u8], func: &str) -> MpiResult<()> {
        debug_assert_eq!(out.len(), self.len());
        if out.is_empty() {
            return Ok(());
        }
        match self.reach {
            Reach::Mapped(addr) => {
                self.mapped(addr).pack(0, out);
                Ok(())
            }
            Reach::Process { pid, base } => {
                cma::read_pieces(pid, &self.pieces(base), out).map_err(|e| range_error(func, e))
            }
        }
    }

    /// Write `data` (`len()` bytes) as the packed stream.
    pub fn write(&self, data: &[u8], func: &str) -> MpiResult<()> {
        debug_assert_eq!(data.len(), self.len());
        if data.is_empty() {
            return Ok(());
        }
        match self.reach {
            Reach::Mapped(addr) => {
                self.mapped(addr).unpack(0, data);
                Ok(())
            }
            Reach::Process { pid, base } => {
                cma::write_pieces(pid, &self.pieces(base), data).map_err(|e| range_error(func, e))
            }
        }
    }
}

/// The packed bytes of an origin buffer: its own memory when contiguous, else a copy.
pub fn packed(buf: &Buf) -> std::borrow::Cow<'_, [u8]> {
    if buf.is_contiguous() {
        buf.with_bytes(|b| {
            // SAFETY: the same bytes `with_bytes` lends, valid for the operation (the Buf's
            // contract), which encloses every use of the returned slice.
            std::borrow::Cow::Borrowed(unsafe { std::slice::from_raw_parts(b.as_ptr(), b.len()) })
        })
    } else {
        let mut v = vec![0u8; buf.len()];
        buf.pack(0, &mut v);
        std::borrow::Cow::Owned(v)
    }
}

impl WinRma {
    /// The target's bytes an operation touches; `MPI_ERR_RMA_RANGE` when they leave the
    /// target's window memory.
    pub(super) fn region<'a>(&self, t: &Target<'a>, func: &str) -> MpiResult<Region<'a>> {
        let peer = &self.peers[t.rank as usize];
        let range = |why: String| {
            Err(MpiError::new(
                ErrorClass::RmaRange,
                format!(
                    "{func}(target_rank={}, target_disp={}): {why}",
                    t.rank, t.disp
                ),
            ))
        };
        let offset = t.disp as i128 * peer.disp_unit as i128;
        if self.flavor == Flavor::Dynamic {
            // Absolute addresses; the kernel refuses what the target has not mapped.
            if t.disp < 0 {
                return range("a dynamic window's displacements are addresses".into());
            }
        } else if t.count > 0 && t.ty.size > 0 {
            let ty = t.ty;
            let (first, last) = (0i128, (t.count as i128 - 1) * ty.extent as i128);
            let lo = offset + ty.true_lb as i128 + first.min(last);
            let hi = offset + ty.true_lb as i128 + first.max(last) + ty.true_extent as i128;
            if lo < 0 || hi > peer.size as i128 {
                return range(format!(
                    "bytes {lo}..{hi} lie outside the target's {} bytes of window memory",
                    peer.size
                ));
            }
        }
        // SAFETY: for mapped memory the typed extent lies inside the target's window memory
        // (checked just above; dynamic windows are never reached mapped), which stays mapped
        // while the window lives.
        Ok(unsafe { Region::new(self.reach(t.rank), offset as usize, t.count, t.ty) })
    }
}
