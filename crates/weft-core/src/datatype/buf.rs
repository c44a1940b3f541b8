//! `Buf`: user memory a message is sent from or received into.

use std::sync::Arc;

use super::layout;
use super::types::Type;

/// A region of user memory: contiguous bytes, or `count` instances of a committed
/// non-contiguous type. Its `len` is the length of the packed message; `pack`/`unpack` move
/// any byte range of that packed stream. Constructing one is the promise that the memory
/// stays valid and (for receives) writable, and is not otherwise accessed by the library, for
/// as long as the operation using it is pending; the ABI layer makes that promise on the
/// caller's behalf, as the MPI standard lets it.
///
/// A typed `Buf` refers to its `Type` by address (so `Buf` stays `Copy`); whoever holds the
/// `Buf` past the call that made it must hold the type too: a `Request` made from a `Buf`
/// does so itself (`Request::keep`, from `Buf::keep`), so freeing the type's handle while the
/// operation is pending is harmless.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buf {
    addr: usize,
    len: usize,
    /// The address of the `Type` (inside its `Arc`), 0 for contiguous bytes.
    ty: usize,
}

/// Bounce buffer size for copies between two non-contiguous buffers.
const BOUNCE: usize = 64 * 1024;

impl Buf {
    /// An empty buffer (count 0 or `MPI_PROC_NULL` peers).
    pub const EMPTY: Buf = Buf {
        addr: 0,
        len: 0,
        ty: 0,
    };

    /// # Safety
    /// `addr..addr+len` must be valid user memory (readable for sends, writable for receives)
    /// for the lifetime of the operation that uses this `Buf`.
    pub unsafe fn new(addr: usize, len: usize) -> Buf {
        Buf {
            addr: if len == 0 { 0 } else { addr },
            len,
            ty: 0,
        }
    }

    /// `count` instances of `ty` at `addr` (the buffer argument of an MPI call). Contiguous
    /// layouts become plain byte ranges (no packing on any path).
    ///
    /// # Safety
    /// The `count` instances at `addr` must be valid user memory (readable for sends,
    /// writable for receives) for the lifetime of the operation; `count * ty.size` must not
    /// overflow (`Type::bytes_for`); `ty` must stay alive while the `Buf` is used (see the
    /// type's doc: a `Request` keeps it).
    pub unsafe fn typed(addr: usize, count: usize, ty: &Arc<Type>) -> Buf {
        let len = count * ty.size;
        if len == 0 {
            return Buf::EMPTY;
        }
        let c = ty.compiled();
        match c.contiguous_run() {
            Some((disp, run)) if count == 1 || (run == ty.size && ty.extent == run as isize) => {
                // SAFETY: forwarded contract: the run is the instances' bytes.
                unsafe { Buf::new(addr.wrapping_add_signed(disp), len) }
            }
            _ => Buf {
                addr,
                len,
                ty: Arc::as_ptr(ty) as usize,
            },
        }
    }

    /// The same layout at another address with another length (`instances`: a sub-range of
    /// the instances this buffer covers, which its constructor's promise already covers).
    pub(super) fn with_base(&self, addr: usize, len: usize) -> Buf {
        Buf {
            addr,
            len,
            ty: self.ty,
        }
    }

    /// Whether the message bytes are `addr()..addr()+len()` in user memory.
    pub fn is_contiguous(&self) -> bool {
        self.ty == 0
    }

    fn layout(&self) -> Option<&Type> {
        // SAFETY: a non-zero `ty` is the address of a `Type` inside an `Arc` that the
        // constructor's caller keeps alive while this `Buf` is in use.
        (self.ty != 0).then(|| unsafe { &*(self.ty as *const Type) })
    }

    /// An owning reference to the buffer's type (non-contiguous buffers only), for holders
    /// that outlive the call that made the `Buf`.
    #[inline]
    pub fn keep(&self) -> Option<Arc<Type>> {
        if self.ty == 0 {
            return None;
        }
        // SAFETY: `ty` came from `Arc::as_ptr` and the Arc is alive (see `layout`); taking a
        // new strong count and rebuilding an Arc from it is balanced by that Arc's drop.
        unsafe {
            Arc::increment_strong_count(self.ty as *const Type);
            Some(Arc::from_raw(self.ty as *const Type))
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of byte 0 (for single-copy transports that read it from another process);
    /// for a non-contiguous buffer, the buffer argument (bytes are not there in order).
    pub fn addr(&self) -> usize {
        self.addr
    }

    /// Whether a message of `bytes` bytes received into this buffer ends inside one of its
    /// basic elements (only a non-contiguous buffer knows its elements; a contiguous one is
    /// bytes).
    pub fn ends_inside_element(&self, bytes: u64) -> bool {
        self.layout()
            .is_some_and(|t| t.elements_in(bytes).is_none())
    }

    /// Copy message bytes `offset..offset+dst.len()` into `dst`.
    #[inline]
    pub fn pack(&self, offset: usize, dst: &mut [u8]) {
        assert!(
            offset
                .checked_add(dst.len())
                .is_some_and(|end| end <= self.len),
            "pack out of range"
        );
        if dst.is_empty() {
            return;
        }
        if self.ty != 0 {
            return self.pack_typed(offset, dst);
        }
        // SAFETY: the range is inside the buffer (checked above) and the constructor's caller
        // guaranteed the buffer is readable for the operation's lifetime.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (self.addr + offset) as *const u8,
                dst.as_mut_ptr(),
                dst.len(),
            )
        }
    }

