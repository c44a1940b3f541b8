//! The point-to-point engine of one VCI: sending, receiving, matching arrivals, and the
//! eager, rendezvous (single copy or pipelined) and synchronous protocols. Every function
//! here runs with the VCI's lock held (it takes `&mut VciState`), and reaches peers only
//! through the transports' `try_send`/`try_recv`.
#![forbid(unsafe_code)]

use super::matching::{Payload, Posted, Unexpected};
use super::protocol::{self, Header, RtsInfo};
use super::{Vci, VciState};
use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::events::{self, EventKind};
use crate::message::{Key, Pattern, SendMode, Status, Target};
use crate::polled;
use crate::request::{Ext, Kind, ReqId, SendCancel};
use crate::stats::{self, Counter};
use crate::sync::Backoff;
use crate::transport::shm::pair::PairsOut;
use crate::transport::ucx::BulkStart;
use crate::transport::{Route, Transports, Watch, WireHeader};

/// A message that found no room in its destination's queue yet.
pub enum Outgoing {
    /// Message data from a user buffer; `req` completes once the data is in a cell (or, for
    /// synchronous sends, when the ack comes).
    Eager {
        route: Route,
        /// The destination's VCI.
        vci: usize,
        header: Header,
        buf: Buf,
        req: ReqId,
        completes_on_push: bool,
    },
    /// A protocol message with a small payload.
    Control {
        route: Route,
        /// The destination's VCI.
        vci: usize,
        header: Header,
        payload: [u8; 24],
        len: usize,
    },
}

/// A pipelined rendezvous send streaming `DATA` cells to its receiver.
pub struct Stream {
    sreq: ReqId,
    route: Route,
    /// The receiver's VCI.
    vci: usize,
    rreq_token: u64,
    offset: u64,
    total: u64,
    context: u32,
}

/// What a rendezvous moving through UCX in one piece (`transport::ucx::bulk`) completes.
pub struct Bulk {
    req: ReqId,
    /// For a send, the bytes it sends (its status); `None` for a receive (its status was set
    /// when it matched).
    sent: Option<u64>,
}

/// The outcome of starting a send.
#[derive(Debug, PartialEq, Eq)]
pub enum SendStart {
    /// The send buffer may be reused already; nothing is pending.
    Done,
    /// Completion must be waited for on this request.
    Pending(ReqId),
}

fn unreachable(dest: u32) -> MpiError {
    MpiError::new(
        ErrorClass::Other,
        format!(
            "rank {dest} of the job is on another node, and this build has no network transport"
        ),
    )
}

/// The error of an operation with job rank `dest`, which the network transport lost.
fn lost(dest: u32, why: &str) -> MpiError {
    MpiError::new(
        ErrorClass::ProcAborted,
        format!("rank {dest} of the job is lost: the network transport reports {why}"),
    )
}

/// The status a request fails with when a peer on another node is lost.
const LOST: Status = Status {
    source: 0,
    tag: 0,
    error: ErrorClass::ProcAborted as i32,
    bytes: 0,
    cancelled: false,
    sizes_differ: false,
};

/// How a message from VCI `vci` reaches VCI `dest_vci` of job rank `dest`: a message to
/// this process on another VCI (another stream) goes through this process's own queue of
/// that VCI, when there is one (a shared-memory transport).
#[inline]
fn route_to(t: &Transports, dest: u32, dest_vci: usize, vci: usize) -> Route {
    match t.route(dest) {
        Route::SelfRank if dest_vci != vci => t.own_queue(),
        route => route,
    }
}

/// `route_to` from a VCI with state `st`: through a pair ring when it has one to that VCI
/// (stream to stream between processes, `transport::shm::pair`).
#[inline]
fn route_from(t: &Transports, st: &VciState, dest: u32, dest_vci: usize, vci: usize) -> Route {
    if !st.pairs_out.is_empty() {
        if let Some(index) = st.pairs_out.index_of(dest, dest_vci as u8) {
            return Route::Pair { index };
        }
    }
    route_to(t, dest, dest_vci, vci)
}

/// Put one message into the queue `route` names: a pair ring of this VCI's, or a transport's.
#[inline]
fn push(
    t: &Transports,
    pairs: &PairsOut,
    route: Route,
    to: usize,
    header: &Header,
    len: usize,
    fill: impl FnOnce(&mut [u8]),
) -> bool {
    match route {
        Route::Pair { index } => pairs.try_push(index, &header.encode(), len, fill),
        route => t.try_send(route, to, header, len, fill),
    }
}

