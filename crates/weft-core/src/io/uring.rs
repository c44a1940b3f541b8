//! The io_uring ring of nonblocking file operations (one per process, made on first use).
//! Like the transports this is system interface code, so `unsafe` lives here: the kernel
//! reads and writes the memory of a queued operation until its completion arrives. That
//! memory is a `Buf`, whose maker (an `unsafe` constructor) promised it stays valid while an
//! operation uses it; the nonblocking file operation that pushed it keeps it until `reap`
//! returns its completion.

use std::io;
use std::os::fd::RawFd;
use std::sync::Mutex;
use std::time::Duration;

use io_uring::{opcode, squeue, types, IoUring};

use crate::datatype::Buf;

/// Queue entries of the ring.
const ENTRIES: u32 = 256;

pub struct Ring {
    ring: IoUring,
    /// Held while touching the submission or completion queue (one user at a time); waiting
    /// for completions needs no lock.
    queues: Mutex<()>,
}

/// One finished operation: its tag and the kernel's result (bytes, or `-errno`).
pub type Completion = (u64, i32);

impl Ring {
    /// A ring, or why the kernel refused it. `workers` > 0 bounds the kernel threads it
    /// may use for file I/O.
    pub fn new(workers: u32) -> io::Result<Ring> {
        let ring = IoUring::builder().build(ENTRIES)?;
        if workers > 0 {
            let mut max = [workers, workers];
            // Older kernels lack the call; the default then applies.
            let _ = ring.submitter().register_iowq_max_workers(&mut max);
        }
        Ok(Ring {
            ring,
            queues: Mutex::new(()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.queues.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queue a read (`write` false) or write of `len` bytes at `addr` from/to `offset` of
    /// `fd`, tagged `tag`. `punt` hands it to the kernel's workers at once (so a large copy
    /// from the page cache runs on another core instead of inside the submitting call).
    /// Returns false when the queue is full (submit and reap first). `buf` is a contiguous
    /// buffer; like every `Buf` it carries its maker's promise that the memory stays valid
    /// (writable for reads) while the operation using it is pending, and the caller keeps
    /// the operation, and the file `fd` belongs to, until the completion tagged `tag` has
    /// been taken by `reap`.
    pub fn push(
        &self,
        fd: RawFd,
        write: bool,
        buf: &Buf,
        offset: u64,
        tag: u64,
        punt: bool,
    ) -> bool {
        assert!(buf.is_contiguous() && buf.len() <= u32::MAX as usize);
        let (addr, len) = (buf.addr(), buf.len() as u32);
        let entry = if write {
            opcode::Write::new(types::Fd(fd), addr as *const u8, len)
                .offset(offset)
                .build()
        } else {
            opcode::Read::new(types::Fd(fd), addr as *mut u8, len)
                .offset(offset)
                .build()
        };
        let flags = if punt {
            squeue::Flags::ASYNC
        } else {
            squeue::Flags::empty()
        };
        let entry = entry.flags(flags).user_data(tag);
        let _q = self.lock();
        // The entry's memory is valid until its completion: the Buf's contract, and the caller
        // keeps the operation until then (see above).
        // SAFETY: the queue lock makes this the only user of the submission queue.
        unsafe { self.ring.submission_shared().push(&entry).is_ok() }
    }

    /// Hand queued entries to the kernel without waiting.
    pub fn submit(&self) -> io::Result<()> {
        let _q = self.lock();
        self.ring.submit().map(|_| ())
    }

    /// Submit what is queued and wait up to `timeout` for at least one completion (one
    /// system call).
    pub fn wait(&self, timeout: Duration) -> io::Result<()> {
        let ts = types::Timespec::from(timeout);
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Take every completion that arrived.
    pub fn reap(&self) -> Vec<Completion> {
        let _q = self.lock();
        // SAFETY: the queue lock makes this the only user of the completion queue.
        let cq = unsafe { self.ring.completion_shared() };
        cq.map(|c| (c.user_data(), c.result())).collect()
    }
}
