//! The error type shared by every part of the crate.
#![forbid(unsafe_code)]

use std::fmt;
use std::io;

/// Everything that can go wrong while speaking PMI.
///
/// Each variant names the PMI command (or the kind of data) involved so that the
/// message printed by the MPI library says what failed and why.
#[derive(Debug)]
pub enum PmiError {
    /// An environment variable that describes the PMI server is unusable.
    Environment {
        /// The variable, e.g. `PMI_FD`.
        var: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// Reading from or writing to the PMI connection failed.
    Io {
        /// The command being exchanged.
        cmd: String,
        /// The operating-system error.
        source: io::Error,
    },
    /// The server closed the connection before answering.
    Closed {
        /// The command being exchanged.
        cmd: String,
    },
    /// The server's answer was malformed or not the expected one.
    Protocol {
        /// The command being exchanged.
        cmd: String,
        /// What was wrong with the answer.
        reason: String,
    },
    /// The server answered with a non-zero return code.
    Rejected {
        /// The command the server refused.
        cmd: String,
        /// The server's return code.
        rc: i64,
        /// The server's explanation, if it gave one.
        message: String,
    },
    /// The caller passed an argument PMI cannot carry.
    InvalidArgument {
        /// The command the argument was meant for.
        cmd: String,
        /// Why the argument was refused.
        reason: String,
    },
    /// Data outside a request/answer exchange could not be decoded
    /// (a wire message, hex text, a process-set list, a process mapping).
    Malformed {
        /// What kind of data it was.
        what: &'static str,
        /// Why it could not be decoded.
        reason: String,
    },
    /// The client was already finalized.
    Finalized {
        /// The command attempted after finalize.
        cmd: String,
    },
}

impl PmiError {
    /// Builds a [`PmiError::Malformed`].
    pub(crate) fn malformed(what: &'static str, reason: impl Into<String>) -> Self {
        PmiError::Malformed {
            what,
            reason: reason.into(),
        }
    }

    /// Builds a [`PmiError::InvalidArgument`].
    pub(crate) fn invalid(cmd: &str, reason: impl Into<String>) -> Self {
        PmiError::InvalidArgument {
            cmd: cmd.to_string(),
            reason: reason.into(),
        }
    }

    /// Builds a [`PmiError::Protocol`].
    pub(crate) fn protocol(cmd: &str, reason: impl Into<String>) -> Self {
        PmiError::Protocol {
            cmd: cmd.to_string(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for PmiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PmiError::Environment { var, reason } => write!(f, "PMI environment: {var} {reason}"),
            PmiError::Io { cmd, source } => write!(f, "PMI {cmd}: connection error: {source}"),
            PmiError::Closed { cmd } => write!(f, "PMI {cmd}: the server closed the connection"),
            PmiError::Protocol { cmd, reason } => write!(f, "PMI {cmd}: bad answer: {reason}"),
            PmiError::Rejected { cmd, rc, message } if message.is_empty() => {
                write!(f, "PMI {cmd}: the server refused it (rc={rc})")
            }
            PmiError::Rejected { cmd, rc, message } => {
                write!(f, "PMI {cmd}: the server refused it (rc={rc}): {message}")
            }
            PmiError::InvalidArgument { cmd, reason } => write!(f, "PMI {cmd}: {reason}"),
            PmiError::Malformed { what, reason } => write!(f, "malformed {what}: {reason}"),
            PmiError::Finalized { cmd } => write!(f, "PMI {cmd}: called after finalize"),
        }
    }
}

impl std::error::Error for PmiError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PmiError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
