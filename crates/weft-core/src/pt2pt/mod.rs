//! Point-to-point communication on communicators: the API the ABI layer calls. Every send
//! goes through `start_send`, whose first branch (in `vci::engine`) puts a small message
//! straight into the peer's queue.
#![forbid(unsafe_code)]

pub mod buffered;
pub mod partitioned;
pub mod thread_wire;

use crate::datatype::Buf;
use crate::error::{MpiError, MpiResult};
use crate::instance::Instance;
use crate::message::{Pattern, SendMode, SourceSel, Status, TagSel, Target};
use crate::object::stream_comm::Lane;
use crate::object::Comm;
use crate::progress;
use crate::request::{Ext, Kind, PersistentState, ReqId, Request};
use crate::vci::cancel;
use crate::vci::engine::{self, SendStart};
use crate::vci::matching::Unexpected;
use crate::vci::schedule::{Cx, Step};

/// Start a send of `buf` to rank `dest` of `comm` (the ABI checked `dest`): the one way down
/// for every send. With `request = Some(owner)`, a request is returned even if nothing is
/// left to wait for, and `owner` is stored in it (see `Request::owner`); with `None`,
/// `SendStart::Done` says the send is complete. `Pending` requests are waited for with
/// `progress::wait`.
#[inline(always)]
pub fn start_send(
    comm: &Comm,
    dest: u32,
    tag: i32,
    buf: Buf,
    mode: SendMode,
    request: Option<usize>,
) -> MpiResult<SendStart> {
    let target = comm.target(dest, tag)?;
    send_on(comm, comm.vci, target, buf, mode, request)
}

/// `start_send` from this process's VCI `vci` to `target`. Always inlined, like
/// `start_send` and `isend`: each layer passes a `MpiResult` through memory otherwise, and
/// together they cost a small send a quarter of its instructions (callgrind).
#[inline(always)]
fn send_on(
    comm: &Comm,
    vci: usize,
    target: Target,
    buf: Buf,
    mode: SendMode,
    request: Option<usize>,
) -> MpiResult<SendStart> {
    let inst = &comm.session.instance;
    comm.msg_counts.sent(buf.len());
    let mut st = inst.vcis[vci].lock();
    let start = engine::start_send(
        &inst.transports,
        vci,
        &mut st,
        target,
        buf,
        mode,
        request.is_some(),
    )?;
    if let (SendStart::Pending(id), Some(owner)) = (&start, request) {
        if !id.is_completed_send() {
            if let Some(req) = st.requests.get_mut(*id) {
                req.owner = owner;
            }
        }
    }
    Ok(start)
}

/// `MPIX_Stream_send`/`isend`: `start_send` between the streams `lane` names.
pub fn start_stream_send(
    comm: &Comm,
    dest: u32,
    tag: i32,
    buf: Buf,
    lane: Lane,
    request: Option<usize>,
) -> MpiResult<SendStart> {
    let mut target = comm.target(dest, tag)?;
    target.vci = lane.remote_vci;
    target.stream = lane.mark;
    send_on(comm, lane.vci, target, buf, SendMode::Standard, request)
}

/// A nonblocking send: `start_send` asked for a request.
#[inline(always)]
pub fn isend(
    comm: &Comm,
    dest: u32,
    tag: i32,
    buf: Buf,
    mode: SendMode,
    owner: usize,
) -> MpiResult<ReqId> {
    match start_send(comm, dest, tag, buf, mode, Some(owner))? {
        SendStart::Pending(id) => Ok(id),
        SendStart::Done => unreachable!("a send asked for a request always returns one"),
    }
}

/// Finish a blocking send that `start_send` left pending.
pub fn wait_send(inst: &Instance, id: ReqId) -> MpiResult<()> {
    progress::wait(inst, id).status.into_result().map(|_| ())
}

/// A blocking send.
pub fn send(comm: &Comm, dest: u32, tag: i32, buf: Buf, mode: SendMode) -> MpiResult<()> {
    match start_send(comm, dest, tag, buf, mode, None)? {
        SendStart::Done => Ok(()),
        SendStart::Pending(id) => wait_send(&comm.session.instance, id),
    }
}

