//! The node's shared segment: created by whichever local rank gets there first, attached by
//! the others, unlinked as soon as every local rank has mapped it (so nothing is left in
//! /dev/shm even if a rank crashes later). No launcher round trip is needed. A process that
//! unmaps the node's segment between sessions rejoins it through a descriptor it kept
//! (`Rejoin`): the name is gone by then.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::shareable::map_shared;

/// Written last by the creator; attachers wait for it.
const READY_MAGIC: u64 = 0x5745_4654_5348_4d31; // "WEFTSHM1"
/// How long an attacher waits for the creator before giving up.
const ATTACH_TIMEOUT: Duration = Duration::from_secs(60);

/// The first bytes of the segment.
#[repr(C)]
struct SegmentHeader {
    magic: AtomicU64,
    len: u64,
    attached: AtomicU32,
}

/// A descriptor of the node's segment, kept to map it again after unmapping it.
#[derive(Debug)]
pub struct Rejoin {
    fd: OwnedFd,
}

/// A mapping of the node's shared segment.
pub struct Segment {
    base: *mut u8,
    len: usize,
    name: CString,
    local_size: u32,
}

// SAFETY: the mapping is shared memory whose contents are accessed only through atomics and
// the protocols built on them; the pointer itself may move between threads.
unsafe impl Send for Segment {}
// SAFETY: as above.
unsafe impl Sync for Segment {}

fn os_error(what: &str, name: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what} {name}: {e}"))
}

/// How `Segment::open` treats an existing name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    /// Create it unless it exists, else attach (whoever comes first creates).
    Either,
    /// Create a fresh one; an existing name is an error.
    Create,
    /// Attach an existing one; a missing name is an error.
    Attach,
}

impl Segment {
    /// Create or attach the segment `name` of `len` bytes shared by `local_size` ranks, and
    /// keep a descriptor of it to map it again later (`rejoin`).
    pub fn create_or_attach(
        name: &str,
        len: usize,
        local_size: u32,
    ) -> io::Result<(Segment, Rejoin)> {
        let mut kept = None;
        let segment = Segment::open(name, len, local_size, Open::Either, Some(&mut kept), |_| {})?;
        let fd = kept.expect("open keeps the descriptor it was asked to keep");
        Ok((segment, Rejoin { fd }))
    }

