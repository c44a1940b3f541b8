//! How a rank ended, in words and as an exit code.
#![forbid(unsafe_code)]

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// The shell convention: a process killed by signal S counts as 128+S.
pub fn exit_code(status: ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(sig)) => 128 + sig,
        (None, None) => 1,
    }
}

/// `killed by signal 9 (Killed)` or `exited with code 3`.
pub fn describe(status: ExitStatus) -> String {
    match status.signal() {
        Some(sig) => format!("killed by signal {sig} ({})", signal_name(sig)),
        None => format!("exited with code {}", exit_code(status)),
    }
}

/// The name of a signal the launcher handles (`SIGTERM`), for its own messages.
pub fn signal_symbol(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// A short description of a signal, as `strsignal` gives it.
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "Hangup",
        libc::SIGINT => "Interrupt",
        libc::SIGQUIT => "Quit",
        libc::SIGILL => "Illegal instruction",
        libc::SIGTRAP => "Trace/breakpoint trap",
        libc::SIGABRT => "Aborted",
        libc::SIGBUS => "Bus error",
        libc::SIGFPE => "Floating point exception",
        libc::SIGKILL => "Killed",
        libc::SIGUSR1 => "User defined signal 1",
        libc::SIGSEGV => "Segmentation fault",
        libc::SIGUSR2 => "User defined signal 2",
        libc::SIGPIPE => "Broken pipe",
        libc::SIGALRM => "Alarm clock",
        libc::SIGTERM => "Terminated",
        libc::SIGXCPU => "CPU time limit exceeded",
        libc::SIGXFSZ => "File size limit exceeded",
        libc::SIGSYS => "Bad system call",
        _ => "unknown signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_words() {
        let exited = ExitStatus::from_raw(3 << 8);
        let killed = ExitStatus::from_raw(9);
        assert_eq!((exit_code(exited), exit_code(killed)), (3, 137));
        assert_eq!(describe(exited), "exited with code 3");
        assert_eq!(describe(killed), "killed by signal 9 (Killed)");
    }
}
