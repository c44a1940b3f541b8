//! The node's shared segment: created by the node's first local rank alone, attached by the
//! others once its name appears, unlinked as soon as every local rank has mapped it (so
//! nothing is left in /dev/shm even if a rank crashes later). No launcher round trip is
//! needed. An attacher never creates the name: once the creator removed it (it aborted
//! before everyone attached), a late rank cannot bring it back and leave it behind when the
//! launcher kills it. A process that unmaps the node's segment between sessions rejoins it
//! through a descriptor it kept (`Rejoin`): the name is gone by then.
//!
//! ## The attach/abandon handshake
//! An attacher counts itself in the header's `attached` word, then reads its `abandoned`
//! flag (`attach_handshake`); a process that gives the segment up (it is aborting) sets the
//! flag, then reads the count, and removes the name while some participant is missing
//! (`abandon_handshake`). Claim: an attacher that the abandoner did not count sees the flag
//! and fails, so no process joins a job that is ending without the abandoner knowing.
//! Why: the four accesses are sequentially consistent (`SeqCst` fences between each side's
//! two accesses, which loom models exactly, where it treats `SeqCst` accesses as merely
//! acquire/release), so they take place in one total order that keeps each side's program
//! order. If the abandoner's read of the count comes before the attacher's increment, then
//! its write of the flag, earlier still, comes before the attacher's read of the flag,
//! which therefore sees it. Otherwise the abandoner's read comes after the increment and
//! counts the attacher. Both may remove the name (the last attacher, the abandoner): a
//! second removal fails harmlessly. The loom model `loom_an_uncounted_attacher_sees_abandon`
//! checks the claim with two attachers and an abandoner.

use crate::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use super::shareable::map_shared;

/// Written last by the creator; attachers wait for it.
const READY_MAGIC: u64 = 0x5745_4654_5348_4d31; // "WEFTSHM1"
/// How long an attacher waits for the creator before giving up.
pub const ATTACH_TIMEOUT: Duration = Duration::from_secs(60);

/// The first bytes of the segment.
#[repr(C)]
struct SegmentHeader {
    magic: AtomicU64,
    len: u64,
    attached: AtomicU32,
    /// Set (1) by a process that gives the segment up before every participant attached (it
    /// is aborting): a participant attaching after that fails instead of joining.
    abandoned: AtomicU32,
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
    /// Attach one that its single creator makes: wait this long at most for the name to
    /// appear; never create it.
    Await(Duration),
}

impl Segment {
    /// Create the node segment `name` of `len` bytes shared by `local_size` ranks (the
    /// caller is the node's first local rank, its only creator), and keep a descriptor of it
    /// to map it again later (`rejoin`).
    pub fn create_node(name: &str, len: usize, local_size: u32) -> io::Result<(Segment, Rejoin)> {
        Segment::open_kept(name, len, local_size, Open::Create)
    }

    /// Attach the node segment `name` that the node's first local rank creates, waiting up
    /// to `patience` for its name to appear; fails if it never does (the creator did not
    /// start, or aborted and removed it) or if the segment was abandoned (the job is ending).
    pub fn attach_node(
        name: &str,
        len: usize,
        local_size: u32,
        patience: Duration,
    ) -> io::Result<(Segment, Rejoin)> {
        Segment::open_kept(name, len, local_size, Open::Await(patience))
    }

