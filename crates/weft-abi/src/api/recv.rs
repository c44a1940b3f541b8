//! Receives, probes, matched probes and send-receive: the receive families (`MPI_Recv`,
//! `MPI_Mrecv`, `MPI_Sendrecv`, `MPI_Sendrecv_replace`: blocking, `I` and `_init` forms
//! and `_c` twins, one implementation each) and the fast paths of `MPI_Recv`/`MPI_Irecv`.

use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex};

use weft_core::datatype::Buf;
use weft_core::error::MpiResult;
use weft_core::message::{Pattern, SendMode, Status};
use weft_core::mpi_err;
use weft_core::object::Comm;
use weft_core::progress;
use weft_core::pt2pt;
use weft_core::request::PersistentOp;
use weft_core::trace;

use crate::api::family::{self, Mode};
use crate::api::pt2pt::{
    dest_rank, message_buf, plain_recv_args, plain_tag, prefix, recv_tag, send_tag, source_sel,
    thread_peer, thread_persistent, thread_unsupported,
};
use crate::args::non_null;
use crate::args::Int;
use crate::constants::*;
use crate::ctypes::*;
use crate::datatypes::contiguous_buf;
use crate::handles::{Kind, Table};
use crate::requests::{completed_request, request_handle};
use crate::thread_ranks;
use crate::{objects, status};
use weft_core::message::{SourceSel, TagSel};
use weft_core::threadcomm::p2p::Matched;
use weft_core::threadcomm::ThreadComm;

/// Finish a receive's status: store it, and turn an error status into the call's error.
pub(crate) unsafe fn finish_recv(s: Status, out: *mut MPI_Status, func: &str) -> MpiResult<()> {
    // SAFETY: null (MPI_STATUS_IGNORE) or a writable status per the caller.
    unsafe { status::store(out, &s, false) };
    s.into_result().map(|_| ()).map_err(|e| prefix(func, e))
}

/// The receive family (`MPI_Recv`, `MPI_Irecv`, `MPI_Recv_init`, `_c` twins); `out` is the
/// blocking form's status.
///
/// # Safety
/// `out` is null (`MPI_STATUS_IGNORE`) or a writable status.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn recv(
    buf: *mut c_void,
    count: impl Int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    out: *mut MPI_Status,
    func: &str,
    mode: Mode,
) -> MpiResult<MPI_Request> {
    let count = count.get();
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let b = unsafe { message_buf(buf, count, datatype, func) }?;
        // SAFETY: forwarded caller contract (`out` null or writable).
        unsafe { thread_recv(c, tc, me, b, (source, tag), out, func, mode) }
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = objects::comm_ref(comm, func, "comm")?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let b = unsafe { message_buf(buf, count, datatype, func) }?;
    if trace::on() {
        trace::note(b.len() as i64, source.into());
    }
    let tag = recv_tag(tag, func)?;
    let source = source_sel(&c, source, func)?;
    let null = Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG);
    Ok(match (mode, source) {
        (Mode::Blocking, src) => {
            let s = src.map_or(null, |src| pt2pt::recv(&c, src, tag, b));
            // SAFETY: as the caller's contract for `out`.
            unsafe { finish_recv(s, out, func)? };
            MPI_REQUEST_NULL
        }
        (Mode::Nonblocking(owner), None) => completed_request(&c, null, owner),
        (Mode::Nonblocking(owner), Some(src)) => {
            request_handle(pt2pt::irecv(&c, src, tag, b, owner))
        }
        (Mode::Persistent(owner), src) => {
            let op = match src {
                None => PersistentOp::Null(null),
                Some(src) => PersistentOp::Recv {
                    pattern: Pattern::new(c.context_id(), src, tag),
                    buf: b,
                },
            };
            request_handle(progress::persistent::init(
                &c.session.instance,
                c.vci,
                op,
                owner,
            ))
        }
    })
}

/// A source argument on a thread communicator: `None` for `MPI_PROC_NULL`.
fn thread_source(tc: &ThreadComm, source: c_int, func: &str) -> MpiResult<Option<SourceSel>> {
    if source == MPI_ANY_SOURCE {
        return Ok(Some(SourceSel::Any));
    }
    Ok(thread_peer(tc, source, func, "source")?.map(SourceSel::Rank))
}

