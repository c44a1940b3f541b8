//! Cross-memory attach: read or write another process's memory with one copy
//! (`process_vm_readv`/`process_vm_writev`).

use std::io;

/// Ask the kernel to let peers read this process's memory where a Yama-like policy would
/// otherwise forbid it (harmless and ignored where there is no such policy).
pub fn allow_peers() {
    // SAFETY: prctl with integer arguments; the result is deliberately ignored.
    unsafe { libc::prctl(libc::PR_SET_PTRACER, libc::PR_SET_PTRACER_ANY, 0, 0, 0) };
}

/// Copy `len` bytes from `remote` in process `pid` to `local` in this process.
///
/// # Safety
/// `local..local+len` must be writable memory of this process not otherwise accessed.
pub unsafe fn read(pid: i32, remote: usize, local: usize, len: usize) -> io::Result<()> {
    let mut done = 0;
    while done < len {
        let local_iov = libc::iovec {
            iov_base: (local + done) as *mut libc::c_void,
            iov_len: len - done,
        };
        let remote_iov = libc::iovec {
            iov_base: (remote + done) as *mut libc::c_void,
            iov_len: len - done,
        };
        // SAFETY: one local and one remote iovec; the local range is writable per the contract.
        let n = unsafe { libc::process_vm_readv(pid, &local_iov, 1, &remote_iov, 1, 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "process_vm_readv copied nothing",
            ));
        }
        done += n as usize;
    }
    Ok(())
}

/// The most remote pieces one `process_vm_*v` call takes (the kernel's `IOV_MAX`).
const IOV_MAX: usize = 1024;

/// Which direction a vectored copy goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Read,
    Write,
}

/// Copy between the contiguous local bytes `local..local+len` and the remote pieces
/// `(address, length)` of process `pid`, in order (their lengths add up to `len`).
///
/// # Safety
/// For `Dir::Read` the local range is writable memory of this process not otherwise
/// accessed; for `Dir::Write` it is readable.
unsafe fn vectored(pid: i32, remote: &[(usize, usize)], local: usize, dir: Dir) -> io::Result<()> {
    let mut at = local;
    for chunk in remote.chunks(IOV_MAX) {
        let mut iovs: Vec<libc::iovec> = chunk
            .iter()
            .filter(|(_, l)| *l > 0)
            .map(|&(a, l)| libc::iovec {
                iov_base: a as *mut libc::c_void,
                iov_len: l,
            })
            .collect();
        let mut first = 0;
        while first < iovs.len() {
            let want: usize = iovs[first..].iter().map(|v| v.iov_len).sum();
            let local_iov = libc::iovec {
                iov_base: at as *mut libc::c_void,
                iov_len: want,
            };
            let rest = &iovs[first..];
            // Remote iovecs the kernel checks against the target's mappings (EFAULT when unmapped).
            // SAFETY: one local iovec over memory the caller vouches for.
            let n = unsafe {
                match dir {
                    Dir::Read => libc::process_vm_readv(
                        pid,
                        &local_iov,
                        1,
                        rest.as_ptr(),
                        rest.len() as libc::c_ulong,
                        0,
                    ),
                    Dir::Write => libc::process_vm_writev(
                        pid,
                        &local_iov,
                        1,
                        rest.as_ptr(),
                        rest.len() as libc::c_ulong,
                        0,
                    ),
                }
            };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "cross-memory copy moved nothing",
                ));
            }
            // A partial copy ends inside some piece: skip the whole ones, shorten that one.
            let mut n = n as usize;
            at += n;
            while n > 0 {
                let v = &mut iovs[first];
                if n >= v.iov_len {
                    n -= v.iov_len;
                    first += 1;
                } else {
                    v.iov_base = (v.iov_base as usize + n) as *mut libc::c_void;
                    v.iov_len -= n;
                    n = 0;
                }
            }
        }
    }
    Ok(())
}

/// Read the remote pieces of process `pid`, in order, into `local`.
pub fn read_pieces(pid: i32, remote: &[(usize, usize)], local: &mut [u8]) -> io::Result<()> {
    debug_assert_eq!(remote.iter().map(|p| p.1).sum::<usize>(), local.len());
    // SAFETY: `local` is a live, exclusively borrowed, writable slice.
    unsafe { vectored(pid, remote, local.as_mut_ptr() as usize, Dir::Read) }
}

/// Write `local`, in order, to the remote pieces of process `pid`.
pub fn write_pieces(pid: i32, remote: &[(usize, usize)], local: &[u8]) -> io::Result<()> {
    debug_assert_eq!(remote.iter().map(|p| p.1).sum::<usize>(), local.len());
    // SAFETY: `local` is a live readable slice; writev only reads it.
    unsafe { vectored(pid, remote, local.as_ptr() as usize, Dir::Write) }
}

/// Whether this kernel lets this process read another unrelated process's memory: starts a
/// short-lived child (`sleep`), reads a few bytes of its first readable mapping.
pub fn probe() -> io::Result<()> {
    let mut child = std::process::Command::new("sleep").arg("5").spawn()?;
    let result = probe_child(child.id() as i32);
    let _ = child.kill();
    let _ = child.wait();
    result
}

fn probe_child(pid: i32) -> io::Result<()> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))?;
    let start = maps
        .lines()
        .find(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|perms| perms.starts_with('r'))
        })
        .and_then(|l| l.split('-').next())
        .and_then(|a| usize::from_str_radix(a, 16).ok())
        .ok_or_else(|| {
            io::Error::new(io::ErrorKind::NotFound, "no readable mapping in the child")
        })?;
    let mut scratch = [0u8; 8];
    // SAFETY: `scratch` is a live, writable local buffer of 8 bytes.
    unsafe { read(pid, start, scratch.as_mut_ptr() as usize, scratch.len()) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_own_memory() {
        let src: Vec<u8> = (0..=255).collect();
        let mut dst = vec![0u8; 256];
        // SAFETY: dst is a live, writable 256-byte buffer.
        unsafe {
            super::read(
                std::process::id() as i32,
                src.as_ptr() as usize,
                dst.as_mut_ptr() as usize,
                256,
            )
        }
        .unwrap();
        assert_eq!(src, dst);
    }

    #[test]
    fn pieces_go_both_ways() {
        let pid = std::process::id() as i32;
        let mut target = vec![0u8; 64];
        let t = target.as_mut_ptr() as usize;
        let pieces = [(t + 1, 3), (t + 10, 0), (t + 20, 5)];
        super::write_pieces(pid, &pieces, &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        assert_eq!(&target[0..5], &[0, 1, 2, 3, 0]);
        assert_eq!(&target[19..26], &[0, 4, 5, 6, 7, 8, 0]);
        let mut back = [0u8; 8];
        super::read_pieces(pid, &pieces, &mut back).unwrap();
        assert_eq!(back, [1, 2, 3, 4, 5, 6, 7, 8]);
    }
}
