//! The point-to-point engine of one VCI: sending, receiving, matching arrivals, and the
//! eager, rendezvous (single copy or pipelined) and synchronous protocols. Every function
//! here runs with the VCI's lock held (it takes `&mut VciState`).
#![forbid(unsafe_code)]

use super::matching::{Key, Pattern, Payload, Posted, Unexpected};
use super::protocol::{self, RtsInfo};
use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::progress::vci::VciState;
use crate::request::{Kind, ReqId, Request, Status};
use crate::runtime::Instance;
use crate::transport::shm::{Envelope, Ring};
use crate::transport::{Route, Transports};

/// A message that found no room in its destination ring yet.
pub enum Outgoing {
    /// Message data from a user buffer; `req` completes once the data is in a cell (or, for
    /// synchronous sends, when the ack comes).
    Eager {
        dest: u32,
        env: Envelope,
        buf: Buf,
        req: Option<ReqId>,
        completes_on_push: bool,
    },
    /// A protocol message with a small payload.
    Control {
        dest: u32,
        env: Envelope,
        payload: [u8; 24],
        len: usize,
    },
}

/// A pipelined rendezvous send streaming `DATA` cells to its receiver.
pub struct Stream {
    sreq: ReqId,
    dest: u32,
    rreq_token: u64,
    offset: u64,
    total: u64,
    context: u32,
}

/// The outcome of starting a send.
#[derive(Debug, PartialEq, Eq)]
pub enum SendStart {
    /// The send buffer may be reused already; nothing is pending.
    Done,
    /// Completion must be waited for on this request.
    Pending(ReqId),
}

/// How a send behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMode {
    Standard,
    /// Completes only after the receive is matched (`MPI_Ssend`).
    Synchronous,
}

/// Who a message goes to.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    pub context: u32,
    /// The sender's rank in the communicator (the receiver sees it as the source).
    pub my_rank: u32,
    /// The destination's rank in the job.
    pub dest: u32,
    pub tag: i32,
}

fn unreachable(dest: u32) -> MpiError {
    MpiError::new(
        ErrorClass::Other,
        format!(
            "rank {dest} of the job is on another node, and this build has no network transport"
        ),
    )
}

/// Start a send. Eager messages that fit in a ring complete at once (standard mode).
pub fn start_send(
    t: &Transports,
    vci: usize,
    st: &mut VciState,
    target: Target,
    buf: Buf,
    mode: SendMode,
    force_request: bool,
) -> MpiResult<SendStart> {
    let route = t.route(target.dest);
    if route == Route::Unreachable {
        return Err(unreachable(target.dest));
    }
    let sync = mode == SendMode::Synchronous;
    let mut env = Envelope {
        kind: protocol::EAGER,
        flags: if sync { protocol::FLAG_SYNC } else { 0 },
        src: target.my_rank,
        context: target.context,
        tag: target.tag,
        origin: t.my_rank,
        token: 0,
    };
    let len = buf.len();
    if len <= t.eager_max {
        // A standard send that goes straight into the peer's ring has nothing left to wait
        // for: it needs no request of its own (a nonblocking one gets the shared completed
        // one).
        if !sync && st.pending.is_empty() {
            if let Route::Shm { local } = route {
                if push_eager(t, vci, local, &env, &buf) {
                    return Ok(if force_request {
                        SendStart::Pending(st.requests.completed_send())
                    } else {
                        SendStart::Done
                    });
                }
            }
        }
        // The request is needed only if something remains to wait for.
        let needs_req = sync || force_request || !st.pending.is_empty();
        let req = needs_req.then(|| st.requests.alloc(Request::new(Kind::Send, buf)));
        if let Some(r) = req {
            env.token = r.token();
        }
        match route {
            Route::SelfRank => {
                let mut data = vec![0u8; len];
                buf.pack(0, &mut data);
                incoming(t, vci, st, &env, &data);
                Ok(complete_send_if_eager_done(st, req, sync))
            }
            Route::Shm { local } => {
                // (A standard send found the ring full above.)
                if sync && st.pending.is_empty() && push_eager(t, vci, local, &env, &buf) {
                    return Ok(complete_send_if_eager_done(st, req, sync));
                }
                let req = match req {
                    Some(r) => r,
                    None => {
                        let r = st.requests.alloc(Request::new(Kind::Send, buf));
                        env.token = r.token();
                        r
                    }
                };
                st.pending.push_back(Outgoing::Eager {
                    dest: local,
                    env,
                    buf,
                    req: Some(req),
                    completes_on_push: !sync,
                });
                Ok(SendStart::Pending(req))
            }
            Route::Unreachable => Err(unreachable(target.dest)),
        }
    } else {
        // Rendezvous: announce the message; the receiver pulls the data when it matches.
        let req = st.requests.alloc(Request::new(Kind::Send, buf));
        env.kind = protocol::RTS;
        env.flags = 0;
        env.token = req.token();
        let info = RtsInfo {
            total: len as u64,
            // 0: not contiguous, so not readable with one copy (the receiver pipelines).
            addr: if buf.is_contiguous() {
                buf.addr() as u64
            } else {
                0
            },
            pid: t.pid,
        };
        let mut payload = [0u8; 24];
        info.encode(&mut payload);
        send_control(t, vci, st, target.dest, env, &payload[..RtsInfo::BYTES]);
        Ok(SendStart::Pending(req))
    }
}

