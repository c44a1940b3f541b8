//! Thin safe wrappers over the system calls the launcher needs and `std` lacks.
//!
//! All of the launcher's `unsafe` code lives here.

use std::fs::File;
use std::io::{self, Read};
use std::mem::{self, MaybeUninit};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

/// A `signalfd` receiving the given signals, which are blocked for normal delivery.
pub struct SignalFd {
    file: File,
}

impl SignalFd {
    /// Blocks `signals` in this (single-threaded) process and opens a non-blocking,
    /// close-on-exec `signalfd` for them. SIGCHLD gets its default disposition back, as
    /// an inherited "ignore" would make the kernel discard it and reap the children.
    pub fn new(signals: &[i32]) -> io::Result<SignalFd> {
        if signals.contains(&libc::SIGCHLD) {
            // SAFETY: installing the default disposition involves no handler code.
            unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
        }
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: sigemptyset initializes the set it is given.
        unsafe { libc::sigemptyset(set.as_mut_ptr()) };
        for &sig in signals {
            // SAFETY: the set was initialized by sigemptyset above.
            unsafe { libc::sigaddset(set.as_mut_ptr(), sig) };
        }
        // SAFETY: the set is initialized; a null old-set pointer is allowed.
        if unsafe { libc::sigprocmask(libc::SIG_BLOCK, set.as_ptr(), std::ptr::null_mut()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let fd =
            // SAFETY: -1 asks for a new descriptor; the set is initialized.
            unsafe { libc::signalfd(-1, set.as_ptr(), libc::SFD_NONBLOCK | libc::SFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: signalfd returned a new descriptor that nothing else owns.
        let file = unsafe { File::from_raw_fd(fd) };
        Ok(SignalFd { file })
    }

    /// The next pending signal number, `None` when none is pending.
    pub fn next(&mut self) -> io::Result<Option<i32>> {
        let mut info = [0u8; mem::size_of::<libc::signalfd_siginfo>()];
        match self.file.read(&mut info) {
            Ok(n) if n == info.len() => {
                let signo = u32::from_ne_bytes([info[0], info[1], info[2], info[3]]);
                Ok(Some(signo as i32))
            }
            Ok(_) => Ok(None),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl AsRawFd for SignalFd {
    fn as_raw_fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}

/// A poll entry asking for readability of `fd`.
pub fn readable(fd: RawFd) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

/// Waits until an entry is ready or `timeout` passes (`None`: no limit). An interrupted
/// wait returns `Ok(0)`.
pub fn poll(fds: &mut [libc::pollfd], timeout: Option<Duration>) -> io::Result<usize> {
    let ms = match timeout {
        None => -1,
        Some(t) => i32::try_from(t.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX),
    };
    // SAFETY: `fds` is a valid, exclusively borrowed array of `fds.len()` pollfd entries.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    match n {
        n if n >= 0 => Ok(n as usize),
        _ => match io::Error::last_os_error() {
            e if e.kind() == io::ErrorKind::Interrupted => Ok(0),
            e => Err(e),
        },
    }
}

/// Sends `signal` to process `pid`; a process that is already gone is not an error.
pub fn kill(pid: u32, signal: i32) {
    // kill has no memory effects.
    // SAFETY: callers only name children not yet reaped, so the pid cannot have been recycled.
    unsafe { libc::kill(pid as libc::pid_t, signal) };
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; all-zero bytes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_getaffinity(0, mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE and `set` is initialized.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// Prepares a rank's process between fork and exec: it dies with the launcher
/// (`PR_SET_PDEATHSIG`), gets an empty signal mask, keeps `inherit_fd` open across exec
/// and, with `cpu`, is pinned to that CPU.
pub fn prepare_child(cmd: &mut Command, inherit_fd: RawFd, cpu: Option<usize>) {
    let parent = std::process::id() as libc::pid_t;
    let setup = move || -> io::Result<()> {
        // Only async-signal-safe calls below: no allocation, no locks.
        // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number and has no memory effects.
        if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: getppid has no preconditions.
        if unsafe { libc::getppid() } != parent {
            // The launcher died before the death signal was armed.
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        let mut empty = MaybeUninit::<libc::sigset_t>::uninit();
        // sigemptyset initializes the set.
        // SAFETY: sigprocmask reads it and accepts a null old-set pointer.
        unsafe {
            libc::sigemptyset(empty.as_mut_ptr());
            libc::sigprocmask(libc::SIG_SETMASK, empty.as_ptr(), std::ptr::null_mut());
        }
        // SAFETY: F_SETFD with 0 clears close-on-exec of a descriptor this process owns.
        if unsafe { libc::fcntl(inherit_fd, libc::F_SETFD, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        if let Some(cpu) = cpu {
            // SAFETY: cpu_set_t is plain data; all-zero bytes is the empty set.
            let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
            // Binding is best effort, so its failure is ignored.
            // SAFETY: CPU_SET is given an initialized set; sched_setaffinity reads its size.
            unsafe {
                libc::CPU_SET(cpu, &mut set);
                libc::sched_setaffinity(0, mem::size_of::<libc::cpu_set_t>(), &set);
            }
        }
        Ok(())
    };
    // Between fork and exec a child may only make async-signal-safe calls.
    // SAFETY: `setup` only makes async-signal-safe system calls and touches no shared state.
    unsafe { cmd.pre_exec(setup) };
}