/// Start a send; with `request`, a request is returned even when nothing remains to wait
/// for (the VCI's shared completed one, under a generation of its own: see `sent`). The
/// first branch is the whole of a small standard-mode send: the message goes straight into
/// the peer's queue when nothing is queued ahead of it and the queue has room.
#[inline(always)]
pub fn start_send(
    t: &Transports,
    vci: usize,
    st: &mut VciState,
    target: Target,
    buf: Buf,
    mode: SendMode,
    request: bool,
) -> MpiResult<SendStart> {
    let len = buf.len();
    if mode != SendMode::Synchronous && len <= t.eager_max && st.pending.is_empty() {
        let mut header = Header::eager(&target, t.my_rank, vci, false);
        let to = target.vci as usize;
        let route = route_from(t, st, target.dest, to, vci);
        // A nonblocking send's message carries a token that names it, so that `MPI_Cancel`
        // can ask the receiver to withdraw it (`sent`; a number spent on a full queue is lost).
        let named = request.then(|| st.sent.record(vci as u8, target.dest, target.vci));
        if let Some((_, token)) = named {
            header.token = token;
        }
        if push(t, &st.pairs_out, route, to, &header, len, |cell| {
            buf.pack(0, cell)
        }) {
            stats::sent(vci, target.dest == t.my_rank, len as u64, true);
            return Ok(match named {
                Some((id, _)) => SendStart::Pending(id),
                None => SendStart::Done,
            });
        }
    }
    start_send_queued(t, vci, st, target, buf, mode, request)
}

/// `start_send` past its first branch: synchronous and large messages, messages to this
/// process, and messages that must wait behind others or for room.
#[inline(never)]
fn start_send_queued(
    t: &Transports,
    vci: usize,
    st: &mut VciState,
    target: Target,
    buf: Buf,
    mode: SendMode,
    request: bool,
) -> MpiResult<SendStart> {
    let to = target.vci as usize;
    let route = route_from(t, st, target.dest, to, vci);
    if route == Route::Unreachable {
        if target.dest == t.my_rank {
            return Err(MpiError::new(
                ErrorClass::UnsupportedOperation,
                "a message to another stream of this process needs a shared-memory transport (more than one process on the node)",
            ));
        }
        return Err(unreachable(target.dest));
    }
    if let Some(why) = t.lost(route) {
        return Err(lost(target.dest, &why));
    }
    let sync = mode == SendMode::Synchronous;
    let mut header = Header::eager(&target, t.my_rank, vci, sync);
    let len = buf.len();
    stats::sent(
        vci,
        target.dest == t.my_rank,
        len as u64,
        len <= t.eager_max,
    );
    if len > t.eager_max {
        if events::enabled(EventKind::RendezvousStart) {
            let f = [
                target.context.into(),
                target.dest.into(),
                target.tag.into(),
                len as i64,
            ];
            events::record(vci, EventKind::RendezvousStart, f);
        }
        // Rendezvous: announce the message; the receiver pulls the data when it matches.
        let req = st.requests.alloc_send(buf, false, target.dest, target.vci);
        if let Some(r) = st.requests.get_mut(req) {
            // A rendezvous send (counted in `large_sends` until `complete`).
            r.expected = len as u64;
        }
        st.large_sends += 1;
        header.kind = protocol::RTS;
        header.flags = if mode == SendMode::Pulled {
            protocol::FLAG_PULL
        } else {
            0
        };
        header.token = req.token();
        let info = RtsInfo {
            total: len as u64,
            // 0: not contiguous, so not readable with one copy (the receiver pipelines).
            // (Nor across nodes, where it would not be another process of this node.)
            addr: if buf.is_contiguous() && Transports::is_node_local(route) {
                buf.addr() as u64
            } else {
                0
            },
            pid: t.pid,
        };
        let mut payload = [0u8; 24];
        info.encode(&mut payload);
        send_control(
            t,
            vci,
            st,
            (target.dest, to),
            header,
            &payload[..RtsInfo::BYTES],
        );
        return Ok(SendStart::Pending(req));
    }
    // The request is needed only if something remains to wait for.
    let needs_req = sync || request || !st.pending.is_empty() || route != Route::SelfRank;
    let req = needs_req.then(|| st.requests.alloc_send(buf, false, target.dest, target.vci));
    if let Some(r) = req {
        header.token = r.token();
    }
    if route == Route::SelfRank {
        let mut data = vec![0u8; len];
        buf.pack(0, &mut data);
        incoming(t, vci, st, &header, &data);
        return Ok(match req {
            None => SendStart::Done,
            Some(r) if !sync => {
                complete(st, r, Status::default());
                SendStart::Pending(r)
            }
            Some(r) => SendStart::Pending(r),
        });
    }
    let req = req.expect("a send to another process keeps its request");
    // (A standard send found the queue full or others queued ahead in the first branch.)
    if sync
        && st.pending.is_empty()
        && push(t, &st.pairs_out, route, to, &header, len, |cell| {
            buf.pack(0, cell)
        })
    {
        return Ok(SendStart::Pending(req)); // completes with the ack
    }
    if st.pending.is_empty() {
        // Nothing queued ahead: the peer's ring had no room.
        stats::add(vci, Counter::RingFull, 1);
    }
    st.pending.push_back(Outgoing::Eager {
        route,
        vci: to,
        header,
        buf,
        req,
        completes_on_push: !sync,
    });
    Ok(SendStart::Pending(req))
}

