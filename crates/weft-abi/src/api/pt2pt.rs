//! Point-to-point arguments (buffers, ranks, tags), the send families (`MPI_Send`,
//! `MPI_Ssend`, `MPI_Rsend`, `MPI_Bsend`: blocking, `I` and `_init` forms and their `_c`
//! twins, one implementation: `send`) and the fast paths of `MPI_Send`/`MPI_Isend`.
//! Receives, probes and send-receive are in `recv.rs`.

use std::ffi::{c_int, c_void};

use weft_core::datatype::Buf;
use weft_core::error::{MpiError, MpiResult};
use weft_core::message::{SendMode, SourceSel, Status, TagSel};
use weft_core::mpi_err;
use weft_core::object::Comm;
use weft_core::progress;
use weft_core::pt2pt;
use weft_core::pt2pt::buffered;
use weft_core::request::{PersistentOp, StartFn};
use weft_core::threadcomm::ThreadComm;
use weft_core::trace;
use weft_core::vci::engine::SendStart;

use crate::api::buffered::buffered_send;
use crate::api::family::{self, Mode};
use crate::args::{peer_rank, Int};
use crate::constants::*;
use crate::ctypes::*;
use crate::datatypes::contiguous_buf;
use crate::requests::{completed_request, request_handle};
use crate::{datatypes, objects, thread_ranks};

/// The user memory of a message: `count` elements of `datatype` at `buf`.
///
/// # Safety
/// `buf` holds `count` elements of `datatype` (the standard's rule for a message buffer),
/// left alone until the operation completes.
pub(crate) unsafe fn message_buf(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    func: &str,
) -> MpiResult<Buf> {
    if count < 0 {
        return Err(mpi_err!(Count, "{func}(count={count}): negative count"));
    }
    // Fast path: a predefined type of plain bytes needs no type object.
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    if let Some(b) = unsafe { contiguous_buf(buf, count, datatype) } {
        return Ok(b);
    }
    let dt = match datatypes::committed_ref(datatype, func, "datatype") {
        Ok(t) => t,
        // An empty message needs no type: MPI_DATATYPE_NULL with count 0 is accepted (as
        // MPICH does), e.g. `MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, ...)`.
        Err(_) if count == 0 && datatype == MPI_DATATYPE_NULL => return Ok(Buf::EMPTY),
        Err(e) => return Err(e),
    };
    let bytes = usize::try_from(count)
        .ok()
        .and_then(|c| dt.bytes_for(c))
        .ok_or_else(|| mpi_err!(Count, "{func}(count={count}): the message size overflows"))?;
    // A derived type may address absolute memory from MPI_BOTTOM (null).
    if buf.is_null() && bytes > 0 && dt.predefined.is_some() {
        return Err(mpi_err!(
            Buffer,
            "{func}(buf=NULL): a buffer is required for count {count}"
        ));
    }
    // The type stays alive through the handle table during the call and through the request
    // (`Request::keep`) after it.
    // SAFETY: the caller's contract for the buffer; the type stays alive (above).
    Ok(unsafe { Buf::typed(buf as usize, count as usize, &dt) })
}

/// A destination rank: `None` for `MPI_PROC_NULL`.
pub(crate) fn dest_rank(comm: &Comm, dest: c_int, func: &str) -> MpiResult<Option<u32>> {
    peer_rank(
        dest,
        comm.peer_size(),
        "a rank of the communicator",
        func,
        "dest",
    )
}

/// A source selector: `None` for `MPI_PROC_NULL`.
pub(crate) fn source_sel(comm: &Comm, source: c_int, func: &str) -> MpiResult<Option<SourceSel>> {
    match source {
        MPI_PROC_NULL => Ok(None),
        MPI_ANY_SOURCE => Ok(Some(SourceSel::Any)),
        s if s >= 0 && (s as u32) < comm.peer_size() => Ok(Some(SourceSel::Rank(s as u32))),
        s => Err(mpi_err!(
            Rank,
            "{func}(source={s}): not a rank of the communicator (size {})",
            comm.peer_size()
        )),
    }
}

pub(crate) fn send_tag(tag: c_int, func: &str) -> MpiResult<i32> {
    if tag < 0 {
        return Err(mpi_err!(
            Tag,
            "{func}(tag={tag}): tags must be in 0..=MPI_TAG_UB"
        ));
    }
    Ok(tag)
}

