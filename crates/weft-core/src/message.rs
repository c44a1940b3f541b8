//! The value types of a message, shared by every layer that sends, receives or completes one:
//! who it goes to (`Target`), how it is sent (`SendMode`), what a receive accepts (`Pattern`
//! and its selectors), what matching compares (`Key`), and what a finished operation reports
//! (`Status`). A leaf: it names nothing above the error type.
#![forbid(unsafe_code)]

use crate::error::{ErrorClass, MpiError, MpiResult};

/// What a completed operation reports (`MPI_Status` without the C layout).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// Rank of the sender in the communicator (receives), or as the operation sets it.
    pub source: i32,
    pub tag: i32,
    /// Error class or code of the operation (`MPI_SUCCESS` = 0).
    pub error: i32,
    /// Bytes received (or sent).
    pub bytes: u64,
    pub cancelled: bool,
    /// (A collective) a receive got more or fewer bytes than it expected: the ranks passed
    /// different counts or datatypes. Not part of the C status.
    pub sizes_differ: bool,
}

impl Status {
    /// The status of a cancelled operation.
    pub const CANCELLED: Status = Status {
        source: 0,
        tag: 0,
        error: 0,
        bytes: 0,
        cancelled: true,
        sizes_differ: false,
    };

    /// The status of an operation with `MPI_PROC_NULL` as peer (source PROC_NULL, tag ANY).
    pub fn proc_null(proc_null: i32, any_tag: i32) -> Status {
        Status {
            source: proc_null,
            tag: any_tag,
            ..Status::default()
        }
    }

    pub fn is_error(&self) -> bool {
        self.error != 0
    }

    pub fn truncated(&self) -> bool {
        self.error == ErrorClass::Truncate as i32
    }

    /// The operation's status as the call's result (errors such as truncation).
    pub fn into_result(self) -> MpiResult<Status> {
        if self.error == 0 {
            return Ok(self);
        }
        let class = ErrorClass::from_i32(self.error).unwrap_or(ErrorClass::Other);
        let what = if self.sizes_differ {
            "a message of the collective does not have the size this rank expected: the count or datatype differs between the ranks".to_owned()
        } else if class == ErrorClass::Op {
            "a message of the collective carries another op than this rank's: the op differs between the ranks".to_owned()
        } else if class == ErrorClass::Truncate {
            "message truncated: the receive buffer is smaller than the message".to_owned()
        } else if class == ErrorClass::Type {
            format!(
                "the message ({} bytes) ends inside a basic element of the receive datatype: the type signatures do not match",
                self.bytes
            )
        } else if class == ErrorClass::ProcAborted {
            "a process this operation depends on was lost (the network transport reported it on stderr)".to_owned()
        } else {
            format!("the operation failed ({})", class.name())
        };
        Err(MpiError::new(class, what))
    }
}

/// How a send behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMode {
    Standard,
    /// Completes only after the receive is matched (`MPI_Ssend`).
    Synchronous,
    /// Standard, but a large message on the node is read by the receiver with one copy
    /// (`process_vm_readv`, where the kernel lets it) whatever `WEFT_SHM_LARGE` says: it moves
    /// while the sender is outside MPI (the partitions of a partitioned send).
    Pulled,
}

/// Who a message goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    pub context: u32,
    /// The sender's rank in the communicator (the receiver sees it as the source).
    pub my_rank: u32,
    /// The destination's rank in the job.
    pub dest: u32,
    pub tag: i32,
    /// The destination's VCI: the communicator's implicit VCI, or the stream the destination
    /// attached to a stream communicator.
    pub vci: u8,
    /// The sender's stream on a multiplex stream communicator, plus one (0: none), so that
    /// receives can select it.
    pub stream: u8,
}

impl Target {
    #[inline]
    pub fn new(context: u32, my_rank: u32, dest: u32, tag: i32, vci: u8) -> Target {
        Target {
            context,
            my_rank,
            dest,
            tag,
            vci,
            stream: 0,
        }
    }
}

/// Which sources a receive accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceSel {
    Any,
    Rank(u32),
}

/// Which tags a receive accepts (`Any` matches every non-negative tag).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagSel {
    Any,
    Tag(i32),
    /// Every tag equal to `tag` outside the bits of `ignore` (collectives' messages carry
    /// facts for the receiver there: `coll::tag::FLAGS`).
    Masked {
        tag: i32,
        ignore: i32,
    },
}

/// The part of a message that matching looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub context: u32,
    /// The sender's rank in the communicator.
    pub source: u32,
    pub tag: i32,
    /// The sender's stream on a multiplex stream communicator, plus one (0: none).
    pub stream: u8,
}

/// What a receive asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub context: u32,
    pub source: SourceSel,
    pub tag: TagSel,
    /// The sender's stream a receive on a multiplex stream communicator accepts, plus one
    /// (0: any stream, and every message of other communicators).
    pub stream: u8,
}

impl Pattern {
    #[inline]
    pub fn new(context: u32, source: SourceSel, tag: TagSel) -> Pattern {
        Pattern {
            context,
            source,
            tag,
            stream: 0,
        }
    }

    /// A receive from one rank with one tag (what collectives and internal exchanges post).
    #[inline]
    pub fn exact(context: u32, source: u32, tag: i32) -> Pattern {
        Pattern::new(context, SourceSel::Rank(source), TagSel::Tag(tag))
    }

    #[inline]
    pub fn matches(&self, key: &Key) -> bool {
        self.context == key.context
            && match self.source {
                SourceSel::Any => true,
                SourceSel::Rank(r) => r == key.source,
            }
            && match self.tag {
                TagSel::Any => key.tag >= 0,
                TagSel::Tag(t) => t == key.tag,
                TagSel::Masked { tag, ignore } => key.tag & !ignore == tag,
            }
            && (self.stream == 0 || self.stream == key.stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_tag_skips_negative_tags() {
        let any = Pattern::new(0, SourceSel::Any, TagSel::Any);
        let key = Key {
            context: 0,
            source: 0,
            tag: -5,
            stream: 2,
        };
        assert!(!any.matches(&key));
        assert!(Pattern::exact(0, 0, -5).matches(&key));
        assert!(!Pattern::exact(1, 0, -5).matches(&key), "other context");
        let from_stream = |s| Pattern {
            stream: s,
            ..Pattern::exact(0, 0, -5)
        };
        assert!(from_stream(2).matches(&key), "its stream");
        assert!(!from_stream(1).matches(&key), "another stream");
        let masked =
            |tag| Pattern::new(0, SourceSel::Rank(0), TagSel::Masked { tag, ignore: 0x30 });
        let key = Key { tag: 0x23, ..key };
        assert!(masked(3).matches(&key), "the ignored bits differ");
        assert!(!masked(2).matches(&key), "another tag");
    }

    #[test]
    fn status_result_names_truncation() {
        assert!(Status::default().into_result().is_ok());
        let t = Status {
            error: ErrorClass::Truncate as i32,
            ..Status::default()
        };
        let e = t.into_result().unwrap_err();
        assert_eq!(e.class(), ErrorClass::Truncate as i32);
        assert!(e.message.contains("truncated"));
    }
}
