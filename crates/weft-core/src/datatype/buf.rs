//! `Buf`: user memory a message is sent from or received into.

/// A region of user memory. Constructing one is the promise that the memory stays valid and
/// (for receives) writable, and is not otherwise accessed by the library, for as long as the
/// operation using it is pending; the ABI layer makes that promise on the caller's behalf, as
/// the MPI standard lets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buf {
    addr: usize,
    len: usize,
}

impl Buf {
    /// An empty buffer (count 0 or `MPI_PROC_NULL` peers).
    pub const EMPTY: Buf = Buf { addr: 0, len: 0 };

    /// # Safety
    /// `addr..addr+len` must be valid user memory (readable for sends, writable for receives)
    /// for the lifetime of the operation that uses this `Buf`.
    pub unsafe fn new(addr: usize, len: usize) -> Buf {
        Buf {
            addr: if len == 0 { 0 } else { addr },
            len,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of byte 0 (for single-copy transports that read it from another process).
    pub fn addr(&self) -> usize {
        self.addr
    }

    /// Copy message bytes `offset..offset+dst.len()` into `dst`.
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

    /// Copy `src` into message bytes `offset..offset+src.len()`.
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
        // SAFETY: in range (checked above); the constructor's caller guaranteed writability.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), (self.addr + offset) as *mut u8, src.len())
        }
    }

    /// Copy the first `len` bytes of `self` into `dst` (both user buffers in this process).
    pub fn copy_to(&self, dst: &Buf, len: usize) {
        assert!(len <= self.len && len <= dst.len, "copy out of range");
        if len == 0 {
            return;
        }
        // SAFETY: both ranges are valid per their constructors; `copy` tolerates overlap.
        unsafe { std::ptr::copy(self.addr as *const u8, dst.addr as *mut u8, len) }
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