/// The receive family on a thread communicator, by its rank `me`: message `b` from `source`.
///
/// # Safety
/// `out` is null or writable.
#[allow(clippy::too_many_arguments)]
unsafe fn thread_recv(
    c: &Comm,
    tc: &Arc<ThreadComm>,
    me: u32,
    b: Buf,
    (source, tag): (c_int, c_int),
    out: *mut MPI_Status,
    func: &str,
    mode: Mode,
) -> MpiResult<MPI_Request> {
    let tag = recv_tag(tag, func)?;
    let null = Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG);
    let source = thread_source(tc, source, func)?;
    Ok(match (mode, source) {
        (Mode::Persistent(owner), None) => thread_persistent(c, PersistentOp::Null(null), owner),
        (Mode::Persistent(owner), Some(src)) => {
            let start = tc.recv_init(&c.session.instance, c.vci, me, src, tag, b, owner);
            thread_persistent(c, PersistentOp::Deferred(start), owner)
        }
        (Mode::Nonblocking(owner), None) => completed_request(c, null, owner),
        (Mode::Nonblocking(owner), Some(src)) => request_handle(
            tc.irecv(&c.session.instance, me, src, tag, b, owner)
                .map_err(|e| prefix(func, e))?,
        ),
        (_, src) => {
            let s = match src {
                None => null,
                Some(src) => tc.recv(me, src, tag, b).map_err(|e| prefix(func, e))?,
            };
            // SAFETY: as the caller's contract for `out`.
            unsafe { finish_recv(s, out, func)? };
            MPI_REQUEST_NULL
        }
    })
}

/// `MPI_Recv`'s fast path on a thread communicator whose rank the calling thread is: plain
/// arguments (a byte-contiguous predefined type, a rank of the thread communicator or
/// `MPI_ANY_SOURCE`, a tag or `MPI_ANY_TAG`) go straight to the `thread` transport. `None`
/// for anything else, errors included (the general path reports them).
///
/// # Safety
/// The buffer holds what its count and datatype say; `out` is null or writable.
#[inline(always)]
unsafe fn thread_recv_now(
    (buf, count, datatype): (*mut c_void, c_int, MPI_Datatype),
    (source, tag, comm): (c_int, c_int, MPI_Comm),
    out: *mut MPI_Status,
) -> Option<MpiResult<()>> {
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let data = unsafe { contiguous_buf(buf, count as MPI_Count, datatype) }?;
    let tag = plain_tag(tag)?;
    let got = thread_ranks::with(comm, |_, tc, me| {
        let source = match source {
            MPI_ANY_SOURCE => SourceSel::Any,
            s if s >= 0 && (s as u32) < tc.size() => SourceSel::Rank(s as u32),
            _ => return None,
        };
        Some(tc.recv(me, source, tag, data))
    })
    .flatten()?;
    Some(match got {
        // SAFETY: as the caller's contract for `out`.
        Ok(s) => unsafe { finish_recv(s, out, "MPI_Recv") },
        Err(e) => Err(prefix("MPI_Recv", e)),
    })
}

#[inline(never)]
pub(crate) unsafe fn mpi_recv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    if objects::is_thread_handle(comm) {
        let (message, envelope) = ((buf, count, datatype), (source, tag, comm));
        // SAFETY: forwarded caller contract (the buffer, and `status` null or writable).
        if let Some(r) = unsafe { thread_recv_now(message, envelope, status) } {
            return r;
        }
    }
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    if let Some(a) = unsafe { plain_recv_args(buf, count, datatype, source, tag, comm) } {
        let s = pt2pt::recv(&a.comm, a.source, a.tag, a.buf);
        if trace::on() {
            trace::note(s.bytes as i64, s.source.into());
        }
        // SAFETY: as the caller's contract for `status`.
        return unsafe { finish_recv(s, status, "MPI_Recv") };
    }
    let func = "MPI_Recv";
    // SAFETY: forwarded caller contract.
    unsafe {
        recv(
            buf,
            count,
            datatype,
            source,
            tag,
            comm,
            status,
            func,
            Mode::Blocking,
        )
    }
    .map(|_| ())
}

#[inline(never)]
pub(crate) unsafe fn mpi_irecv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    if !request.is_null() {
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        if let Some(a) = unsafe { plain_recv_args(buf, count, datatype, source, tag, comm) } {
            if trace::on() {
                trace::note(a.buf.len() as i64, source.into());
            }
            let id = pt2pt::irecv(&a.comm, a.source, a.tag, a.buf, comm);
            // SAFETY: checked non-null; the caller passes a writable MPI_Request.
            unsafe { request.write(request_handle(id)) };
            return Ok(());
        }
    }
    let func = "MPI_Irecv";
    let ignore = std::ptr::null_mut();
    // SAFETY: forwarded caller contract.
    unsafe {
        family::nonblocking(request, func, comm, |mode| {
            recv(buf, count, datatype, source, tag, comm, ignore, func, mode)
        })
    }
}