pub(crate) fn recv_tag(tag: c_int, func: &str) -> MpiResult<TagSel> {
    match tag {
        MPI_ANY_TAG => Ok(TagSel::Any),
        t if t >= 0 => Ok(TagSel::Tag(t)),
        t => Err(mpi_err!(
            Tag,
            "{func}(tag={t}): tags must be MPI_ANY_TAG or in 0..=MPI_TAG_UB"
        )),
    }
}

/// Everything a send needs, checked.
struct SendArgs {
    comm: objects::CommRef,
    dest: Option<u32>,
    tag: i32,
    buf: Buf,
}

/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
unsafe fn send_args(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    func: &str,
) -> MpiResult<SendArgs> {
    let c = objects::comm_ref(comm, func, "comm")?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let buf = unsafe { message_buf(buf, count, datatype, func) }?;
    let dest = dest_rank(&c, dest, func)?;
    let tag = send_tag(tag, func)?;
    Ok(SendArgs {
        comm: c,
        dest,
        tag,
        buf,
    })
}

/// `MPI_Send`/`MPI_Isend` arguments when they are plain: a predefined byte-contiguous type,
/// a real destination, a valid tag and communicator (no error possible). `None` when
/// anything is unusual, every error included: the general path then checks and reports.
///
/// # Safety
/// The communicator is borrowed without a count (`objects::comm_quiet_unchecked`): the
/// caller may use it only to start the send (which runs no user code and waits for
/// nothing), never across a wait.
#[inline(always)]
unsafe fn plain_send_args<'a>(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> Option<(&'a Comm, u32, i32, Buf)> {
    if tag < 0 || dest < 0 {
        return None;
    }
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let data = unsafe { contiguous_buf(buf, count as MPI_Count, datatype) }?;
    // SAFETY: forwarded contract: the borrow ends before anything waits or runs user code.
    let c = unsafe { objects::comm_quiet_unchecked(comm) }?;
    if dest as u32 >= c.peer_size() {
        return None;
    }
    Some((c, dest as u32, tag, data))
}

/// A receive's arguments when they are plain (as `send_now` for sends): a byte-contiguous
/// predefined type, a real source or `MPI_ANY_SOURCE`, a tag or `MPI_ANY_TAG`. `None` for
/// anything else, errors included (the general path checks and reports them).
pub(crate) struct PlainRecv {
    pub(crate) comm: objects::CommRef,
    pub(crate) source: SourceSel,
    pub(crate) tag: TagSel,
    pub(crate) buf: Buf,
}

/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[inline(always)]
pub(crate) unsafe fn plain_recv_args(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> Option<PlainRecv> {
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let buf = unsafe { contiguous_buf(buf, count as MPI_Count, datatype) }?;
    let tag = plain_tag(tag)?;
    let c = objects::comm_ref_quiet(comm)?;
    let source = match source {
        MPI_ANY_SOURCE => SourceSel::Any,
        s if s >= 0 && (s as u32) < c.peer_size() => SourceSel::Rank(s as u32),
        _ => return None,
    };
    Some(PlainRecv {
        comm: c,
        source,
        tag,
        buf,
    })
}

/// A receive's tag when it is plain: a tag or `MPI_ANY_TAG`.
#[inline(always)]
pub(crate) fn plain_tag(tag: c_int) -> Option<TagSel> {
    match tag {
        MPI_ANY_TAG => Some(TagSel::Any),
        t if t >= 0 => Some(TagSel::Tag(t)),
        _ => None,
    }
}

/// `MPI_Send`'s fast path on a thread communicator whose rank the calling thread is: plain
/// arguments (as `plain_send_args`: a byte-contiguous predefined type, a rank of the thread
/// communicator, a tag) go straight to the `thread` transport, skipping the family's
/// lookups. `None` for anything else, errors included (the general path reports them).
///
/// # Safety
/// The buffer holds what its count and datatype say (the standard's rule).
#[inline(always)]
unsafe fn thread_send_now(
    (buf, count, datatype): (*const c_void, c_int, MPI_Datatype),
    (dest, tag, comm): (c_int, c_int, MPI_Comm),
) -> Option<MpiResult<()>> {
    if tag < 0 || dest < 0 {
        return None;
    }
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let data = unsafe { contiguous_buf(buf, count as MPI_Count, datatype) }?;
    thread_ranks::with(comm, |_, tc, me| {
        ((dest as u32) < tc.size()).then(|| tc.send(me, dest as u32, tag, &data, false))
    })
    .flatten()
}

/// Name the function in an error from the core.
pub(crate) fn prefix(func: &str, e: MpiError) -> MpiError {
    MpiError {
        message: format!("{func}: {}", e.message),
        ..e
    }
}

/// The send modes of the standard. A ready send behaves as a standard one (its receive is
/// posted, which the standard lets the implementation assume).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SendKind {
    Standard,
    Synchronous,
    Ready,
    Buffered,
}

