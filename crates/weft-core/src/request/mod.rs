//! Requests: per-VCI pools of pending operations and their completion status.
#![forbid(unsafe_code)]

pub mod grequest;
pub mod pool;

pub use grequest::{GreqClass, Grequest};
pub use pool::{ReqId, RequestPool};

use std::sync::Arc;

use crate::datatype::Buf;
use crate::error::MpiResult;
use crate::message::{Pattern, SendMode, Status, Target};

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
    /// The peer is `MPI_PROC_NULL`: each start completes at once with this status.
    Null(Status),
    /// An operation whose start is its creator's code (see `StartFn`).
    Deferred(StartFn),
    /// A partitioned operation (`MPI_Psend_init`, `MPI_Precv_init`): started like `Deferred`;
    /// `state` is what `MPI_Pready`/`MPI_Parrived` reach through the request
    /// (`pt2pt::partitioned::Partitioned`, which lives above this floor).
    Partitioned {
        start: StartFn,
        state: Arc<dyn std::any::Any + Send + Sync>,
    },
}

type StartCode = dyn Fn(&str) -> MpiResult<Option<ReqId>> + Send + Sync;

/// The start of a persistent operation the request layer cannot carry out itself: a
/// buffered send copies into the attached buffer (which only the ABI addresses), a persistent
/// collective builds a fresh schedule. Its creator supplies the code; `MPI_Start` runs it
/// outside every lock, with the name of the starting function (for its error messages). It
/// returns the request of the operation it started, or `None` when the operation completed
/// at once.
#[derive(Clone)]
pub struct StartFn(Arc<StartCode>);

impl StartFn {
    pub fn new(code: impl Fn(&str) -> MpiResult<Option<ReqId>> + Send + Sync + 'static) -> StartFn {
        StartFn(Arc::new(code))
    }

    pub fn run(&self, func: &str) -> MpiResult<Option<ReqId>> {
        (self.0)(func)
    }
}

impl std::fmt::Debug for StartFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("deferred start")
    }
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
    /// A send whose message went (or goes) to VCI `vci` of job rank `dest`, in a header
    /// carrying token `message` (this request's own; for a buffered send's request, the
    /// internal send's that sends from the attached buffer): what `MPI_Cancel` needs to
    /// withdraw it.
    Sent {
        dest: u32,
        vci: u8,
        cancel: SendCancel,
        message: u64,
    },
}

/// Where a send request is in cancelling (`vci::cancel`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SendCancel {
    /// `MPI_Cancel` was not called.
    #[default]
    NotAsked,
    /// The receiver was asked to withdraw the message; the request was still pending (it
    /// completes by its protocol, or cancelled by a yes).
    Asked,
    /// The receiver was asked while the request was already complete (an eager message
    /// waiting in the receiver's queue): it is pending again until the answer.
    AskedComplete,
    /// Answered, or cancelled here: a later `MPI_Cancel` does nothing.
    Settled,
}

/// One pending or completed operation.
#[derive(Debug)]
pub struct Request {
    pub kind: Kind,
    pub complete: bool,
    pub status: Status,
    /// Receives: where the data goes, and how much has arrived (pipelined rendezvous).
    /// Rendezvous sends: `expected` is the message's size (nonzero), 0 for other sends.
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
