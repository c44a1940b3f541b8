//! Cross-memory attach: read another process's memory with one copy (`process_vm_readv`).

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
}
