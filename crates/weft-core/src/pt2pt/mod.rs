//! Point-to-point communication on communicators: the API the ABI layer calls.
#![forbid(unsafe_code)]

pub mod buffered;
pub mod engine;
pub mod matching;
pub mod protocol;

pub use engine::{SendMode, SendStart};
pub use matching::{Pattern, SourceSel, TagSel};

use std::sync::Arc;

use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::object::Comm;
use crate::progress;
use crate::request::{
    Ext, Kind, Persistent, PersistentOp, PersistentState, ReqId, Request, Status,
};
use crate::runtime::Instance;
use engine::Target;
use matching::Unexpected;

/// Where a message to rank `dest` of `comm` goes (collectives and schedules use it too).
pub fn target(comm: &Comm, dest: u32, tag: i32) -> MpiResult<Target> {
    let dest_job = comm.peer_group().proc_at(dest).ok_or_else(|| {
        MpiError::new(
            ErrorClass::Rank,
            format!(
                "rank {dest} is not in the communicator (size {})",
                comm.peer_size()
            ),
        )
    })?;
    Ok(Target {
        context: comm.context_id(),
        my_rank: comm.rank,
        dest: dest_job,
        tag,
    })
}

/// Start a send and return its request; `owner` is stored in the request (see `Request`).
pub fn isend(
    comm: &Comm,
    dest: u32,
    tag: i32,
    buf: Buf,
    mode: SendMode,
    owner: usize,
) -> MpiResult<ReqId> {
    let target = target(comm, dest, tag)?;
    let inst = &comm.session.instance;
    let mut st = inst.vcis[comm.vci].lock();
    match engine::start_send(&inst.transports, comm.vci, &mut st, target, buf, mode, true)? {
        SendStart::Pending(id) => {
            if id != st.requests.completed_send() {
                if let Some(req) = st.requests.get_mut(id) {
                    req.owner = owner;
                }
            }
            Ok(id)
        }
        SendStart::Done => unreachable!("a forced request is always returned"),
    }
}

/// A standard-mode send of `buf` to rank `dest`, if it can be done at once (see
/// `engine::try_send_now`): then the send is complete and the VCI's shared completed request
/// is returned for callers that need a request. `None`: nothing was done.
pub fn try_send_now(comm: &Comm, dest: u32, tag: i32, buf: &Buf) -> Option<ReqId> {
    let dest_job = comm.peer_group().proc_at(dest)?;
    let target = Target {
        context: comm.context_id(),
        my_rank: comm.rank,
        dest: dest_job,
        tag,
    };
    let inst = &comm.session.instance;
    let st = inst.vcis[comm.vci].lock();
    engine::try_send_now(&inst.transports, comm.vci, &st, &target, buf)
        .then(|| st.requests.completed_send())
}

/// A blocking send.
pub fn send(comm: &Comm, dest: u32, tag: i32, buf: Buf, mode: SendMode) -> MpiResult<()> {
    let target = target(comm, dest, tag)?;
    let inst = &comm.session.instance;
    let start = {
        let mut st = inst.vcis[comm.vci].lock();
        engine::start_send(
            &inst.transports,
            comm.vci,
            &mut st,
            target,
            buf,
            mode,
            false,
        )?
    };
    match start {
        SendStart::Done => Ok(()),
        SendStart::Pending(id) => status_result(progress::wait(inst, id).status).map(|_| ()),
    }
}

/// Start a receive; `owner` is stored in the request (see `Request`).
pub fn irecv(comm: &Comm, source: SourceSel, tag: TagSel, buf: Buf, owner: usize) -> ReqId {
    let inst = &comm.session.instance;
    let pattern = Pattern {
        context: comm.context_id(),
        source,
        tag,
    };
    // No progress pass here: arrivals still in the ring are matched against this receive when
    // they are drained, and polling a ring the sender is writing costs a cache-line transfer.
    let mut st = inst.vcis[comm.vci].lock();
    engine::start_recv_owned(&inst.transports, comm.vci, &mut st, pattern, buf, owner)
}

/// A blocking receive. The status is returned even on truncation (as an error status).
pub fn recv(comm: &Comm, source: SourceSel, tag: TagSel, buf: Buf) -> Status {
    let pattern = Pattern {
        context: comm.context_id(),
        source,
        tag,
    };
    if let Some(status) = engine::recv_direct(&comm.session.instance, comm.vci, &pattern, buf) {
        return status;
    }
    let id = irecv(comm, source, tag, buf, 0);
    progress::wait(&comm.session.instance, id).status
}

/// Look for a matching message without receiving it.
pub fn iprobe(comm: &Comm, source: SourceSel, tag: TagSel) -> Option<Status> {
    let inst = &comm.session.instance;
    let pattern = Pattern {
        context: comm.context_id(),
        source,
        tag,
    };
    let mut st = inst.vcis[comm.vci].lock();
    engine::progress(&inst.transports, comm.vci, &mut st);
    st.matching.peek_unexpected(&pattern).map(probe_status)
}