/// The send families (`MPI_Send`, `MPI_Ssend`, `MPI_Rsend`, `MPI_Bsend`, their `I` and
/// `_init` forms and `_c` twins).
///
/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn send(
    buf: *const c_void,
    count: impl Int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    func: &str,
    mode: Mode,
    kind: SendKind,
) -> MpiResult<MPI_Request> {
    let count = count.get();
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let b = unsafe { message_buf(buf, count, datatype, func) }?;
        thread_send(c, tc, me, b, (dest, tag), func, mode, kind)
    });
    if let Some(r) = on_thread {
        return r;
    }
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let a = unsafe { send_args(buf, count, datatype, dest, tag, comm, func) }?;
    if trace::on() {
        trace::note(a.buf.len() as i64, dest.into());
    }
    let core_mode = match kind {
        SendKind::Synchronous => SendMode::Synchronous,
        _ => SendMode::Standard,
    };
    let persistent = |op, owner| {
        let inst = &a.comm.session.instance;
        request_handle(progress::persistent::init(inst, a.comm.vci, op, owner))
    };
    let Some(d) = a.dest else {
        // MPI_PROC_NULL: nothing is sent; a buffered send's request reports success.
        let status = match kind {
            SendKind::Buffered => Status::default(),
            _ => Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG),
        };
        return Ok(match mode {
            Mode::Blocking => MPI_REQUEST_NULL,
            Mode::Nonblocking(owner) => completed_request(&a.comm, status, owner),
            Mode::Persistent(owner) => persistent(PersistentOp::Null(status), owner),
        });
    };
    match (mode, kind) {
        (Mode::Persistent(owner), SendKind::Buffered) => {
            let (c, tag, buf) = (a.comm.to_arc(), a.tag, a.buf);
            // Each start copies the message into the attached buffer and sends it from there.
            let start = StartFn::new(move |func| {
                let sender = buffered_send(&c, 0, d, tag, &buf, func)?;
                Ok(Some(buffered::user_request(&c.session.instance, sender, 0)))
            });
            Ok(persistent(PersistentOp::Deferred(start), owner))
        }
        (Mode::Persistent(owner), _) => {
            let target = a.comm.target(d, a.tag).map_err(|e| prefix(func, e))?;
            let op = PersistentOp::Send {
                target,
                buf: a.buf,
                mode: core_mode,
            };
            Ok(persistent(op, owner))
        }
        (_, SendKind::Buffered) => {
            let sender = buffered_send(&a.comm.to_arc(), comm, d, a.tag, &a.buf, func)?;
            // The message is in the attached buffer: a request is complete at once.
            Ok(match mode {
                Mode::Nonblocking(owner) => {
                    let inst = &a.comm.session.instance;
                    request_handle(buffered::user_request(inst, sender, owner))
                }
                _ => MPI_REQUEST_NULL,
            })
        }
        (Mode::Blocking, _) => pt2pt::send(&a.comm, d, a.tag, a.buf, core_mode)
            .map(|()| MPI_REQUEST_NULL)
            .map_err(|e| prefix(func, e)),
        (Mode::Nonblocking(owner), _) => pt2pt::isend(&a.comm, d, a.tag, a.buf, core_mode, owner)
            .map(request_handle)
            .map_err(|e| prefix(func, e)),
    }
}

/// A peer rank argument on a thread communicator: `None` for `MPI_PROC_NULL`.
pub(crate) fn thread_peer(
    tc: &ThreadComm,
    r: c_int,
    func: &str,
    arg: &str,
) -> MpiResult<Option<u32>> {
    peer_rank(r, tc.size(), "a rank of the thread communicator", func, arg)
}

/// The persistent forms not done on thread communicators yet (send-receive, collectives).
pub(crate) fn thread_unsupported(func: &str) -> MpiError {
    mpi_err!(
        UnsupportedOperation,
        "{func}(comm): not supported on a thread communicator in Weft yet"
    )
}

/// A persistent point-to-point request on thread communicator `c`: each start runs `op`'s
/// code on the calling thread rank.
pub(crate) fn thread_persistent(c: &Comm, op: PersistentOp, owner: usize) -> MPI_Request {
    request_handle(progress::persistent::init(
        &c.session.instance,
        c.vci,
        op,
        owner,
    ))
}