/// Send a protocol message (ack, rendezvous header, ...) to VCI `dest_vci` of job rank
/// `dest`.
pub fn send_control(
    t: &Transports,
    vci: usize,
    st: &mut VciState,
    (dest, dest_vci): (u32, usize),
    header: Header,
    payload: &[u8],
) {
    let route = route_from(t, st, dest, dest_vci, vci);
    match route {
        Route::SelfRank => incoming(t, vci, st, &header, payload),
        // Replies go to ranks that reached us, so they are reachable.
        Route::Unreachable => {}
        Route::Shm { .. } | Route::Pair { .. } | Route::Ucx { .. } | Route::Foreign { .. } => {
            if st.pending.is_empty()
                && push(
                    t,
                    &st.pairs_out,
                    route,
                    dest_vci,
                    &header,
                    payload.len(),
                    |cell| cell.copy_from_slice(payload),
                )
            {
                return;
            }
            if st.pending.is_empty() {
                stats::add(vci, Counter::RingFull, 1);
            }
            let mut copy = [0u8; 24];
            copy[..payload.len()].copy_from_slice(payload);
            st.pending.push_back(Outgoing::Control {
                route,
                vci: dest_vci,
                header,
                payload: copy,
                len: payload.len(),
            });
        }
    }
}

/// Mark a request complete with `status`; a detached request is released.
pub fn complete(st: &mut VciState, id: ReqId, status: Status) {
    if let Some(req) = st.requests.get_mut(id) {
        if req.kind == Kind::Send && req.expected != 0 && !req.complete {
            st.large_sends = st.large_sends.saturating_sub(1);
        }
        req.complete = true;
        req.status = status;
        if req.detached {
            st.requests.release(id);
        }
    }
}

fn key_of(header: &Header) -> Key {
    Key {
        context: header.context,
        source: header.src,
        tag: header.tag,
        stream: header.stream,
    }
}

/// Where replies to the sender of `header` go.
fn reply_to(header: &Header) -> (u32, usize) {
    (header.origin, header.origin_vci as usize)
}