/// Wait for a matching message without receiving it.
pub fn probe(comm: &Comm, source: SourceSel, tag: TagSel) -> Status {
    let mut backoff = progress::Backoff::new(&comm.session.instance);
    loop {
        if let Some(status) = iprobe(comm, source, tag) {
            return status;
        }
        progress::polled::run();
        backoff.idle();
    }
}

/// Turn an operation's status into the call's result (errors such as truncation).
pub fn status_result(status: Status) -> MpiResult<Status> {
    if status.error == 0 {
        Ok(status)
    } else {
        let class = ErrorClass::from_i32(status.error).unwrap_or(ErrorClass::Other);
        let what = if class == ErrorClass::Truncate {
            "message truncated: the receive buffer is smaller than the message".to_owned()
        } else {
            format!("the operation failed ({})", class.name())
        };
        Err(MpiError::new(class, what))
    }
}

/// `MPI_Cancel`: a receive still waiting for its message is cancelled (it completes with
/// the cancelled flag); a persistent request cancels its running operation; a generalized
/// request calls its `cancel_fn`. Anything else (sends, matched receives) completes
/// normally: cancelling a send never succeeds (its status says not cancelled).
pub fn cancel(inst: &Instance, id: ReqId) {
    if progress::greq_cancel(inst, id) {
        return;
    }
    let mut st = inst.vcis[id.vci() as usize].lock();
    let target = match st.requests.get(id) {
        Some(Request {
            ext: Ext::Persistent(p),
            ..
        }) => match p.state {
            PersistentState::Running(inner) => inner,
            _ => return,
        },
        _ => id,
    };
    if st.matching.cancel_posted(target) {
        let status = Status {
            cancelled: true,
            ..Status::default()
        };
        engine::complete(&mut st, target, status);
    }
}

// ------------------------------------------------------------------ persistent requests

/// Create an inactive persistent request on `vci` (`MPI_Send_init`, `MPI_Recv_init`, ...).
pub fn persistent_init(inst: &Instance, vci: usize, op: PersistentOp, owner: usize) -> ReqId {
    let mut req = Request::new(Kind::Persistent, Buf::EMPTY);
    req.owner = owner;
    req.ext = Ext::Persistent(Box::new(Persistent {
        op,
        state: PersistentState::Inactive,
    }));
    inst.vcis[vci].lock().requests.alloc(req)
}

/// A persistent operation the caller must carry out itself (buffered sends copy into the
/// attached buffer, which only the ABI layer can address), then report with `start_done`.
pub enum Started {
    Running,
    Buffered {
        comm: Arc<Comm>,
        dest: u32,
        tag: i32,
        buf: Buf,
    },
    /// A persistent collective: the caller starts it (`CollStart`), then `start_running`.
    Collective(crate::coll::persistent::CollStart),
}

/// `MPI_Start`: start an inactive persistent request.
pub fn start(inst: &Instance, id: ReqId, func: &str) -> MpiResult<Started> {
    let vci = id.vci() as usize;
    let mut st = inst.vcis[vci].lock();
    let op = match st.requests.get(id) {
        Some(Request {
            ext: Ext::Persistent(p),
            ..
        }) => {
            if p.state != PersistentState::Inactive {
                return Err(MpiError::new(
                    ErrorClass::Request,
                    format!("{func}(request): the persistent request is already active"),
                ));
            }
            p.op.clone()
        }
        _ => {
            return Err(MpiError::new(
                ErrorClass::Request,
                format!("{func}(request): not a persistent request"),
            ))
        }
    };
    let state = match op {
        PersistentOp::Send { target, buf, mode } => {
            match engine::start_send(&inst.transports, vci, &mut st, target, buf, mode, true)? {
                engine::SendStart::Pending(inner) => PersistentState::Running(inner),
                engine::SendStart::Done => PersistentState::Done(Status::default()),
            }
        }
        PersistentOp::Recv { pattern, buf } => {
            engine::progress(&inst.transports, vci, &mut st);
            PersistentState::Running(engine::start_recv(
                &inst.transports,
                vci,
                &mut st,
                pattern,
                buf,
            ))
        }
        PersistentOp::Null(status) => PersistentState::Done(status),
        PersistentOp::Collective(c) => return Ok(Started::Collective(c)),
        PersistentOp::Buffered {
            comm,
            dest,
            tag,
            buf,
        } => {
            return Ok(Started::Buffered {
                comm,
                dest,
                tag,
                buf,
            })
        }
    };
    set_persistent_state(&mut st, id, state);
    Ok(Started::Running)
}

/// A buffered persistent send was carried out by the caller: the request is active and
/// complete (the data is in the attached buffer).
/// A persistent collective was started by the caller: its schedule request is `inner`.
pub fn start_running(inst: &Instance, id: ReqId, inner: ReqId) {
    let mut st = inst.vcis[id.vci() as usize].lock();
    set_persistent_state(&mut st, id, PersistentState::Running(inner));
}

