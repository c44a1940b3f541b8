//! The few file-system calls the standard library does not wrap: preallocation and byte-range
//! locks (atomic mode). Like the transports, this is system interface code, so `unsafe`
//! lives here, each call with its `SAFETY` line.

use std::io;
use std::os::fd::AsRawFd;

/// Make sure storage for bytes `0..size` exists (`MPI_File_preallocate`).
pub fn preallocate(file: &std::fs::File, size: u64) -> io::Result<()> {
    if size == 0 {
        return Ok(());
    }
    // SAFETY: a plain system call on an open descriptor; the result is checked.
    let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, size as libc::off_t) };
    match rc {
        0 => Ok(()),
        libc::EOPNOTSUPP | libc::EINVAL => {
            // A file system without fallocate: make the file at least that long.
            if file.metadata()?.len() < size {
                file.set_len(size)?;
            }
            Ok(())
        }
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// A byte-range lock held on a file (released on drop). Open-file-description locks: they
/// belong to this open of the file, so two threads of one process exclude each other too.
pub struct RangeLock<'f> {
    file: &'f std::fs::File,
    start: u64,
    len: u64,
}

fn flock(kind: libc::c_short, start: u64, len: u64) -> libc::flock {
    // SAFETY: `flock` is a plain C struct for which all-zero bytes are a valid value.
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    l.l_type = kind;
    l.l_whence = libc::SEEK_SET as libc::c_short;
    l.l_start = start as libc::off_t;
    l.l_len = len as libc::off_t;
    l
}

impl<'f> RangeLock<'f> {
    /// Wait for a lock on `start..start+len` (shared for reads, exclusive for writes).
    pub fn new(
        file: &'f std::fs::File,
        start: u64,
        len: u64,
        write: bool,
    ) -> io::Result<RangeLock<'f>> {
        let kind = if write { libc::F_WRLCK } else { libc::F_RDLCK } as libc::c_short;
        let l = flock(kind, start, len.max(1));
        loop {
            // SAFETY: fcntl with a valid descriptor and a pointer to a live flock.
            let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLKW, &l) };
            if rc == 0 {
                return Ok(RangeLock {
                    file,
                    start,
                    len: len.max(1),
                });
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

impl Drop for RangeLock<'_> {
    fn drop(&mut self) {
        let l = flock(libc::F_UNLCK as libc::c_short, self.start, self.len);
        // SAFETY: as in `new`; unlocking cannot block.
        unsafe { libc::fcntl(self.file.as_raw_fd(), libc::F_OFD_SETLK, &l) };
    }
}