/// Handle one arriving message.
pub fn incoming(t: &Transports, vci: usize, st: &mut VciState, header: &Header, payload: &[u8]) {
    match header.kind {
        protocol::EAGER => {
            stats::received(vci, header.origin == t.my_rank, payload.len() as u64);
            let key = key_of(header);
            let sync = header.flags & protocol::FLAG_SYNC != 0;
            match st.matching.take_posted(&key) {
                Some(posted) => {
                    deliver_eager(st, posted.req, &key, payload);
                    if sync {
                        let ack = Header::control(protocol::ACK, t.my_rank, vci, header.token);
                        send_control(t, vci, st, reply_to(header), ack, &[]);
                    }
                }
                None => {
                    unexpected_event(vci, &key, payload.len() as u64);
                    st.matching.add_unexpected(Unexpected {
                        key,
                        origin: header.origin,
                        origin_vci: header.origin_vci,
                        token: header.token,
                        sync,
                        payload: Payload::Eager(payload.to_vec()),
                    })
                }
            }
        }
        protocol::RTS => {
            let Some(info) = RtsInfo::decode(payload) else {
                return;
            };
            stats::received(vci, header.origin == t.my_rank, info.total);
            let key = key_of(header);
            let message = Unexpected {
                key,
                origin: header.origin,
                origin_vci: header.origin_vci,
                token: header.token,
                sync: false,
                payload: Payload::Rendezvous {
                    total: info.total,
                    addr: info.addr,
                    pid: info.pid,
                    pulled: header.flags & protocol::FLAG_PULL != 0,
                },
            };
            match st.matching.take_posted(&key) {
                Some(posted) => receive_matched(t, vci, st, posted.req, message),
                None => {
                    unexpected_event(vci, &key, info.total);
                    st.matching.add_unexpected(message)
                }
            }
        }
        protocol::CANCEL => withdraw_message(t, vci, st, header, payload),
        protocol::CANCEL_REPLY => cancel_answered(st, vci, header, payload),
        protocol::ACK | protocol::FIN => {
            let id = ReqId::from_token(vci as u8, header.token);
            let bytes = st.requests.get(id).map_or(0, |r| r.buf.len() as u64);
            complete(
                st,
                id,
                Status {
                    bytes,
                    ..Status::default()
                },
            );
        }
        protocol::CTS => {
            let sreq = ReqId::from_token(vci as u8, header.token);
            let (Some(rreq_token), Some(req)) =
                (protocol::decode_u64(payload), st.requests.get(sreq))
            else {
                return;
            };
            let total = req.buf.len() as u64;
            let (origin, origin_vci) = reply_to(header);
            if let (Some(id), Some(ucx)) = (payload.get(8..).and_then(protocol::decode_u64), t.ucx)
            {
                // The receiver posted a UCX receive for the whole message (`receive_matched`).
                let start = ucx.send_bulk(origin, origin_vci, id as u32, req.buf);
                bulk_started(st, start, sreq, Some(total));
                return;
            }
            let route = route_from(t, st, origin, origin_vci, vci);
            if let Route::Shm { .. }
            | Route::Pair { .. }
            | Route::Ucx { .. }
            | Route::Foreign { .. } = route
            {
                st.streams.push(Stream {
                    sreq,
                    route,
                    vci: origin_vci,
                    rreq_token,
                    offset: 0,
                    total,
                    context: header.context,
                });
            }
        }
        protocol::DATA => {
            let id = ReqId::from_token(vci as u8, header.token);
            let Some(offset) = protocol::decode_u64(payload) else {
                return;
            };
            let data = &payload[protocol::DATA_HEADER..];
            let Some(req) = st.requests.get_mut(id) else {
                return;
            };
            let room = (req.buf.len() as u64).saturating_sub(offset);
            let n = (data.len() as u64).min(room) as usize;
            if n > 0 {
                // A truncated receive drops the bytes past its buffer.
                req.buf.unpack(offset as usize, &data[..n]);
            }
            req.received += data.len() as u64;
            if req.received >= req.expected {
                let status = req.status;
                complete(st, id, status);
            }
        }
        _ => {}
    }
}

/// Tell a tool that asked (MPI_T event `weft_unexpected_arrival`) a message went to the
/// unexpected queue.
#[inline]
fn unexpected_event(vci: usize, key: &Key, bytes: u64) {
    if events::enabled(EventKind::UnexpectedArrival) {
        let f = [
            key.context.into(),
            key.source.into(),
            key.tag.into(),
            bytes as i64,
        ];
        events::record(vci, EventKind::UnexpectedArrival, f);
    }
}

/// Status for a message of `bytes` delivered into `buf`: `MPI_ERR_TRUNCATE` when it does not
/// fit, `MPI_ERR_TYPE` when it ends inside a basic element of a non-contiguous receive type
/// (the type signatures cannot match; MPICH reports it as its datatype engine does).
fn delivered(key: &Key, bytes: u64, buf: &Buf) -> Status {
    let room = buf.len() as u64;
    let error = if bytes > room {
        ErrorClass::Truncate as i32
    } else if buf.ends_inside_element(bytes) {
        ErrorClass::Type as i32
    } else {
        0
    };
    Status {
        source: key.source as i32,
        tag: key.tag,
        error,
        bytes: bytes.min(room),
        cancelled: false,
        sizes_differ: false,
    }
}

fn deliver_eager(st: &mut VciState, id: ReqId, key: &Key, data: &[u8]) {
    let Some(req) = st.requests.get_mut(id) else {
        return;
    };
    let n = data.len().min(req.buf.len());
    req.buf.unpack(0, &data[..n]);
    // `complete`, without looking the request up again.
    req.status = delivered(key, data.len() as u64, &req.buf);
    req.complete = true;
    if req.detached {
        st.requests.release(id);
    }
}