pub fn start_done(inst: &Instance, id: ReqId) {
    let mut st = inst.vcis[id.vci() as usize].lock();
    set_persistent_state(&mut st, id, PersistentState::Done(Status::default()));
}

fn set_persistent_state(st: &mut progress::vci::VciState, id: ReqId, state: PersistentState) {
    if let Some(Request {
        ext: Ext::Persistent(p),
        ..
    }) = st.requests.get_mut(id)
    {
        p.state = state;
    }
}

// ------------------------------------------------------------------ matched probes

/// A message taken off the unexpected queue by a matched probe (`MPI_Mprobe`): only the
/// matching `MPI_Mrecv` can receive it.
#[derive(Debug)]
pub struct Message {
    pub vci: usize,
    pub message: Unexpected,
}

fn probe_status(m: &Unexpected) -> Status {
    Status {
        source: m.key.source as i32,
        tag: m.key.tag,
        error: 0,
        bytes: m.bytes(),
        cancelled: false,
    }
}

/// `MPI_Improbe`: take the first matching message, if one has arrived.
pub fn improbe(comm: &Comm, source: SourceSel, tag: TagSel) -> Option<(Status, Message)> {
    let inst = &comm.session.instance;
    let pattern = Pattern {
        context: comm.context_id(),
        source,
        tag,
    };
    let mut st = inst.vcis[comm.vci].lock();
    engine::progress(&inst.transports, comm.vci, &mut st);
    let message = st.matching.take_unexpected(&pattern)?;
    Some((
        probe_status(&message),
        Message {
            vci: comm.vci,
            message,
        },
    ))
}

/// `MPI_Mprobe`: wait for a matching message and take it.
pub fn mprobe(comm: &Comm, source: SourceSel, tag: TagSel) -> (Status, Message) {
    let mut backoff = progress::Backoff::new(&comm.session.instance);
    loop {
        if let Some(found) = improbe(comm, source, tag) {
            return found;
        }
        progress::polled::run();
        backoff.idle();
    }
}

/// `MPI_Imrecv`: receive a matched message into `buf`.
pub fn imrecv(inst: &Instance, message: Message, buf: Buf, owner: usize) -> ReqId {
    let vci = message.vci;
    let mut st = inst.vcis[vci].lock();
    let mut req = Request::new(Kind::Recv, buf);
    req.owner = owner;
    let id = st.requests.alloc(req);
    engine::receive_matched(&inst.transports, vci, &mut st, id, message.message);
    id
}

// ------------------------------------------------------------------ send-receive

/// `MPI_Isendrecv`: a schedule that starts the receive and the send at once and completes
/// (with the receive's status) when both have. `keep` is dropped when it completes (the
/// ABI passes the copy `MPI_Isendrecv_replace` sends from). `None` sides are `MPI_PROC_NULL`;
/// `null_status` is the status when there is no receive.
#[allow(clippy::too_many_arguments)]
pub fn isendrecv(
    comm: &Comm,
    send: Option<(u32, i32, Buf)>,
    recv: Option<(SourceSel, TagSel, Buf)>,
    null_status: Status,
    keep: Option<Box<dyn std::any::Any + Send>>,
    owner: usize,
) -> MpiResult<ReqId> {
    let mut send_target = match send {
        Some((dest, tag, buf)) => Some((target(comm, dest, tag)?, buf)),
        None => None,
    };
    let context = comm.context_id();
    let mut started = false;
    let mut rreq: Option<ReqId> = None;
    let mut sreq: Option<ReqId> = None;
    let mut rstatus: Option<Status> = None;
    let mut serror: Option<MpiError> = None;
    let mut keep = keep;
    let mut recv = recv;
    let sched = move |cx: &mut progress::schedule::Cx<'_>| {
        if !started {
            started = true;
            if let Some((source, tag, buf)) = recv.take() {
                rreq = Some(cx.irecv(
                    Pattern {
                        context,
                        source,
                        tag,
                    },
                    buf,
                ));
            }
            if let Some((t, buf)) = send_target.take() {
                match cx.isend(t, buf, SendMode::Standard) {
                    Ok(id) => sreq = Some(id),
                    Err(e) => serror = Some(e),
                }
            }
        }
        if let Some(id) = rreq {
            if let Some(s) = cx.take(id) {
                rstatus = Some(s);
                rreq = None;
            }
        }
        if let Some(id) = sreq {
            if cx.take(id).is_some() {
                sreq = None;
            }
        }
        if rreq.is_some() || sreq.is_some() {
            return progress::schedule::Step::Pending;
        }
        keep.take();
        let mut status = rstatus.unwrap_or(null_status);
        if status.error == 0 && serror.is_some() {
            status.error = serror.as_ref().map_or(0, |e| e.class());
        }
        progress::schedule::Step::Done(status)
    };
    Ok(progress::schedule::start(
        &comm.session.instance,
        comm.vci,
        owner,
        Box::new(sched),
    ))
}
