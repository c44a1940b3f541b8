//! Adoption of the PMI socket that the launcher passes down as `PMI_FD`.
//!
//! Turning an inherited descriptor number into an owned stream is `unsafe` (the crate's other
//! `unsafe` code is the PMIx binding, `crate::pmix`).

use std::mem::MaybeUninit;
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::PmiError;

/// Set once `PMI_FD` has been adopted: the descriptor is closed at finalize and its number
/// may be reused, so it must never be taken a second time.
static ADOPTED: AtomicBool = AtomicBool::new(false);

/// Takes ownership of the inherited socket `fd` and marks it close-on-exec so that it
/// does not leak into programs this process executes.
pub(crate) fn adopt_socket(fd: RawFd) -> Result<UnixStream, PmiError> {
    let env_error = |reason: String| PmiError::Environment {
        var: "PMI_FD",
        reason,
    };
    if fd < 0 {
        return Err(env_error(format!("is negative ({fd})")));
    }
    // SAFETY: F_GETFD only reads the descriptor flags; any integer is a valid argument.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags < 0 {
        return Err(env_error(format!(
            "names descriptor {fd}, which is not open"
        )));
    }
    let mut stat = MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `stat` points to writable memory of the right size for fstat to fill.
    let rc = unsafe { libc::fstat(fd, stat.as_mut_ptr()) };
    // SAFETY: fstat returned 0, so it initialized `stat`.
    if rc != 0 || unsafe { stat.assume_init() }.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return Err(env_error(format!(
            "names descriptor {fd}, which is not a socket"
        )));
    }
    if ADOPTED.swap(true, Ordering::SeqCst) {
        return Err(env_error(
            "was already used (PMI can be initialized once per process)".into(),
        ));
    }
    // SAFETY: F_SETFD only changes the close-on-exec flag of an open descriptor.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) } < 0 {
        return Err(env_error(format!(
            "descriptor {fd}: cannot set close-on-exec: {}",
            std::io::Error::last_os_error()
        )));
    }
    // `fd` is open and is a socket that the launcher handed to this process for PMI alone.
    // SAFETY: the ADOPTED flag guarantees no other owner is created, so the stream may close it.
    Ok(unsafe { UnixStream::from_raw_fd(fd) })
}
