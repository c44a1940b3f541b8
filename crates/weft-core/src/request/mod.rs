//! Requests: per-VCI pools of pending operations and their completion status.
#![forbid(unsafe_code)]

pub mod grequest;
pub mod pool;

pub use grequest::{GreqClass, Grequest};
pub use pool::{ReqId, RequestPool};

use std::sync::Arc;

use crate::datatype::Buf;
use crate::error::ErrorClass;
use crate::object::Comm;
use crate::pt2pt::engine::{SendMode, Target};
use crate::pt2pt::matching::Pattern;

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
    /// A persistent request (`MPI_Send_init`, ...): `ext` holds what `MPI_Start` starts.
    Persistent,
    /// A generalized request (`MPI_Grequest_start`, `MPIX_Grequest_*`): `ext` holds it.
    Generalized,
    /// An internal schedule driven by the VCI's progress pass (`progress::schedule`).
    Schedule,
}

/// What `MPI_Start` starts for a persistent request.
#[derive(Clone, Debug)]
pub enum PersistentOp {
    Send {
        target: Target,
        buf: Buf,
        mode: SendMode,
    },
    Recv {
        pattern: Pattern,
        buf: Buf,
    },
    /// A buffered send: the ABI layer copies the data into the attached buffer at each start.
    Buffered {
        comm: Arc<Comm>,
        dest: u32,
        tag: i32,
        buf: Buf,
    },
    /// The peer is `MPI_PROC_NULL`: each start completes at once with this status.
    Null(Status),
    /// A persistent collective: each start builds and starts a fresh schedule, outside the
    /// VCI lock (the ABI layer runs it, then `pt2pt::start_running`).
    Collective(crate::coll::persistent::CollStart),
}

/// Where a persistent request is in its cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PersistentState {
    /// Not started (or completed and waited for): waiting on it returns an empty status.
    Inactive,
    /// Started: the operation it runs.
    Running(ReqId),
    /// Started and already complete with this status (buffered and `MPI_PROC_NULL` ops).
    Done(Status),
}

/// The state of a persistent request.
#[derive(Clone, Debug)]
pub struct Persistent {
    pub op: PersistentOp,
    pub state: PersistentState,
}

/// The parts only some kinds of request have (kept out of line so that the common
/// send/receive request stays small).
#[derive(Debug, Default)]
pub enum Ext {
    #[default]
    None,
    Persistent(Box<Persistent>),
    Greq(Arc<Grequest>),
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
    /// The buffer's derived type, held while the operation is pending (the user may free it).
    pub keep: Option<std::sync::Arc<crate::datatype::Type>>,
    pub ext: Ext,
}

impl Request {
    #[inline]
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
            keep: buf.keep(),
            ext: Ext::None,
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