/// A receive `id` matched `message` (from the unexpected queue or just arrived).
pub fn receive_matched(
    t: &Transports,
    vci: usize,
    st: &mut VciState,
    id: ReqId,
    message: Unexpected,
) {
    match message.payload {
        Payload::Eager(ref data) => {
            deliver_eager(st, id, &message.key, data);
            if message.sync {
                let ack = Header::control(protocol::ACK, t.my_rank, vci, message.token);
                let to = (message.origin, message.origin_vci as usize);
                send_control(t, vci, st, to, ack, &[]);
            }
        }
        Payload::Rendezvous {
            total,
            addr,
            pid,
            pulled,
        } => {
            let Some(req) = st.requests.get_mut(id) else {
                return;
            };
            let buf = req.buf;
            let n = (total as usize).min(buf.len());
            let status = delivered(&message.key, total, &buf);
            let sreq = ReqId::from_token(vci as u8, message.token);
            if pid == t.pid {
                // The sender is this process: copy from its pending request's buffer.
                if let Some(sender) = st.requests.get(sreq) {
                    sender.buf.copy_to(&buf, n);
                }
                complete(st, id, status);
                complete(
                    st,
                    sreq,
                    Status {
                        bytes: total,
                        ..Status::default()
                    },
                );
                return;
            }
            if addr != 0 && t.single_copy(st.large_sends != 0, pulled) {
                match buf.fill_from_process(pid, addr as usize, n) {
                    Ok(()) => {
                        stats::add(vci, Counter::SingleCopyReceives, 1);
                        complete(st, id, status);
                        let fin = Header::control(protocol::FIN, t.my_rank, vci, message.token);
                        let to = (message.origin, message.origin_vci as usize);
                        send_control(t, vci, st, to, fin, &[]);
                        return;
                    }
                    Err(e) => t.disable_cma(pid, &e),
                }
            }
            // Pipelined: ask the sender to stream the data through cells.
            req.expected = total;
            req.received = 0;
            req.status = status;
            let mut cts = Header::control(protocol::CTS, t.my_rank, vci, message.token);
            cts.context = message.key.context;
            let to = (message.origin, message.origin_vci as usize);
            let mut payload = [0u8; 16];
            payload[..8].copy_from_slice(&id.token().to_le_bytes());
            let mut len = 8;
            if let (Route::Ucx { .. }, Some(ucx)) = (t.route(message.origin), t.ucx) {
                // Across nodes the data moves as one UCX message (UCP's rendezvous), into a
                // receive posted now; the CTS carries where the sender sends it.
                let (bulk_id, start) = ucx.recv_bulk(vci, message.origin, total as usize, buf);
                if !bulk_started(st, start, id, None) {
                    return;
                }
                payload[8..].copy_from_slice(&u64::from(bulk_id).to_le_bytes());
                len = 16;
            }
            send_control(t, vci, st, to, cts, &payload[..len]);
        }
    }
}

/// Post a receive, or complete it at once from the unexpected queue; `owner` is stored in
/// the request (see `Request::owner`).
#[inline]
pub fn start_recv(
    t: &Transports,
    vci: usize,
    st: &mut VciState,
    pattern: Pattern,
    buf: Buf,
    owner: usize,
) -> ReqId {
    let id = st.requests.alloc_recv(buf, owner);
    match st.matching.take_unexpected(&pattern) {
        Some(message) => receive_matched(t, vci, st, id, message),
        // After a peer was lost nothing says this receive's sender is alive (see
        // `fail_network_waits`): it fails rather than wait, perhaps for ever.
        None if t.network_failures() != 0 => complete(st, id, LOST),
        None => st.matching.post(Posted { pattern, req: id }),
    }
    id
}

/// Receive a message a matched probe took off the unexpected queue (`MPI_Imrecv`).
pub fn receive_taken(
    t: &Transports,
    vci: usize,
    st: &mut VciState,
    message: Unexpected,
    buf: Buf,
    owner: usize,
) -> ReqId {
    let id = st.requests.alloc_recv(buf, owner);
    receive_matched(t, vci, st, id, message);
    id
}

/// The status a probe reports for `message`.
fn probe_status(message: &Unexpected) -> Status {
    Status {
        source: message.key.source as i32,
        tag: message.key.tag,
        error: 0,
        bytes: message.bytes(),
        cancelled: false,
        sizes_differ: false,
    }
}

/// After a progress pass, the status of the first message matching `pattern` that arrived
/// and no receive took (`MPI_Iprobe`).
pub fn probe(t: &Transports, vci: usize, st: &mut VciState, pattern: &Pattern) -> Option<Status> {
    progress(t, vci, st);
    st.matching.peek_unexpected(pattern).map(probe_status)
}