fn complete_send_if_eager_done(st: &mut VciState, req: Option<ReqId>, sync: bool) -> SendStart {
    match req {
        None => SendStart::Done,
        Some(r) if !sync => {
            complete(st, r, Status::default());
            SendStart::Pending(r)
        }
        Some(r) => SendStart::Pending(r),
    }
}

/// The fast path of a standard-mode send: put the whole message into the destination's ring
/// now if it is small enough, the destination shares this node, nothing is queued ahead of it
/// and the ring has room. Returns false (having done nothing) otherwise.
pub fn try_send_now(t: &Transports, vci: usize, st: &VciState, target: &Target, buf: &Buf) -> bool {
    if buf.len() > t.eager_max || !st.pending.is_empty() {
        return false;
    }
    let Route::Shm { local } = t.route(target.dest) else {
        return false;
    };
    let env = Envelope {
        kind: protocol::EAGER,
        flags: 0,
        src: target.my_rank,
        context: target.context,
        tag: target.tag,
        origin: t.my_rank,
        token: 0,
    };
    push_eager(t, vci, local, &env, buf)
}

fn push_eager(t: &Transports, vci: usize, local: u32, env: &Envelope, buf: &Buf) -> bool {
    let ring = t
        .ring(local, vci)
        .expect("a shm route implies a shm transport");
    ring.try_push(env, buf.len(), |cell| buf.pack(0, cell))
}

/// Send a protocol message (ack, rendezvous header, ...) to job rank `dest`.
pub fn send_control(
    t: &Transports,
    vci: usize,
    st: &mut VciState,
    dest: u32,
    env: Envelope,
    payload: &[u8],
) {
    match t.route(dest) {
        Route::SelfRank => incoming(t, vci, st, &env, payload),
        Route::Shm { local } => {
            let ring = t
                .ring(local, vci)
                .expect("a shm route implies a shm transport");
            if st.pending.is_empty()
                && ring.try_push(&env, payload.len(), |cell| cell.copy_from_slice(payload))
            {
                return;
            }
            let mut copy = [0u8; 24];
            copy[..payload.len()].copy_from_slice(payload);
            st.pending.push_back(Outgoing::Control {
                dest: local,
                env,
                payload: copy,
                len: payload.len(),
            });
        }
        // Replies go to ranks that reached us, so they are reachable.
        Route::Unreachable => {}
    }
}

fn control_env(t: &Transports, kind: u16, token: u64) -> Envelope {
    Envelope {
        kind,
        flags: 0,
        src: 0,
        context: 0,
        tag: 0,
        origin: t.my_rank,
        token,
    }
}

/// Mark a request complete with `status`; a detached request is released.
pub fn complete(st: &mut VciState, id: ReqId, status: Status) {
    if let Some(req) = st.requests.get_mut(id) {
        req.complete = true;
        req.status = status;
        if req.detached {
            st.requests.release(id);
        }
    }
}