// ------------------------------------------------------------------ send-receive

/// The send-receive family (`MPI_Sendrecv`, `MPI_Isendrecv`, `_c` twins); `out` is the
/// blocking form's status.
///
/// # Safety
/// `out` is null (`MPI_STATUS_IGNORE`) or a writable status.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn sendrecv(
    sendbuf: *const c_void,
    sendcount: impl Int,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: impl Int,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    out: *mut MPI_Status,
    func: &str,
    mode: Mode,
) -> MpiResult<MPI_Request> {
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let sbuf = unsafe { message_buf(sendbuf, sendcount.get(), sendtype, func) }?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let rbuf = unsafe { message_buf(recvbuf, recvcount.get(), recvtype, func) }?;
    let send = (dest, sendtag, sbuf);
    let recv = (source, recvtag, rbuf);
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        // SAFETY: forwarded caller contract for `out`.
        unsafe { thread_exchange(c, tc, me, send, recv, out, func, mode) }
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = objects::comm(comm, func, "comm")?;
    // SAFETY: forwarded caller contract.
    unsafe { exchange(&c, send, recv, None, out, func, mode) }
}

/// The send-receive-replace family (`MPI_Sendrecv_replace`, `MPI_Isendrecv_replace`, `_c`
/// twins): the message is sent from a copy, so the receive may land in the buffer meanwhile.
///
/// # Safety
/// `out` is null (`MPI_STATUS_IGNORE`) or a writable status.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn sendrecv_replace(
    buf: *mut c_void,
    count: impl Int,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    out: *mut MPI_Status,
    func: &str,
    mode: Mode,
) -> MpiResult<MPI_Request> {
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let b = unsafe { message_buf(buf, count.get(), datatype, func) }?;
    let mut copy = vec![0u8; b.len()].into_boxed_slice();
    b.pack(0, &mut copy);
    // `exchange` keeps the box until the exchange completed (with the schedule, for the nonblocking
    // form).
    // SAFETY: the boxed copy's heap block does not move and outlives the exchange (above).
    let sbuf = unsafe { Buf::new(copy.as_ptr() as usize, copy.len()) };
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        let (send, recv) = ((dest, sendtag, sbuf), (source, recvtag, b));
        // Forwarded caller contract for `out`.
        // SAFETY: `copy` outlives the exchange, which completes in the call.
        unsafe { thread_exchange(c, tc, me, send, recv, out, func, mode) }
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = objects::comm(comm, func, "comm")?;
    let keep: Box<dyn std::any::Any + Send> = Box::new(copy);
    // SAFETY: forwarded caller contract.
    unsafe {
        exchange(
            &c,
            (dest, sendtag, sbuf),
            (source, recvtag, b),
            Some(keep),
            out,
            func,
            mode,
        )
    }
}

/// The send-receive families on a thread communicator, by its rank `me`: complete in the
/// call (a nonblocking form returns a completed request).
///
/// # Safety
/// `out` is null or a writable status.
#[allow(clippy::too_many_arguments)]
unsafe fn thread_exchange(
    c: &Comm,
    tc: &Arc<ThreadComm>,
    me: u32,
    (dest, sendtag, sbuf): (c_int, c_int, Buf),
    (source, recvtag, rbuf): (c_int, c_int, Buf),
    out: *mut MPI_Status,
    func: &str,
    mode: Mode,
) -> MpiResult<MPI_Request> {
    if let Mode::Persistent(_) = mode {
        return Err(thread_unsupported(func));
    }
    let dest = thread_peer(tc, dest, func, "dest")?;
    let sendtag = send_tag(sendtag, func)?;
    let recvtag = recv_tag(recvtag, func)?;
    let source = thread_source(tc, source, func)?;
    let status = tc
        .sendrecv(me, (dest, sendtag, &sbuf), (source, recvtag, rbuf))
        .map_err(|e| prefix(func, e))?
        .unwrap_or_else(|| Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG));
    match mode {
        Mode::Nonblocking(owner) => Ok(completed_request(c, status, owner)),
        _ => {
            // SAFETY: as the caller's contract for `out`.
            unsafe { finish_recv(status, out, func)? };
            Ok(MPI_REQUEST_NULL)
        }
    }
}