/// The send family on a thread communicator, by its rank `me`: message `b` to `dest`.
#[allow(clippy::too_many_arguments)]
fn thread_send(
    c: &Comm,
    tc: &std::sync::Arc<ThreadComm>,
    me: u32,
    b: Buf,
    (dest, tag): (c_int, c_int),
    func: &str,
    mode: Mode,
    kind: SendKind,
) -> MpiResult<MPI_Request> {
    let tag = send_tag(tag, func)?;
    let Some(d) = thread_peer(tc, dest, func, "dest")? else {
        let null = Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG);
        return Ok(match mode {
            Mode::Nonblocking(owner) => completed_request(c, null, owner),
            Mode::Persistent(owner) => thread_persistent(c, PersistentOp::Null(null), owner),
            Mode::Blocking => MPI_REQUEST_NULL,
        });
    };
    let sync = matches!(kind, SendKind::Synchronous);
    match mode {
        Mode::Persistent(owner) => {
            let start = tc.send_init(&c.session.instance, c.vci, me, d, tag, b, sync, owner);
            Ok(thread_persistent(c, PersistentOp::Deferred(start), owner))
        }
        Mode::Nonblocking(owner) => {
            match tc.isend(&c.session.instance, me, d, tag, &b, sync, owner) {
                Ok(Some(id)) => Ok(request_handle(id)),
                Ok(None) => Ok(completed_request(c, Status::default(), owner)),
                Err(e) => Err(e),
            }
        }
        _ => tc.send(me, d, tag, &b, sync).map(|()| MPI_REQUEST_NULL),
    }
    .map_err(|e| prefix(func, e))
}

/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[inline(never)]
pub(crate) unsafe fn mpi_send(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    if objects::is_thread_handle(comm) {
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        if let Some(r) = unsafe { thread_send_now((buf, count, datatype), (dest, tag, comm)) } {
            return r.map_err(|e| prefix("MPI_Send", e));
        }
    }
    // `c` only starts the send; a pending send is waited for through the instance, cloned
    // while `c` is still valid.
    let plain =
        // SAFETY: as just said; the buffer is the caller's (the standard's rule).
        unsafe { plain_send_args(buf, count, datatype, dest, tag, comm) };
    if let Some((c, dest, tag, data)) = plain {
        if trace::on() {
            trace::note(data.len() as i64, dest.into());
        }
        return match pt2pt::start_send(c, dest, tag, data, SendMode::Standard, None) {
            Ok(SendStart::Done) => Ok(()),
            Ok(SendStart::Pending(id)) => {
                let inst = c.session.instance.clone();
                pt2pt::wait_send(&inst, id).map_err(|e| prefix("MPI_Send", e))
            }
            Err(e) => Err(prefix("MPI_Send", e)),
        };
    }
    let func = "MPI_Send";
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    unsafe {
        send(
            buf,
            count,
            datatype,
            dest,
            tag,
            comm,
            func,
            Mode::Blocking,
            SendKind::Standard,
        )
    }
    .map(|_| ())
}

// The hot entry points' implementations stay out of line: inlined, they make the
// entry point's `catch_unwind` closure too large for LLVM to inline the closure's
// `do_call` (callgrind: 8-byte `MPI_Irecv` 336 -> 306 instructions with this).
#[inline(never)]
pub(crate) unsafe fn mpi_isend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    if !request.is_null() {
        let plain =
            // SAFETY: `c` only starts the send; the buffer is the caller's (the standard's rule).
            unsafe { plain_send_args(buf, count, datatype, dest, tag, comm) };
        if let Some((c, dest, tag, data)) = plain {
            if trace::on() {
                trace::note(data.len() as i64, dest.into());
            }
            let id = pt2pt::isend(c, dest, tag, data, SendMode::Standard, comm)
                .map_err(|e| prefix("MPI_Isend", e))?;
            // SAFETY: checked non-null; the caller passes a writable MPI_Request.
            unsafe { request.write(request_handle(id)) };
            return Ok(());
        }
    }
    // SAFETY: forwarded caller contract.
    unsafe {
        family::nonblocking(request, "MPI_Isend", comm, |mode| {
            send(
                buf,
                count,
                datatype,
                dest,
                tag,
                comm,
                "MPI_Isend",
                mode,
                SendKind::Standard,
            )
        })
    }
}