/// Handle one arriving message.
pub fn incoming(t: &Transports, vci: usize, st: &mut VciState, env: &Envelope, payload: &[u8]) {
    match env.kind {
        protocol::EAGER => {
            let key = Key {
                context: env.context,
                source: env.src,
                tag: env.tag,
            };
            let sync = env.flags & protocol::FLAG_SYNC != 0;
            match st.matching.take_posted(&key) {
                Some(posted) => {
                    deliver_eager(st, posted.req, &key, payload);
                    if sync {
                        send_control(
                            t,
                            vci,
                            st,
                            env.origin,
                            control_env(t, protocol::ACK, env.token),
                            &[],
                        );
                    }
                }
                None => st.matching.add_unexpected(Unexpected {
                    key,
                    origin: env.origin,
                    token: env.token,
                    sync,
                    payload: Payload::Eager(payload.to_vec()),
                }),
            }
        }
        protocol::RTS => {
            let Some(info) = RtsInfo::decode(payload) else {
                return;
            };
            let key = Key {
                context: env.context,
                source: env.src,
                tag: env.tag,
            };
            let message = Unexpected {
                key,
                origin: env.origin,
                token: env.token,
                sync: false,
                payload: Payload::Rendezvous {
                    total: info.total,
                    addr: info.addr,
                    pid: info.pid,
                },
            };
            match st.matching.take_posted(&key) {
                Some(posted) => receive_matched(t, vci, st, posted.req, message),
                None => st.matching.add_unexpected(message),
            }
        }
        protocol::ACK | protocol::FIN => {
            let id = ReqId::from_token(vci as u8, env.token);
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
            let sreq = ReqId::from_token(vci as u8, env.token);
            let (Some(rreq_token), Some(req)) =
                (protocol::decode_u64(payload), st.requests.get(sreq))
            else {
                return;
            };
            let total = req.buf.len() as u64;
            if let Route::Shm { local } = t.route(env.origin) {
                st.streams.push(Stream {
                    sreq,
                    dest: local,
                    rreq_token,
                    offset: 0,
                    total,
                    context: env.context,
                });
            }
        }
        protocol::DATA => {
            let id = ReqId::from_token(vci as u8, env.token);
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

/// Status for a message of `bytes` delivered into a buffer of `room` bytes.
fn delivered(key: &Key, bytes: u64, room: usize) -> Status {
    let truncated = bytes > room as u64;
    Status {
        source: key.source as i32,
        tag: key.tag,
        error: if truncated {
            ErrorClass::Truncate as i32
        } else {
            0
        },
        bytes: bytes.min(room as u64),
        cancelled: false,
    }
}

fn deliver_eager(st: &mut VciState, id: ReqId, key: &Key, data: &[u8]) {
    let Some(req) = st.requests.get_mut(id) else {
        return;
    };
    let n = data.len().min(req.buf.len());
    req.buf.unpack(0, &data[..n]);
    // `complete`, without looking the request up again.
    req.status = delivered(key, data.len() as u64, req.buf.len());
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
                send_control(
                    t,
                    vci,
                    st,
                    message.origin,
                    control_env(t, protocol::ACK, message.token),
                    &[],
                );
            }
        }
        Payload::Rendezvous { total, addr, pid } => {
            let Some(req) = st.requests.get_mut(id) else {
                return;
            };
            let buf = req.buf;
            let n = (total as usize).min(buf.len());
            let status = delivered(&message.key, total, buf.len());
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
            if t.cma_allowed() && addr != 0 {
                match buf.fill_from_process(pid, addr as usize, n) {
                    Ok(()) => {
                        complete(st, id, status);
                        send_control(
                            t,
                            vci,
                            st,
                            message.origin,
                            control_env(t, protocol::FIN, message.token),
                            &[],
                        );
                        return;
                    }
                    Err(e) => {
                        eprintln!("weft: single-copy read from pid {pid} refused ({e}); using the pipelined path");
                        t.disable_cma();
                    }
                }
            }
            // Pipelined: ask the sender to stream the data through cells.
            req.expected = total;
            req.received = 0;
            req.status = status;
            let mut env = control_env(t, protocol::CTS, message.token);
            env.context = message.key.context;
            send_control(t, vci, st, message.origin, env, &id.token().to_le_bytes());
        }
    }
}

/// Post a receive, or complete it at once from the unexpected queue.
pub fn start_recv(
    t: &Transports,
    vci: usize,
    st: &mut VciState,
    pattern: Pattern,
    buf: Buf,
) -> ReqId {
    start_recv_owned(t, vci, st, pattern, buf, 0)
}

/// `start_recv` with the request's `owner` (see `Request::owner`).
#[inline]
pub fn start_recv_owned(
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
        None => st.matching.post(Posted { pattern, req: id }),
    }
    id
}