/// Start a receive; `owner` is stored in the request (see `Request::owner`).
#[inline]
pub fn irecv(comm: &Comm, source: SourceSel, tag: TagSel, buf: Buf, owner: usize) -> ReqId {
    let pattern = Pattern::new(comm.context_id(), source, tag);
    irecv_on(comm, comm.vci, pattern, buf, owner)
}

/// `irecv` on this process's VCI `vci`.
#[inline]
fn irecv_on(comm: &Comm, vci: usize, pattern: Pattern, buf: Buf, owner: usize) -> ReqId {
    let inst = &comm.session.instance;
    // No progress pass here: arrivals still in the queue are matched against this receive
    // when they are drained, and polling a queue the sender is writing costs a cache-line
    // transfer.
    let mut st = inst.vcis[vci].lock();
    engine::start_recv(&inst.transports, vci, &mut st, pattern, buf, owner)
}

/// A blocking receive. The status is returned even on truncation (as an error status).
pub fn recv(comm: &Comm, source: SourceSel, tag: TagSel, buf: Buf) -> Status {
    let pattern = Pattern::new(comm.context_id(), source, tag);
    recv_on(comm, comm.vci, pattern, buf)
}

/// `recv` on this process's VCI `vci`.
fn recv_on(comm: &Comm, vci: usize, pattern: Pattern, buf: Buf) -> Status {
    let inst = &comm.session.instance;
    if let Some(status) = engine::recv_direct(
        &inst.transports,
        &inst.vcis[vci],
        inst.spin(),
        &pattern,
        buf,
    ) {
        return status;
    }
    let id = irecv_on(comm, vci, pattern, buf, 0);
    progress::wait(inst, id).status
}

/// `MPIX_Stream_irecv`: `irecv` on the stream `lane` names, of the sender's stream it
/// names (or any).
pub fn stream_irecv(
    comm: &Comm,
    source: SourceSel,
    tag: TagSel,
    buf: Buf,
    lane: Lane,
    owner: usize,
) -> ReqId {
    let pattern = Pattern {
        stream: lane.mark,
        ..Pattern::new(comm.context_id(), source, tag)
    };
    irecv_on(comm, lane.vci, pattern, buf, owner)
}

/// `MPIX_Stream_recv`.
pub fn stream_recv(comm: &Comm, source: SourceSel, tag: TagSel, buf: Buf, lane: Lane) -> Status {
    let pattern = Pattern {
        stream: lane.mark,
        ..Pattern::new(comm.context_id(), source, tag)
    };
    recv_on(comm, lane.vci, pattern, buf)
}

/// Look for a matching message without receiving it.
pub fn iprobe(comm: &Comm, source: SourceSel, tag: TagSel) -> Option<Status> {
    let inst = &comm.session.instance;
    let pattern = Pattern::new(comm.context_id(), source, tag);
    let mut st = inst.vcis[comm.vci].lock();
    engine::probe(&inst.transports, comm.vci, &mut st, &pattern)
}

/// `MPI_Comm_free`: discard the point-to-point messages sent on `comm` that this process
/// received no receive for (an erroneous program, MPICH's `errors/comm/unmatched`); their
/// statuses (source, tag, size), so the caller can report them.
pub fn discard_unmatched(comm: &Comm) -> Vec<Status> {
    if !comm.is_resolved() {
        return Vec::new();
    }
    let inst = &comm.session.instance;
    let mut st = inst.vcis[comm.vci].lock();
    engine::discard_unexpected(&inst.transports, comm.vci, &mut st, comm.context_id())
}

/// Wait for a matching message without receiving it.
pub fn probe(comm: &Comm, source: SourceSel, tag: TagSel) -> Status {
    let mut backoff = comm.session.instance.backoff();
    loop {
        if let Some(status) = iprobe(comm, source, tag) {
            return status;
        }
        crate::polled::run();
        backoff.idle();
    }
}