/// A send of `send` (destination, tag, buffer) and a receive into `recv` (source, tag,
/// buffer) at once; `keep` lives until both are done.
///
/// # Safety
/// `out` is null or a writable status.
unsafe fn exchange(
    c: &Arc<Comm>,
    (dest, sendtag, sbuf): (c_int, c_int, Buf),
    (source, recvtag, rbuf): (c_int, c_int, Buf),
    keep: Option<Box<dyn std::any::Any + Send>>,
    out: *mut MPI_Status,
    func: &str,
    mode: Mode,
) -> MpiResult<MPI_Request> {
    let dest = dest_rank(c, dest, func)?;
    let sendtag = send_tag(sendtag, func)?;
    let recvtag = recv_tag(recvtag, func)?;
    let source = source_sel(c, source, func)?;
    let null = Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG);
    let Mode::Nonblocking(owner) = mode else {
        // Post the receive first so the exchange cannot deadlock with a peer doing the same.
        let rreq = source.map(|src| pt2pt::irecv(c, src, recvtag, rbuf, 0));
        if let Some(d) = dest {
            pt2pt::send(c, d, sendtag, sbuf, SendMode::Standard).map_err(|e| prefix(func, e))?;
        }
        drop(keep);
        let s = rreq.map_or(null, |id| progress::wait(&c.session.instance, id).status);
        // SAFETY: as the caller's contract for `out`.
        unsafe { finish_recv(s, out, func)? };
        return Ok(MPI_REQUEST_NULL);
    };
    let id = pt2pt::isendrecv(
        c,
        dest.map(|d| (d, sendtag, sbuf)),
        source.map(|s| (s, recvtag, rbuf)),
        null,
        keep,
        owner,
    )
    .map_err(|e| prefix(func, e))?;
    Ok(request_handle(id))
}

// ------------------------------------------------------------------ probes

/// A probe on `comm` from `source` with `tag`: `on_thread` runs on a thread communicator by
/// one of the calling thread's ranks (with that rank), `on_process` on any other
/// communicator; `MPI_PROC_NULL` finds `null`.
fn probe_either<T: Copy>(
    (source, tag, comm, func): (c_int, c_int, MPI_Comm, &str),
    null: T,
    on_thread: impl FnOnce(&Arc<Comm>, &ThreadComm, u32, SourceSel, TagSel) -> MpiResult<Option<T>>,
    on_process: impl FnOnce(&Arc<Comm>, SourceSel, TagSel) -> Option<T>,
) -> MpiResult<Option<T>> {
    let thread = thread_ranks::with(comm, |c, tc, me| {
        let tag = recv_tag(tag, func)?;
        match thread_source(tc, source, func)? {
            None => Ok(Some(null)),
            Some(src) => on_thread(c, tc, me, src, tag).map_err(|e| prefix(func, e)),
        }
    });
    if let Some(found) = thread {
        return found;
    }
    let c = objects::comm(comm, func, "comm")?;
    let tag = recv_tag(tag, func)?;
    Ok(match source_sel(&c, source, func)? {
        None => Some(null),
        Some(src) => on_process(&c, src, tag),
    })
}

unsafe fn probe_impl(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: Option<*mut c_int>,
    out: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    if let Some(f) = flag {
        non_null(f, func, "flag")?;
    }
    let blocking = flag.is_none();
    let found = probe_either(
        (source, tag, comm, func),
        Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG),
        |_, tc, me, src, tag| tc.probe(me, src, tag, blocking),
        |c, src, tag| match blocking {
            false => pt2pt::iprobe(c, src, tag),
            true => Some(pt2pt::probe(c, src, tag)),
        },
    )?;
    // SAFETY: flag checked non-null above; `out` null or writable per the caller.
    unsafe {
        if let Some(f) = flag {
            f.write(found.is_some() as c_int);
        }
        if let Some(s) = found {
            status::store(out, &s, false);
        }
    }
    Ok(())
}

pub(crate) unsafe fn mpi_probe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { probe_impl(source, tag, comm, None, status, "MPI_Probe") }
}

pub(crate) unsafe fn mpi_iprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { probe_impl(source, tag, comm, Some(flag), status, "MPI_Iprobe") }
}

/// A message a matched probe took: from the process-level matching, or out of a thread
/// rank's mailbox.
pub(crate) enum Taken {
    Proc(pt2pt::Message),
    Thread(Matched),
}

/// A taken message with its communicator and that communicator's handle.
type Held = (Arc<Comm>, MPI_Comm, Taken);

/// Messages taken by `MPI_Mprobe`/`MPI_Improbe`, until `MPI_Mrecv`/`MPI_Imrecv` receives them.
pub(crate) static MESSAGES: Table<Mutex<Option<Held>>> = Table::new(Kind::Message);