/// The fast path of a blocking receive: when nothing else is pending on the VCI (no posted
/// receive that could match first, no unexpected message, nothing to send, no polled work)
/// and this thread is the only one in the library, wait for the next arrival and, if it is
/// an eager message for `pattern`, copy it straight from the ring into `buf`: no request,
/// no queue. Anything else that arrives goes through `incoming` as usual and the caller
/// takes the general path (`None`), which then finds it where `incoming` put it.
pub fn recv_direct(inst: &Instance, vci: usize, pattern: &Pattern, buf: Buf) -> Option<Status> {
    if crate::progress::polled::any() || inst.vcis[vci].is_threaded() {
        return None;
    }
    let t = &inst.transports;
    let mut guard = inst.vcis[vci].lock();
    let st = &mut *guard;
    if st.matching.posted_len() != 0 || st.matching.unexpected_len() != 0 {
        return None;
    }
    let (ring, _) = arrival_watch(t, vci, st)?;
    let mut backoff = crate::progress::Backoff::new(inst);
    loop {
        let mut head = st.shm_head;
        let mut delivered_here = None;
        let got = ring.try_pop(&mut head, |env, payload| {
            let key = Key {
                context: env.context,
                source: env.src,
                tag: env.tag,
            };
            if env.kind == protocol::EAGER
                && env.flags & protocol::FLAG_SYNC == 0
                && pattern.matches(&key)
            {
                let n = payload.len().min(buf.len());
                buf.unpack(0, &payload[..n]);
                delivered_here = Some(delivered(&key, payload.len() as u64, buf.len()));
            } else {
                incoming(t, vci, st, env, payload);
            }
        });
        st.shm_head = head;
        if got {
            return delivered_here;
        }
        backoff.idle();
    }
}

/// When the only thing this VCI can be waiting for is an arrival in its ring (nothing queued
/// to send, no stream, no schedule), the ring and the position to watch: a waiter can then
/// poll it with single loads between full progress passes.
pub fn arrival_watch(t: &Transports, vci: usize, st: &VciState) -> Option<(Ring, u64)> {
    if !st.pending.is_empty() || !st.streams.is_empty() || !st.schedules.is_empty() {
        return None;
    }
    t.ring(t.my_local, vci).map(|r| (*r, st.shm_head))
}

/// One progress pass: drain arrivals, then push queued messages and stream data. Returns
/// whether anything happened.
pub fn progress(t: &Transports, vci: usize, st: &mut VciState) -> bool {
    let mut worked = false;
    if let Some(ring) = t.ring(t.my_local, vci) {
        let ring = *ring;
        // Bounded so that sending (below) gets its turn under a flood of arrivals.
        for _ in 0..64 {
            let mut head = st.shm_head;
            let got = ring.try_pop(&mut head, |env, payload| incoming(t, vci, st, env, payload));
            st.shm_head = head;
            if !got {
                break;
            }
            worked = true;
        }
    }
    worked |= flush_pending(t, vci, st);
    worked |= advance_streams(t, vci, st);
    worked |= crate::progress::schedule::run(t, vci, st);
    worked
}

fn flush_pending(t: &Transports, vci: usize, st: &mut VciState) -> bool {
    let mut worked = false;
    while let Some(out) = st.pending.front() {
        let pushed = match out {
            Outgoing::Eager { dest, env, buf, .. } => push_eager(t, vci, *dest, env, buf),
            Outgoing::Control {
                dest,
                env,
                payload,
                len,
            } => {
                let ring = t.ring(*dest, vci).expect("queued only for shm routes");
                ring.try_push(env, *len, |cell| cell.copy_from_slice(&payload[..*len]))
            }
        };
        if !pushed {
            break;
        }
        worked = true;
        if let Some(Outgoing::Eager {
            req: Some(r),
            completes_on_push: true,
            ..
        }) = st.pending.pop_front()
        {
            complete(st, r, Status::default());
        }
    }
    worked
}

fn advance_streams(t: &Transports, vci: usize, st: &mut VciState) -> bool {
    let mut worked = false;
    let mut i = 0;
    while i < st.streams.len() {
        let s = &mut st.streams[i];
        let Some(req) = st.requests.get(s.sreq) else {
            st.streams.swap_remove(i);
            continue;
        };
        let buf = req.buf;
        let ring = t.ring(s.dest, vci).expect("streams go to shm peers");
        let chunk = ring.payload_capacity() - protocol::DATA_HEADER;
        while s.offset < s.total {
            let n = chunk.min((s.total - s.offset) as usize);
            let env = Envelope {
                kind: protocol::DATA,
                flags: 0,
                src: 0,
                context: s.context,
                tag: 0,
                origin: t.my_rank,
                token: s.rreq_token,
            };
            let offset = s.offset;
            let pushed = ring.try_push(&env, protocol::DATA_HEADER + n, |cell| {
                cell[..protocol::DATA_HEADER].copy_from_slice(&offset.to_le_bytes());
                buf.pack(offset as usize, &mut cell[protocol::DATA_HEADER..]);
            });
            if !pushed {
                break;
            }
            s.offset += n as u64;
            worked = true;
        }
        if s.offset >= s.total {
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