    /// `pack` from a non-contiguous layout (kept out of line: the contiguous case is hot).
    fn pack_typed(&self, offset: usize, dst: &mut [u8]) {
        if let Some(t) = self.layout() {
            // SAFETY: range checked by `pack`; the constructor's caller vouched for the
            // instances.
            unsafe {
                layout::move_range::<false>(
                    t.compiled(),
                    t.size,
                    t.extent,
                    self.addr,
                    offset,
                    dst.as_mut_ptr(),
                    dst.len(),
                )
            };
        }
    }

    /// Copy `src` into message bytes `offset..offset+src.len()`.
    #[inline]
    pub fn unpack(&self, offset: usize, src: &[u8]) {
        assert!(
            offset
                .checked_add(src.len())
                .is_some_and(|end| end <= self.len),
            "unpack out of range"
        );
        if src.is_empty() {
            return;
        }
        if self.ty != 0 {
            return self.unpack_typed(offset, src);
        }
        // SAFETY: in range (checked above); the constructor's caller guaranteed writability.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), (self.addr + offset) as *mut u8, src.len())
        }
    }

    /// `unpack` into a non-contiguous layout (kept out of line: the contiguous case is hot).
    fn unpack_typed(&self, offset: usize, src: &[u8]) {
        if let Some(t) = self.layout() {
            // SAFETY: range checked by `unpack`; the stream is only read (the const parameter
            // selects the direction); the constructor's caller vouched for writability.
            unsafe {
                layout::move_range::<true>(
                    t.compiled(),
                    t.size,
                    t.extent,
                    self.addr,
                    offset,
                    src.as_ptr() as *mut u8,
                    src.len(),
                )
            };
        }
    }

    /// Copy the first `len` bytes of `self` into `dst` (both user buffers in this process).
    pub fn copy_to(&self, dst: &Buf, len: usize) {
        assert!(len <= self.len && len <= dst.len, "copy out of range");
        if len == 0 {
            return;
        }
        match (self.is_contiguous(), dst.is_contiguous()) {
            // SAFETY: both ranges are valid per their constructors; `copy` tolerates overlap.
            (true, true) => unsafe {
                std::ptr::copy(self.addr as *const u8, dst.addr as *mut u8, len)
            },
            (false, true) => {
                // SAFETY: dst's first `len` bytes are writable user memory (constructor contract).
                let out = unsafe { std::slice::from_raw_parts_mut(dst.addr as *mut u8, len) };
                self.pack(0, out);
            }
            (true, false) => {
                // SAFETY: self's first `len` bytes are readable user memory.
                let src = unsafe { std::slice::from_raw_parts(self.addr as *const u8, len) };
                dst.unpack(0, src);
            }
            (false, false) => {
                let mut bounce = vec![0u8; BOUNCE.min(len)];
                let mut off = 0;
                while off < len {
                    let n = bounce.len().min(len - off);
                    self.pack(off, &mut bounce[..n]);
                    dst.unpack(off, &bounce[..n]);
                    off += n;
                }
            }
        }
    }
}

impl Buf {
    /// Fill the first `len` bytes from `remote` in process `pid` with a single copy
    /// (cross-memory attach).
    pub fn fill_from_process(&self, pid: i32, remote: usize, len: usize) -> std::io::Result<()> {
        assert!(len <= self.len, "fill out of range");
        if len == 0 {
            return Ok(());
        }
        if !self.is_contiguous() {
            // Read through a bounce buffer and unpack piecewise.
            let mut bounce = vec![0u8; BOUNCE.min(len)];
            let mut off = 0;
            while off < len {
                let n = bounce.len().min(len - off);
                // SAFETY: `bounce` is ours and writable for `n` bytes.
                unsafe {
                    crate::transport::cma::read(pid, remote + off, bounce.as_mut_ptr() as usize, n)?
                };
                self.unpack(off, &bounce[..n]);
                off += n;
            }
            return Ok(());
        }
        // SAFETY: `addr..addr+len` is writable user memory per the constructor's contract.
        unsafe { crate::transport::cma::read(pid, remote, self.addr, len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_unpack_and_copy() {
        let src = [1u8, 2, 3, 4, 5];
        let mut dst = [0u8; 5];
        // SAFETY: both arrays outlive the Bufs.
        let (s, d) = unsafe {
            (
                Buf::new(src.as_ptr() as usize, 5),
                Buf::new(dst.as_mut_ptr() as usize, 5),
            )
        };
        let mut tmp = [0u8; 3];
        s.pack(1, &mut tmp);
        assert_eq!(tmp, [2, 3, 4]);
        d.unpack(2, &tmp);
        s.copy_to(&d, 2);
        assert_eq!(dst, [1, 2, 2, 3, 4]);
    }

    #[test]
    #[should_panic(expected = "pack out of range")]
    fn pack_checks_bounds() {
        let src = [0u8; 2];
        // SAFETY: the array outlives the Buf.
        let s = unsafe { Buf::new(src.as_ptr() as usize, 2) };
        s.pack(1, &mut [0u8; 2]);
    }
}