    fn open_kept(
        name: &str,
        len: usize,
        local_size: u32,
        mode: Open,
    ) -> io::Result<(Segment, Rejoin)> {
        let mut kept = None;
        let segment = Segment::open(name, len, local_size, mode, Some(&mut kept), |_| {})?;
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
        let (fd, created) = match mode {
            Open::Await(patience) => (Segment::await_name(&cname, name, patience)?, false),
            _ => Segment::create_or_open(&cname, name, len, mode)?,
        };
        // An attacher of `Either` or `Await` may race the creator's `ftruncate`; one of
        // `Attach` is told the name only after creation, so a short object means disagreeing
        // settings.
        let patience = match (created, mode) {
            (true, _) => None,
            (false, Open::Either | Open::Await(_)) => Some(ATTACH_TIMEOUT),
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
        let (count, abandoned) = attach_handshake(&header.attached, &header.abandoned);
        if count == local_size {
            // Everyone has mapped it: remove the name so nothing outlives the job.
            // SAFETY: plain system call on a NUL-terminated name.
            unsafe { libc::shm_unlink(cname.as_ptr()) };
        }
        if abandoned {
            // The launcher is ending the job: leave its exit status to the rank that aborted
            // (waiting out the patience for the kill), then fail.
            if let Open::Await(patience) = mode {
                let start = Instant::now();
                while start.elapsed() < patience {
                    std::thread::yield_now();
                }
            }
            return Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                format!("shared segment {name} was abandoned before this process attached: the job is ending"),
            ));
        }
        Ok(segment)
    }

    /// Create `cname` (sized `len`) or open it as `mode` says: (descriptor, created).
    fn create_or_open(
        cname: &CString,
        name: &str,
        len: usize,
        mode: Open,
    ) -> io::Result<(libc::c_int, bool)> {
        // SAFETY: plain system calls on a NUL-terminated name; results are checked.
        unsafe {
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
                Ok((fd, true))
            } else if mode == Open::Attach
                || (mode == Open::Either
                    && io::Error::last_os_error().raw_os_error() == Some(libc::EEXIST))
            {
                let fd = libc::shm_open(cname.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC, 0o600);
                if fd < 0 {
                    return Err(os_error("cannot open shared segment", name));
                }
                Ok((fd, false))
            } else if io::Error::last_os_error().raw_os_error() == Some(libc::EEXIST) {
                Err(os_error(
                    "cannot create shared segment (an earlier job with the same id left it behind?)",
                    name,
                ))
            } else {
                Err(os_error("cannot create shared segment", name))
            }
        }
    }

    /// Open the name `cname` once its creator made it, waiting up to `patience` while it is
    /// missing; never create it.
    fn await_name(cname: &CString, name: &str, patience: Duration) -> io::Result<libc::c_int> {
        let start = Instant::now();
        loop {
            let flags = libc::O_RDWR | libc::O_CLOEXEC;
            // SAFETY: plain system call on a NUL-terminated name; the result is checked.
            let fd = unsafe { libc::shm_open(cname.as_ptr(), flags, 0o600) };
            if fd >= 0 {
                return Ok(fd);
            }
            if io::Error::last_os_error().raw_os_error() != Some(libc::ENOENT) {
                return Err(os_error("cannot open shared segment", name));
            }
            if start.elapsed() >= patience {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("shared segment {name} did not appear within {patience:?}: the node's first rank did not start, or the job is ending"),
                ));
            }
            std::thread::yield_now();
        }
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
    /// behind in /dev/shm). One that attaches before it is killed fails (`abandoned`).
    pub fn unlink_if_pending(&self) {
        let header = self.header();
        if abandon_handshake(&header.attached, &header.abandoned) < self.local_size {
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

/// An attacher's half of the handshake (module docs): count this process, then read the
/// flag. Says (the count with this process, whether the segment was abandoned).
fn attach_handshake(attached: &AtomicU32, abandoned: &AtomicU32) -> (u32, bool) {
    let count = attached.fetch_add(1, Ordering::SeqCst) + 1;
    fence(Ordering::SeqCst);
    (count, abandoned.load(Ordering::SeqCst) != 0)
}

/// An abandoning process's half (module docs): set the flag, then read the count of
/// processes attached (below the participants' number, the name must go).
fn abandon_handshake(attached: &AtomicU32, abandoned: &AtomicU32) -> u32 {
    abandoned.store(1, Ordering::SeqCst);
    fence(Ordering::SeqCst);
    attached.load(Ordering::SeqCst)
}

/// Bytes reserved at the start of the segment for its header (one cache line, rounded up).
pub const HEADER_BYTES: usize = 128;

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    /// The handshake (module docs) with three participants: the creator (counted), and two
    /// attachers running while a process abandons the segment. Every attacher that did not
    /// see the flag was counted by the abandoner's read.
    #[test]
    fn loom_an_uncounted_attacher_sees_abandon() {
        crate::sync::loom_model(|| {
            let words = Arc::new((AtomicU32::new(1), AtomicU32::new(0)));
            let attachers: Vec<_> = (0..2)
                .map(|_| {
                    let w = words.clone();
                    loom::thread::spawn(move || attach_handshake(&w.0, &w.1))
                })
                .collect();
            let counted = abandon_handshake(&words.0, &words.1);
            for t in attachers {
                let (count, abandoned) = t.join().unwrap();
                assert!(
                    abandoned || count <= counted,
                    "attacher {count} joined unseen (the abandoner read {counted})"
                );
            }
            assert_eq!(words.0.load(Ordering::SeqCst), 3);
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn fresh_name(what: &str) -> String {
        format!(
            "/weft.test-{what}-{}-{:x}",
            std::process::id(),
            Instant::now().elapsed().as_nanos()
        )
    }

    fn exists(name: &str) -> bool {
        std::path::Path::new(&format!("/dev/shm{name}")).exists()
    }

    #[test]
    fn two_attachers_share_memory_the_name_goes_away_and_a_kept_descriptor_rejoins() {
        let name = fresh_name("node");
        let (a, _) = Segment::create_node(&name, 4096, 2).unwrap();
        // SAFETY: a's fresh memory; offset 200 is inside 4096 bytes.
        unsafe { *a.base().add(200) = 42 };
        let (b, rejoin) = Segment::attach_node(&name, 4096, 2, Duration::ZERO).unwrap();
        // SAFETY: both map the same 4096 bytes.
        unsafe {
            assert_eq!(*b.base().add(200), 42);
            *b.base().add(201) = 7;
            assert_eq!(*a.base().add(201), 7);
        }
        assert!(!exists(&name), "unlinked once both attached");
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

    /// Issue #25: the creator aborts (removes the name) before the other rank attaches; the
    /// late rank must fail, not create the name again (it would stay in /dev/shm when the
    /// launcher kills it).
    #[test]
    fn a_late_attacher_never_creates_a_name_the_creator_removed() {
        let name = fresh_name("late");
        let (a, _) = Segment::create_node(&name, 4096, 2).unwrap();
        a.unlink_if_pending();
        assert!(!exists(&name), "an aborting creator removes the name");
        let late = Segment::attach_node(&name, 4096, 2, Duration::from_millis(20));
        let err = late.err().expect("the late rank fails");
        assert_eq!(err.kind(), io::ErrorKind::NotFound, "{err}");
        assert!(err.to_string().contains("job is ending"), "{err}");
        assert!(!exists(&name), "nothing was created again");
    }

    #[test]
    fn an_attacher_of_an_abandoned_segment_fails_and_a_second_creator_is_refused() {
        let name = fresh_name("abandoned");
        let (a, _) = Segment::create_node(&name, 4096, 3).unwrap();
        assert!(
            Segment::create_node(&name, 4096, 3).is_err(),
            "one creator per node segment"
        );
        // As if the attacher opened the name just before the creator gave the segment up.
        a.header().abandoned.store(1, Ordering::SeqCst);
        let err = Segment::attach_node(&name, 4096, 3, Duration::ZERO)
            .err()
            .expect("attaching an abandoned segment fails");
        assert_eq!(err.kind(), io::ErrorKind::ConnectionAborted, "{err}");
        a.unlink_if_pending();
        assert!(!exists(&name));
    }
}
