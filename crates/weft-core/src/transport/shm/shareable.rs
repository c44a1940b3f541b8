//! Program memory other processes of the node can map: blocks of `MPI_Alloc_mem` backed by
//! an anonymous shared file (`memfd_create`) kept open while the block lives. A memory handle
//! over such a block carries the file's descriptor number, and a peer maps the same pages
//! through `/proc/<pid>/fd/<fd>` (the access rule is cross-memory attach's: same user, ptrace
//! permitted), so a memory-handle window reaches them by address, at allocated-window speed.
//! A peer's mapping keeps the pages alive even after the owner frees the block.

use std::ffi::CString;
use std::io;
use std::sync::Mutex;

/// Blocks alive in this process: (address, length, descriptor).
static BLOCKS: Mutex<Vec<(usize, usize, i32)>> = Mutex::new(Vec::new());

fn blocks() -> std::sync::MutexGuard<'static, Vec<(usize, usize, i32)>> {
    BLOCKS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A shareable block, unmapped and closed when dropped.
#[derive(Debug)]
pub struct SharedBlock {
    addr: usize,
    len: usize,
    fd: i32,
}

/// Map `len` bytes of `fd` shared, read-write: the address, or `None` (errno says why).
///
/// # Safety
/// `fd` is an open descriptor of a file at least `len` bytes long (or one `len` bytes will be
/// written to only after it has grown).
pub unsafe fn map_shared(fd: i32, len: usize) -> Option<usize> {
    // SAFETY: the caller's descriptor and length; the kernel checks the rest.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p as usize)
}

impl SharedBlock {
    /// A zero-filled block of `len` bytes (at least one page), page aligned.
    pub fn new(len: usize) -> io::Result<SharedBlock> {
        let len = len.max(1).next_multiple_of(4096);
        let name = CString::new("weft-mem").expect("no NUL");
        // SAFETY: a valid C string; the flags are memfd_create's.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let fail = |fd: i32| {
            let e = io::Error::last_os_error();
            // SAFETY: our own descriptor, closed once.
            unsafe { libc::close(fd) };
            Err(e)
        };
        // SAFETY: our own descriptor.
        if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
            return fail(fd);
        }
        // SAFETY: a fresh shared mapping of our own file, `len` bytes long.
        let Some(addr) = (unsafe { map_shared(fd, len) }) else {
            return fail(fd);
        };
        blocks().push((addr, len, fd));
        Ok(SharedBlock { addr, len, fd })
    }

    pub fn addr(&self) -> usize {
        self.addr
    }
}

impl Drop for SharedBlock {
    fn drop(&mut self) {
        blocks().retain(|&(a, _, _)| a != self.addr);
        // SAFETY: the mapping and descriptor `new` made, released once, here.
        unsafe {
            libc::munmap(self.addr as *mut libc::c_void, self.len);
            libc::close(self.fd);
        }
    }
}

/// The shareable block holding `len` bytes at `addr`: its descriptor and `addr`'s offset in it.
pub fn find(addr: usize, len: u64) -> Option<(i32, u64)> {
    let end = addr as u128 + len as u128;
    blocks()
        .iter()
        .find(|&&(a, l, _)| a <= addr && end <= a as u128 + l as u128)
        .map(|&(a, _, fd)| (fd, (addr - a) as u64))
}

/// The inode of this process's descriptor `fd` (a shareable block's file), which a peer
/// mapping the block checks (`PeerMapping::map_file`).
pub fn inode(fd: i32) -> Option<u64> {
    // SAFETY: zeroed stat is a valid out-parameter for fstat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes only `st`; a bad descriptor is an error return.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st.st_ino as u64)
}

/// Another process's block, mapped here; unmapped when dropped.
#[derive(Debug)]
pub struct PeerMapping {
    addr: usize,
    len: usize,
}

impl PeerMapping {
    /// Map the first `len` bytes of process `pid`'s descriptor `fd`, when that is a file at
    /// least that long.
    pub fn map(pid: i32, fd: i32, len: u64) -> io::Result<PeerMapping> {
        Self::map_file(pid, fd, len, None)
    }

    /// `map`, when the descriptor is the file with inode `ino` (if given): a descriptor the
    /// owner closed and reused for another file is refused.
    pub fn map_file(pid: i32, fd: i32, len: u64, ino: Option<u64>) -> io::Result<PeerMapping> {
        let path = CString::new(format!("/proc/{pid}/fd/{fd}")).expect("no NUL");
        // SAFETY: a valid C string.
        let f = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if f < 0 {
            return Err(io::Error::last_os_error());
        }
        let close = |f: i32| {
            // SAFETY: our own descriptor, closed once.
            unsafe { libc::close(f) };
        };
        // SAFETY: zeroed stat is a valid out-parameter for fstat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: our own descriptor and a writable stat.
        let ok = unsafe { libc::fstat(f, &mut st) } == 0;
        let len = usize::try_from(len).unwrap_or(usize::MAX).max(1);
        if !ok
            || (st.st_mode & libc::S_IFMT) != libc::S_IFREG
            || (st.st_size as u64) < len as u64
            || ino.is_some_and(|i| i != st.st_ino as u64)
        {
            close(f);
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not the shared block",
            ));
        }
        // The file is at least `len` bytes long (checked), so every mapped page is backed.
        // SAFETY: a shared mapping of a regular file.
        let mapped = unsafe { map_shared(f, len) };
        let e = io::Error::last_os_error();
        close(f);
        let Some(p) = mapped else {
            return Err(e);
        };
        Ok(PeerMapping { addr: p, len })
    }

    pub fn addr(&self) -> usize {
        self.addr
    }
}

impl Drop for PeerMapping {
    fn drop(&mut self) {
        // SAFETY: the mapping `map` made, unmapped once, here.
        unsafe { libc::munmap(self.addr as *mut libc::c_void, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_maps_again_through_proc() {
        let b = SharedBlock::new(10_000).unwrap();
        let (fd, off) = find(b.addr() + 100, 50).unwrap();
        assert_eq!(off, 100);
        assert!(find(b.addr() + 12_300, 8).is_none());
        let m = PeerMapping::map(std::process::id() as i32, fd, 12_288).unwrap();
        // SAFETY: both mappings are 12288 bytes of the same file.
        unsafe {
            *((b.addr() + 64) as *mut u64) = 99;
            assert_eq!(*((m.addr() + 64) as *const u64), 99);
        }
        assert!(PeerMapping::map(std::process::id() as i32, fd, 1 << 20).is_err());
        let ino = inode(fd).unwrap();
        assert!(PeerMapping::map_file(std::process::id() as i32, fd, 4096, Some(ino)).is_ok());
        assert!(PeerMapping::map_file(std::process::id() as i32, fd, 4096, Some(ino + 1)).is_err());
        drop(b);
        assert!(find(m.addr(), 8).is_none());
    }
}