/// After a progress pass, take the first message matching `pattern` that arrived and no
/// receive took (`MPI_Improbe`).
pub fn take_matching(
    t: &Transports,
    vci: usize,
    st: &mut VciState,
    pattern: &Pattern,
) -> Option<(Status, Unexpected)> {
    progress(t, vci, st);
    let message = st.matching.take_unexpected(pattern)?;
    Some((probe_status(&message), message))
}

/// After a progress pass, remove the messages of point-to-point context `context` that
/// arrived and no receive took (`MPI_Comm_free`: nobody can receive them any more, and a
/// later communicator given the same context id must not); their statuses, in arrival
/// order.
pub fn discard_unexpected(
    t: &Transports,
    vci: usize,
    st: &mut VciState,
    context: u32,
) -> Vec<Status> {
    progress(t, vci, st);
    st.matching
        .drain_unexpected(context)
        .iter()
        .map(probe_status)
        .collect()
}

/// Cancel receive `id` if it is still posted: it completes with the cancelled flag.
pub fn cancel_recv(st: &mut VciState, id: ReqId) {
    if st.matching.cancel_posted(id) {
        complete(st, id, Status::CANCELLED);
    }
}

/// A `CANCEL` arrived (`vci::cancel`): withdraw the message it names if no receive took
/// it, and answer.
pub fn withdraw_message(
    t: &Transports,
    vci: usize,
    st: &mut VciState,
    header: &Header,
    payload: &[u8],
) {
    let Some(asker) = protocol::decode_u64(payload) else {
        return;
    };
    let gone = st
        .matching
        .withdraw_unexpected(header.origin, header.origin_vci, header.token);
    let mut reply = Header::control(protocol::CANCEL_REPLY, t.my_rank, vci, asker);
    if gone {
        reply.flags = protocol::FLAG_CANCELLED;
    }
    let to = (header.origin, header.origin_vci as usize);
    send_control(t, vci, st, to, reply, &header.token.to_le_bytes());
}

/// A `CANCEL_REPLY` arrived for one of this VCI's send requests. A withdrawn message's
/// sending request completes too when it is another (a buffered send's internal one, which
/// would wait for ever for a receiver that no longer has its rendezvous header).
pub fn cancel_answered(st: &mut VciState, vci: usize, header: &Header, payload: &[u8]) {
    let id = ReqId::from_token(vci as u8, header.token);
    let yes = header.flags & protocol::FLAG_CANCELLED != 0;
    if yes {
        if let Some(message) = protocol::decode_u64(payload) {
            let sender = ReqId::from_token(vci as u8, message);
            if sender != id && st.requests.get(sender).is_some_and(|r| !r.complete) {
                complete(st, sender, Status::CANCELLED);
            }
        }
    }
    let Some(req) = st.requests.get_mut(id) else {
        return;
    };
    let Ext::Sent { cancel, .. } = &mut req.ext else {
        return;
    };
    let asked = std::mem::replace(cancel, SendCancel::Settled);
    if yes {
        complete(st, id, Status::CANCELLED);
    } else if asked == SendCancel::AskedComplete {
        complete(st, id, Status::default());
    }
}

/// The fast path of a blocking receive: when nothing else is pending on the VCI (no posted
/// receive that could match first, no unexpected message, nothing to send, no polled work)
/// and this thread is the only one in the library, wait for the next arrival and, if it is
/// an eager message for `pattern`, copy it straight from the transport into `buf`: no
/// request, no queue. Anything else that arrives goes through `incoming` as usual and the
/// caller takes the general path (`None`), which then finds it where `incoming` put it.
pub fn recv_direct(
    t: &Transports,
    vci: &Vci,
    spin: u32,
    pattern: &Pattern,
    buf: Buf,
) -> Option<Status> {
    if polled::any() || vci.is_threaded() {
        return None;
    }
    let mut guard = vci.lock();
    let st = &mut *guard;
    if st.matching.posted_len() != 0
        || st.matching.unexpected_len() != 0
        || !st.is_quiet()
        || !st.pairs_in.is_empty()
    {
        return None;
    }
    t.watch(vci.index, &st.rx)?;
    let mut backoff = Backoff::new(spin);
    loop {
        let mut delivered_here = None;
        let got = st.with_rx(|rx, st| {
            t.try_recv::<Header>(vci.index, rx, |header, payload| {
                let key = key_of(header);
                if header.kind == protocol::EAGER
                    && header.flags & protocol::FLAG_SYNC == 0
                    && pattern.matches(&key)
                {
                    stats::received(vci.index, header.origin == t.my_rank, payload.len() as u64);
                    let n = payload.len().min(buf.len());
                    buf.unpack(0, &payload[..n]);
                    delivered_here = Some(delivered(&key, payload.len() as u64, &buf));
                } else {
                    incoming(t, vci.index, st, header, payload);
                }
            })
        });
        if got {
            return delivered_here;
        }
        backoff.idle();
    }
}

