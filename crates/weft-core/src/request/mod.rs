//! Requests: per-VCI pools of pending operations and their completion status.
#![forbid(unsafe_code)]

pub mod pool;

pub use pool::{ReqId, RequestPool};

use crate::datatype::Buf;
use crate::error::ErrorClass;

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
}

impl Status {
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
}

/// What a request stands for (for `MPI_Cancel`, `MPI_Request_get_status`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Send,
    Recv,
}

/// One pending or completed operation.
#[derive(Debug)]
pub struct Request {
    pub kind: Kind,
    pub complete: bool,
    pub status: Status,
    /// Receives: where the data goes, and how much has arrived (pipelined rendezvous).
    pub buf: Buf,
    pub received: u64,
    pub expected: u64,
    /// The user freed the handle (`MPI_Request_free`): release the slot on completion.
    pub detached: bool,
    /// An opaque id of the object the operation belongs to, chosen by the caller (the ABI
    /// layer stores the communicator handle, whose errhandler reports the request's errors).
    pub owner: usize,
}

impl Request {
    pub fn new(kind: Kind, buf: Buf) -> Request {
        Request {
            kind,
            complete: false,
            status: Status::default(),
            buf,
            received: 0,
            expected: 0,
            detached: false,
            owner: 0,
        }
    }

    /// A request that is already complete with `status`.
    pub fn completed(kind: Kind, status: Status) -> Request {
        Request {
            complete: true,
            status,
            ..Request::new(kind, Buf::EMPTY)
        }
    }
}