    /// Map again a segment this process mapped before (and may have unmapped since).
    pub fn rejoin(rejoin: &Rejoin, name: &str, len: usize, local_size: u32) -> io::Result<Segment> {
        let (base, len) = Segment::map(rejoin.fd.as_raw_fd(), len, name, Some(Duration::ZERO))?;
        let segment = Segment {
            base,
            len,
            name: CString::new(name)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "segment name has NUL"))?,
            local_size,
        };
        let header = segment.header();
        // SAFETY: published before `magic`, which this process saw when it first attached.
        let their_len = unsafe { (*segment.base.cast::<SegmentHeader>()).len };
        if header.magic.load(Ordering::Acquire) != READY_MAGIC || their_len != len as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("shared segment {name} changed since this process attached it"),
            ));
        }
        Ok(segment)
    }

    /// Create the segment `name` unless it exists, else attach it (whoever comes first
    /// creates), for `participants` processes; the name goes when all of them mapped it.
    pub fn create_or_attach_by(name: &str, len: usize, participants: u32) -> io::Result<Segment> {
        Segment::open(name, len, participants, Open::Either, None, |_| {})
    }

    /// Create the fresh segment `name` (zero-filled) that `participants` processes, this one
    /// included, will map; the others `attach` it once told its name.
    pub fn create(name: &str, len: usize, participants: u32) -> io::Result<Segment> {
        Segment::open(name, len, participants, Open::Create, None, |_| {})
    }

    /// Attach the segment `name` that another process created for `participants` processes.
    pub fn attach(name: &str, len: usize, participants: u32) -> io::Result<Segment> {
        Segment::open(name, len, participants, Open::Attach, None, |_| {})
    }

    fn open(
        name: &str,
        len: usize,
        local_size: u32,
        mode: Open,
        keep: Option<&mut Option<OwnedFd>>,
        init: impl FnOnce(*mut u8),
    ) -> io::Result<Segment> {
        assert!(len >= std::mem::size_of::<SegmentHeader>());
        let cname = CString::new(name)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "segment name has NUL"))?;
        // SAFETY: plain system calls on a NUL-terminated name; results are checked.
        let (fd, created) = unsafe {
            let fd = if mode == Open::Attach {
                -1
            } else {
                libc::shm_open(
                    cname.as_ptr(),
                    libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC,
                    0o600,
                )
            };
            if fd >= 0 {
                if libc::ftruncate(fd, len as libc::off_t) != 0 {
                    let e = os_error("cannot size shared segment", name);
                    libc::close(fd);
                    libc::shm_unlink(cname.as_ptr());
                    return Err(e);
                }
                (fd, true)
            } else if mode == Open::Attach
                || (mode == Open::Either
                    && io::Error::last_os_error().raw_os_error() == Some(libc::EEXIST))
            {
                let fd = libc::shm_open(cname.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC, 0o600);
                if fd < 0 {
                    return Err(os_error("cannot open shared segment", name));
                }
                (fd, false)
            } else {
                return Err(os_error("cannot create shared segment", name));
            }
        };
        // An attacher of `Either` may race the creator's `ftruncate`; one of `Attach` is told
        // the name only after creation, so a short object means disagreeing settings.
        let patience = match (created, mode) {
            (true, _) => None,
            (false, Open::Either) => Some(ATTACH_TIMEOUT),
            (false, _) => Some(Duration::ZERO),
        };
        let segment = Segment::map(fd, len, name, patience).map(|(base, len)| Segment {
            base,
            len,
            name: cname.clone(),
            local_size,
        });
        match keep {
            // SAFETY: fd is an open descriptor that nothing else owns.
            Some(kept) if segment.is_ok() => *kept = Some(unsafe { OwnedFd::from_raw_fd(fd) }),
            // SAFETY: fd is ours; the mapping (if any) keeps the memory alive.
            _ => unsafe {
                libc::close(fd);
            },
        }
        if segment.is_err() && created {
            // SAFETY: plain system call on a NUL-terminated name: nobody can use it now.
            unsafe { libc::shm_unlink(cname.as_ptr()) };
        }
        let segment = segment?;
        let header = segment.header();
        if created {
            init(segment.base);
            // SAFETY: `len` is a plain field; nobody reads it before `magic` is published.
            unsafe {
                std::ptr::addr_of_mut!((*segment.base.cast::<SegmentHeader>()).len)
                    .write(len as u64)
            };
            header.magic.store(READY_MAGIC, Ordering::Release);
        } else {
            let start = Instant::now();
            while header.magic.load(Ordering::Acquire) != READY_MAGIC {
                if start.elapsed() > ATTACH_TIMEOUT {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("shared segment {name} never became ready"),
                    ));
                }
                std::thread::yield_now();
            }
            // SAFETY: published before `magic` (release/acquire above).
            let their_len = unsafe { (*segment.base.cast::<SegmentHeader>()).len };
            if their_len != len as u64 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("shared segment {name} has {their_len} bytes, expected {len}: ranks disagree on WEFT_SHM_* or WEFT_COLL_SHM_MAX"),
                ));
            }
        }
        if header.attached.fetch_add(1, Ordering::AcqRel) + 1 == local_size {
            // Everyone has mapped it: remove the name so nothing outlives the job.
            // SAFETY: plain system call on a NUL-terminated name.
            unsafe { libc::shm_unlink(cname.as_ptr()) };
        }
        Ok(segment)
    }

    /// Map `len` bytes of `fd`; an attacher (`patience` set) first waits that long at most for
    /// the object to reach `len` bytes.
    fn map(
        fd: libc::c_int,
        len: usize,
        name: &str,
        patience: Option<Duration>,
    ) -> io::Result<(*mut u8, usize)> {
        if let Some(patience) = patience {
            // Wait until the creator has sized the object, or mmap would fault on access.
            let start = Instant::now();
            loop {
                // SAFETY: fstat into a zeroed struct; result checked.
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                // SAFETY: fd is a valid descriptor and st is writable.
                if unsafe { libc::fstat(fd, &mut st) } != 0 {
                    return Err(os_error("cannot stat shared segment", name));
                }
                if st.st_size as usize >= len {
                    break;
                }
                if start.elapsed() >= patience {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("shared segment {name} never reached {len} bytes"),
                    ));
                }
                std::thread::yield_now();
            }
        }
        // SAFETY: mapping a shared object we opened read-write, `len` bytes long (above).
        match unsafe { map_shared(fd, len) } {
            Some(base) => Ok((base as *mut u8, len)),
            None => Err(os_error("cannot map shared segment", name)),
        }
    }

    /// Remove the segment's name if some local rank has not attached yet (this process is
    /// aborting: the others will be killed before they attach, and the name must not stay
    /// behind in /dev/shm).
    pub fn unlink_if_pending(&self) {
        if self.header().attached.load(Ordering::Acquire) < self.local_size {
            // SAFETY: plain system call on a NUL-terminated name; failure (already gone) is fine.
            unsafe { libc::shm_unlink(self.name.as_ptr()) };
        }
    }

    fn header(&self) -> &SegmentHeader {
        // Page alignment satisfies the header's alignment.
        // SAFETY: the segment starts with a SegmentHeader (len checked at creation), page-aligned.
        unsafe { &*self.base.cast::<SegmentHeader>() }
    }

    #[inline]
    pub fn base(&self) -> *mut u8 {
        self.base
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // No references outlive the Segment (rings borrow it through the transport that owns it).
        // SAFETY: unmapping exactly the mapping we made.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// Bytes reserved at the start of the segment for its header (one cache line, rounded up).
pub const HEADER_BYTES: usize = 128;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_attachers_share_memory_the_name_goes_away_and_a_kept_descriptor_rejoins() {
        let name = format!(
            "/weft.test-{}-{:x}",
            std::process::id(),
            Instant::now().elapsed().as_nanos()
        );
        let (a, _) = Segment::create_or_attach(&name, 4096, 2).unwrap();
        // SAFETY: a's fresh memory; offset 200 is inside 4096 bytes.
        unsafe { *a.base().add(200) = 42 };
        let (b, rejoin) = Segment::create_or_attach(&name, 4096, 2).unwrap();
        // SAFETY: both map the same 4096 bytes.
        unsafe {
            assert_eq!(*b.base().add(200), 42);
            *b.base().add(201) = 7;
            assert_eq!(*a.base().add(201), 7);
        }
        let path = format!("/dev/shm{name}");
        assert!(
            !std::path::Path::new(&path).exists(),
            "unlinked once both attached"
        );
        drop(b);
        let again = Segment::rejoin(&rejoin, &name, 4096, 2).unwrap();
        // SAFETY: the same memory, mapped anew.
        unsafe {
            assert_eq!(*again.base().add(200), 42);
            *again.base().add(202) = 9;
            assert_eq!(*a.base().add(202), 9);
        }
        assert!(
            Segment::rejoin(&rejoin, &name, 8192, 2).is_err(),
            "a different size is refused"
        );
    }
}