/// When the only thing this VCI can be waiting for is an arrival (nothing queued to send, no
/// stream, no schedule), a watch of its next arrival: a waiter can then poll it with single
/// loads between full progress passes.
pub fn arrival_watch<'t>(t: &'t Transports, vci: usize, st: &VciState) -> Option<Watch<'t>> {
    if !st.is_quiet() || !st.pairs_in.is_empty() {
        return None;
    }
    t.watch(vci, &st.rx)
}

/// One progress pass: drain arrivals, then push queued messages and stream data. Returns
/// whether anything happened.
pub fn progress(t: &Transports, vci: usize, st: &mut VciState) -> bool {
    let mut worked = st.with_rx(|rx, st| {
        let mut got = false;
        // Bounded so that sending (below) gets its turn under a flood of arrivals.
        for _ in 0..64 {
            if !t.try_recv::<Header>(vci, rx, |header, payload| {
                incoming(t, vci, st, header, payload)
            }) {
                break;
            }
            got = true;
        }
        got
    });
    if !st.pairs_in.is_empty() {
        // Taken out while arrivals are handed on with the whole state (as `with_rx`).
        let mut pairs = std::mem::take(&mut st.pairs_in);
        // The ring says who sent (a process of another job numbers itself differently).
        worked |= pairs.drain(64, |from, header, payload| {
            let mut header = Header::decode(header);
            header.origin = from;
            incoming(t, vci, st, &header, payload)
        });
        st.pairs_in = pairs;
    }
    worked |= flush_pending(t, st);
    worked |= advance_streams(t, vci, st);
    if !st.bulk.is_empty() {
        worked |= reap_bulk(t, st);
    }
    let failures = t.network_failures();
    if failures != st.network_failures {
        st.network_failures = failures;
        fail_network_waits(t, st);
        worked = true;
    }
    worked |= super::schedule::run(t, vci, st);
    stats::add(vci, Counter::Polls, 1);
    if !worked {
        stats::add(vci, Counter::EmptyPolls, 1);
    }
    worked
}

fn flush_pending(t: &Transports, st: &mut VciState) -> bool {
    let mut worked = false;
    while let Some(out) = st.pending.front() {
        let pushed = match out {
            Outgoing::Eager {
                route,
                vci: to,
                header,
                buf,
                ..
            } => push(t, &st.pairs_out, *route, *to, header, buf.len(), |cell| {
                buf.pack(0, cell)
            }),
            Outgoing::Control {
                route,
                vci: to,
                header,
                payload,
                len,
            } => push(t, &st.pairs_out, *route, *to, header, *len, |cell| {
                cell.copy_from_slice(&payload[..*len])
            }),
        };
        if !pushed {
            let route = match out {
                Outgoing::Eager { route, .. } | Outgoing::Control { route, .. } => *route,
            };
            if t.lost(route).is_none() {
                break;
            }
            // Never deliverable: dropped (a request with it fails).
            if let Some(Outgoing::Eager { req, .. }) = st.pending.pop_front() {
                complete(st, req, LOST);
            }
            worked = true;
            continue;
        }
        worked = true;
        if let Some(Outgoing::Eager {
            req,
            completes_on_push: true,
            ..
        }) = st.pending.pop_front()
        {
            complete(st, req, Status::default());
        }
    }
    worked
}