/// `MPI_Cancel`: a receive still waiting for its message is cancelled (it completes with
/// the cancelled flag); a persistent request cancels its running operation; a generalized
/// request calls its `cancel_fn`, and an error it returns is the call's; a send is
/// withdrawn if no receive matched its message yet (`vci::cancel`). Anything else (matched
/// receives and sends) completes normally, its status saying not cancelled.
pub fn cancel(inst: &Instance, id: ReqId) -> MpiResult<()> {
    match progress::greq::cancel(inst, id) {
        Some(0) => return Ok(()),
        Some(code) => {
            return Err(MpiError::with_code(
                code,
                format!(
                "MPI_Cancel(request): the generalized request's cancel_fn returned error {code}"
            ),
            ))
        }
        None => {}
    }
    let (t, vci) = (&inst.transports, id.vci() as usize);
    let mut st = inst.vcis[vci].lock();
    if id.is_completed_send() {
        // From now on the handle stands for the request carrying the cancel.
        if st.requests.stand_in(id).is_none() {
            if let Some(real) = cancel::cancel_completed_send(t, vci, &mut st, id) {
                st.requests.add_stand_in(id, real);
                inst.vcis[vci].note_stand_ins(&st);
            }
        }
        return Ok(());
    }
    let target = match st.requests.get(id) {
        Some(Request {
            ext: Ext::Persistent(p),
            ..
        }) => match p.state {
            PersistentState::Running(inner) => inner,
            _ => return Ok(()),
        },
        _ => id,
    };
    if target.is_completed_send() {
        // A persistent send whose message went straight into the peer's queue: it runs the
        // request carrying the cancel from now on.
        if let Some(real) = cancel::cancel_completed_send(t, vci, &mut st, target) {
            if let Some(Request {
                ext: Ext::Persistent(p),
                ..
            }) = st.requests.get_mut(id)
            {
                p.state = PersistentState::Running(real);
            }
        }
        return Ok(());
    }
    match st.requests.get(target).map(|r| r.kind) {
        Some(Kind::Send) => cancel::cancel_send(t, vci, &mut st, target),
        _ => engine::cancel_recv(&mut st, target),
    }
    Ok(())
}

// ------------------------------------------------------------------ matched probes

/// A message taken off the unexpected queue by a matched probe (`MPI_Mprobe`): only the
/// matching `MPI_Mrecv` can receive it.
#[derive(Debug)]
pub struct Message {
    pub vci: usize,
    pub message: Unexpected,
}

/// `MPI_Improbe`: take the first matching message, if one has arrived.
pub fn improbe(comm: &Comm, source: SourceSel, tag: TagSel) -> Option<(Status, Message)> {
    let inst = &comm.session.instance;
    let pattern = Pattern::new(comm.context_id(), source, tag);
    let mut st = inst.vcis[comm.vci].lock();
    let (status, message) = engine::take_matching(&inst.transports, comm.vci, &mut st, &pattern)?;
    Some((
        status,
        Message {
            vci: comm.vci,
            message,
        },
    ))
}

/// `MPI_Mprobe`: wait for a matching message and take it.
pub fn mprobe(comm: &Comm, source: SourceSel, tag: TagSel) -> (Status, Message) {
    let mut backoff = comm.session.instance.backoff();
    loop {
        if let Some(found) = improbe(comm, source, tag) {
            return found;
        }
        crate::polled::run();
        backoff.idle();
    }
}

/// `MPI_Imrecv`: receive a matched message into `buf`.
pub fn imrecv(inst: &Instance, message: Message, buf: Buf, owner: usize) -> ReqId {
    let vci = message.vci;
    let mut st = inst.vcis[vci].lock();
    engine::receive_taken(&inst.transports, vci, &mut st, message.message, buf, owner)
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
        Some((dest, tag, buf)) => Some((comm.target(dest, tag)?, buf)),
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
    let sched = move |cx: &mut Cx<'_>| {
        if !started {
            started = true;
            if let Some((source, tag, buf)) = recv.take() {
                rreq = Some(cx.irecv(Pattern::new(context, source, tag), buf));
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
            return Step::Pending;
        }
        keep.take();
        let mut status = rstatus.unwrap_or(null_status);
        if status.error == 0 && serror.is_some() {
            status.error = serror.as_ref().map_or(0, |e| e.class());
        }
        Step::Done(status)
    };
    Ok(progress::start_schedule(
        &comm.session.instance,
        comm.vci,
        owner,
        Box::new(sched),
    ))
}