unsafe fn mprobe_impl(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: Option<*mut c_int>,
    message: *mut MPI_Message,
    out: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    if let Some(f) = flag {
        non_null(f, func, "flag")?;
    }
    non_null(message, func, "message")?;
    let keep = |c: &Arc<Comm>, (s, m): (Status, Taken)| {
        let handle = MESSAGES.insert(Arc::new(Mutex::new(Some((c.clone(), comm, m)))));
        (s, handle)
    };
    let no_proc = (
        Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG),
        MPI_MESSAGE_NO_PROC,
    );
    let blocking = flag.is_none();
    let found = probe_either(
        (source, tag, comm, func),
        no_proc,
        |c, tc, me, src, tag| {
            let got = tc.mprobe(me, src, tag, blocking)?;
            Ok(got.map(|(s, m)| keep(c, (s, Taken::Thread(m)))))
        },
        |c, src, tag| {
            let got = match blocking {
                false => pt2pt::improbe(c, src, tag),
                true => Some(pt2pt::mprobe(c, src, tag)),
            };
            got.map(|(s, m)| keep(c, (s, Taken::Proc(m))))
        },
    )?;
    // SAFETY: pointers checked non-null above; `out` null or writable per the caller.
    unsafe {
        if let Some(f) = flag {
            f.write(found.is_some() as c_int);
        }
        if let Some((s, handle)) = found {
            message.write(handle);
            status::store(out, &s, false);
        }
    }
    Ok(())
}

pub(crate) unsafe fn mpi_mprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { mprobe_impl(source, tag, comm, None, message, status, "MPI_Mprobe") }
}

pub(crate) unsafe fn mpi_improbe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        mprobe_impl(
            source,
            tag,
            comm,
            Some(flag),
            message,
            status,
            "MPI_Improbe",
        )
    }
}

/// Take the message a handle names: `None` for `MPI_MESSAGE_NO_PROC`.
fn take_message(handle: MPI_Message, func: &str) -> MpiResult<Option<Held>> {
    if handle == MPI_MESSAGE_NO_PROC {
        return Ok(None);
    }
    if handle == MPI_MESSAGE_NULL {
        return Err(mpi_err!(
            Request,
            "{func}(message=MPI_MESSAGE_NULL): a matched message is required"
        ));
    }
    let slot = MESSAGES.remove(handle).map_err(|why| {
        mpi_err!(
            Request,
            "{func}(message={handle:#x}): message {}",
            why.describe()
        )
    })?;
    let taken = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
    Ok(taken)
}

/// The matched-receive family (`MPI_Mrecv`, `MPI_Imrecv`, `_c` twins); `out` is the
/// blocking form's status.
///
/// # Safety
/// `message` is null or a readable and writable message handle; `out` is null or a
/// writable status.
pub(crate) unsafe fn mrecv(
    buf: *mut c_void,
    count: impl Int,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    out: *mut MPI_Status,
    func: &str,
    mode: Mode,
) -> MpiResult<MPI_Request> {
    non_null(message, func, "message")?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let b = unsafe { message_buf(buf, count.get(), datatype, func) }?;
    // SAFETY: checked non-null.
    let handle = unsafe { *message };
    let taken = take_message(handle, func)?;
    // SAFETY: checked non-null.
    unsafe { message.write(MPI_MESSAGE_NULL) };
    let null = Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG);
    let Some((c, comm, m)) = taken else {
        // MPI_MESSAGE_NO_PROC: a receive from MPI_PROC_NULL.
        if mode == Mode::Blocking {
            // SAFETY: `out` null or writable per the caller.
            unsafe { finish_recv(null, out, func)? };
            return Ok(MPI_REQUEST_NULL);
        }
        let inst = objects::instance(func)?;
        return Ok(request_handle(progress::completed(&inst, 0, null, 0)));
    };
    let m = match m {
        Taken::Proc(m) => m,
        Taken::Thread(m) => {
            // The message is here already: the receive completes in the call.
            let s = m.deliver(&b);
            if mode != Mode::Blocking {
                return Ok(completed_request(&c, s, comm));
            }
            // SAFETY: `out` null or writable per the caller.
            unsafe { finish_recv(s, out, func)? };
            return Ok(MPI_REQUEST_NULL);
        }
    };
    let inst = &c.session.instance;
    let id = pt2pt::imrecv(inst, m, b, comm);
    if mode != Mode::Blocking {
        return Ok(request_handle(id));
    }
    let s = progress::wait(inst, id).status;
    // SAFETY: `out` null or writable per the caller.
    unsafe { finish_recv(s, out, func)? };
    Ok(MPI_REQUEST_NULL)
}