fn advance_streams(t: &Transports, vci: usize, st: &mut VciState) -> bool {
    let mut worked = false;
    let chunk = t.max_payload - protocol::DATA_HEADER;
    let mut i = 0;
    while i < st.streams.len() {
        let s = &mut st.streams[i];
        let Some(req) = st.requests.get(s.sreq) else {
            st.streams.swap_remove(i);
            continue;
        };
        let buf = req.buf;
        let mut header = Header::control(protocol::DATA, t.my_rank, vci, s.rreq_token);
        header.context = s.context;
        let mut lost = false;
        while s.offset < s.total {
            let n = chunk.min((s.total - s.offset) as usize);
            let offset = s.offset;
            let pushed = push(
                t,
                &st.pairs_out,
                s.route,
                s.vci,
                &header,
                protocol::DATA_HEADER + n,
                |cell| {
                    cell[..protocol::DATA_HEADER].copy_from_slice(&offset.to_le_bytes());
                    buf.pack(offset as usize, &mut cell[protocol::DATA_HEADER..]);
                },
            );
            if !pushed {
                // A lost peer never takes the rest: the send fails.
                lost = t.lost(s.route).is_some();
                break;
            }
            s.offset += n as u64;
            worked = true;
        }
        if lost {
            let sreq = s.sreq;
            st.streams.swap_remove(i);
            complete(st, sreq, LOST);
            worked = true;
        } else if s.offset >= s.total {
            let (sreq, total) = (s.sreq, s.total);
            st.streams.swap_remove(i);
            complete(
                st,
                sreq,
                Status {
                    bytes: total,
                    ..Status::default()
                },
            );
        } else {
            i += 1;
        }
    }
    worked
}

/// Record how starting the bulk transfer of request `req` went (`sent`: see `Bulk`);
/// false when it failed (the request then failed).
fn bulk_started(st: &mut VciState, start: BulkStart, req: ReqId, sent: Option<u64>) -> bool {
    match start {
        BulkStart::Done => bulk_done(st, Bulk { req, sent }, true),
        BulkStart::Running(op) => st.bulk.push((op, Bulk { req, sent })),
        BulkStart::Failed => {
            complete(st, req, LOST);
            return false;
        }
    }
    true
}

/// Complete the request of a bulk transfer that finished (`ok`: it succeeded). A request
/// failed meanwhile (a peer lost: `fail_network_waits`) stays as it is.
fn bulk_done(st: &mut VciState, bulk: Bulk, ok: bool) {
    let Some(req) = st.requests.get(bulk.req).filter(|r| !r.complete) else {
        return;
    };
    let status = match (ok, bulk.sent) {
        (false, _) => LOST,
        (true, Some(bytes)) => Status {
            bytes,
            ..Status::default()
        },
        (true, None) => req.status,
    };
    complete(st, bulk.req, status);
}

/// Finish the bulk transfers UCX completed; whether any did.
fn reap_bulk(t: &Transports, st: &mut VciState) -> bool {
    let Some(ucx) = t.ucx else {
        return false;
    };
    let mut ops = std::mem::take(&mut st.bulk);
    let before = ops.len();
    ucx.reap_bulk(&mut ops, |bulk, ok| bulk_done(st, bulk, ok));
    let worked = ops.len() != before;
    st.bulk = ops;
    worked
}

/// The network transport lost a peer: fail (with `MPI_ERR_PROC_ABORTED`) what can no longer
/// complete. Messages queued or streaming to lost peers are dropped with their requests;
/// every other point-to-point operation still waiting fails too, except those still sending
/// to live peers (a request does not record its peer, and an any-source receive may wait
/// on the lost one: MPI gives no guarantee past an error, and the default error handler
/// ends the job), and those whose data UCX is moving (`bulk`: UCX ends them). Later sends
/// to a lost peer fail when they start, and so do later receives that no message already
/// here satisfies (`start_recv`).
fn fail_network_waits(t: &Transports, st: &mut VciState) {
    let mut failed = Vec::new();
    let mut kept = std::collections::VecDeque::with_capacity(st.pending.len());
    for out in std::mem::take(&mut st.pending) {
        match out {
            Outgoing::Eager { route, req, .. } if t.lost(route).is_some() => failed.push(req),
            Outgoing::Control { route, .. } if t.lost(route).is_some() => {}
            out => kept.push_back(out),
        }
    }
    st.pending = kept;
    st.streams.retain(|s| {
        let live = t.lost(s.route).is_none();
        if !live {
            failed.push(s.sreq);
        }
        live
    });
    let sending: Vec<ReqId> = st
        .pending
        .iter()
        .filter_map(|out| match out {
            Outgoing::Eager { req, .. } => Some(*req),
            Outgoing::Control { .. } => None,
        })
        .chain(st.streams.iter().map(|s| s.sreq))
        // A bulk transfer ends through UCX itself (failed by UCX if its peer is lost): its
        // buffer is UCX's until then.
        .chain(st.bulk.iter().map(|(_, b)| b.req))
        .collect();
    for id in st.requests.incomplete_messages() {
        if !sending.contains(&id) {
            st.matching.cancel_posted(id);
            failed.push(id);
        }
    }
    for id in failed {
        complete(st, id, LOST);
    }
}
