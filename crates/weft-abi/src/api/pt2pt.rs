//! Point-to-point: sends, receives, probes, and their large-count `_c` forms.

use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex};

use weft_core::datatype::Buf;
use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::message::{Pattern, SendMode, SourceSel, Status, TagSel};
use weft_core::object::Comm;
use weft_core::progress;
use weft_core::pt2pt;
use weft_core::request::{PersistentOp, StartFn};
use weft_core::vci::engine::SendStart;

use crate::args::non_null;
use crate::constants::*;
use crate::ctypes::*;
use crate::datatypes::contiguous_buf;
use crate::handles::{Kind, Table};
use crate::requests::{completed_request, request_handle};
use crate::{datatypes, objects, status};

/// The user memory of a message: `count` elements of `datatype` at `buf`.
pub(crate) fn message_buf(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    func: &str,
) -> MpiResult<Buf> {
    if count < 0 {
        return Err(MpiError::new(
            ErrorClass::Count,
            format!("{func}(count={count}): negative count"),
        ));
    }
    // Fast path: a predefined type of plain bytes needs no type object.
    if let Some(b) = contiguous_buf(buf, count, datatype) {
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
        .ok_or_else(|| {
            MpiError::new(
                ErrorClass::Count,
                format!("{func}(count={count}): the message size overflows"),
            )
        })?;
    // A derived type may address absolute memory from MPI_BOTTOM (null).
    if buf.is_null() && bytes > 0 && dt.predefined.is_some() {
        return Err(MpiError::new(
            ErrorClass::Buffer,
            format!("{func}(buf=NULL): a buffer is required for count {count}"),
        ));
    }
    // SAFETY: the MPI standard obliges the caller to pass a buffer holding `count` elements
    // and to leave it alone until the operation completes; the type stays alive through the
    // handle table during the call and through the request (`Request::keep`) after it.
    Ok(unsafe { Buf::typed(buf as usize, count as usize, &dt) })
}

/// A destination rank: `None` for `MPI_PROC_NULL`.
pub(crate) fn dest_rank(comm: &Comm, dest: c_int, func: &str) -> MpiResult<Option<u32>> {
    if dest == MPI_PROC_NULL {
        return Ok(None);
    }
    if dest < 0 || dest as u32 >= comm.peer_size() {
        return Err(MpiError::new(
            ErrorClass::Rank,
            format!(
                "{func}(dest={dest}): not a rank of the communicator (size {})",
                comm.peer_size()
            ),
        ));
    }
    Ok(Some(dest as u32))
}

/// A source selector: `None` for `MPI_PROC_NULL`.
pub(crate) fn source_sel(comm: &Comm, source: c_int, func: &str) -> MpiResult<Option<SourceSel>> {
    match source {
        MPI_PROC_NULL => Ok(None),
        MPI_ANY_SOURCE => Ok(Some(SourceSel::Any)),
        s if s >= 0 && (s as u32) < comm.peer_size() => Ok(Some(SourceSel::Rank(s as u32))),
        s => Err(MpiError::new(
            ErrorClass::Rank,
            format!(
                "{func}(source={s}): not a rank of the communicator (size {})",
                comm.peer_size()
            ),
        )),
    }
}

pub(crate) fn send_tag(tag: c_int, func: &str) -> MpiResult<i32> {
    if tag < 0 {
        return Err(MpiError::new(
            ErrorClass::Tag,
            format!("{func}(tag={tag}): tags must be in 0..=MPI_TAG_UB"),
        ));
    }
    Ok(tag)
}

pub(crate) fn recv_tag(tag: c_int, func: &str) -> MpiResult<TagSel> {
    match tag {
        MPI_ANY_TAG => Ok(TagSel::Any),
        t if t >= 0 => Ok(TagSel::Tag(t)),
        t => Err(MpiError::new(
            ErrorClass::Tag,
            format!("{func}(tag={t}): tags must be MPI_ANY_TAG or in 0..=MPI_TAG_UB"),
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

fn send_args(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    func: &str,
) -> MpiResult<SendArgs> {
    let c = objects::comm_ref(comm, func, "comm")?;
    let buf = message_buf(buf, count, datatype, func)?;
    let dest = dest_rank(&c, dest, func)?;
    let tag = send_tag(tag, func)?;
    Ok(SendArgs {
        comm: c,
        dest,
        tag,
        buf,
    })
}

fn blocking_send(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: SendMode,
    func: &str,
) -> MpiResult<()> {
    let a = send_args(buf, count, datatype, dest, tag, comm, func)?;
    match a.dest {
        None => Ok(()),
        Some(d) => pt2pt::send(&a.comm, d, a.tag, a.buf, mode).map_err(|e| prefix(func, e)),
    }
}

unsafe fn nonblocking_send(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
    mode: SendMode,
    func: &str,
) -> MpiResult<()> {
    non_null(request, func, "request")?;
    let a = send_args(buf, count, datatype, dest, tag, comm, func)?;
    let handle = match a.dest {
        None => completed_request(&a.comm, Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG), comm),
        Some(d) => request_handle(
            pt2pt::isend(&a.comm, d, a.tag, a.buf, mode, comm).map_err(|e| prefix(func, e))?,
        ),
    };
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
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
    let data = contiguous_buf(buf, count as MPI_Count, datatype)?;
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
struct PlainRecv {
    comm: objects::CommRef,
    source: SourceSel,
    tag: TagSel,
    buf: Buf,
}

#[inline(always)]
fn plain_recv_args(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> Option<PlainRecv> {
    let buf = contiguous_buf(buf, count as MPI_Count, datatype)?;
    let tag = match tag {
        MPI_ANY_TAG => TagSel::Any,
        t if t >= 0 => TagSel::Tag(t),
        _ => return None,
    };
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

/// Name the function in an error from the core.
pub(crate) fn prefix(func: &str, e: MpiError) -> MpiError {
    MpiError {
        message: format!("{func}: {}", e.message),
        ..e
    }
}

/// Finish a receive's status: store it, and turn an error status into the call's error.
pub(crate) unsafe fn finish_recv(s: Status, out: *mut MPI_Status, func: &str) -> MpiResult<()> {
    // SAFETY: null (MPI_STATUS_IGNORE) or a writable status per the caller.
    unsafe { status::store(out, &s, false) };
    s.into_result().map(|_| ()).map_err(|e| prefix(func, e))
}

unsafe fn blocking_recv(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    out: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    let c = objects::comm_ref(comm, func, "comm")?;
    let b = message_buf(buf, count, datatype, func)?;
    let tag = recv_tag(tag, func)?;
    let s = match source_sel(&c, source, func)? {
        None => Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG),
        Some(src) => pt2pt::recv(&c, src, tag, b),
    };
    // SAFETY: as the caller's contract for `out`.
    unsafe { finish_recv(s, out, func) }
}

unsafe fn nonblocking_recv(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    non_null(request, func, "request")?;
    let c = objects::comm_ref(comm, func, "comm")?;
    let b = message_buf(buf, count, datatype, func)?;
    let tag = recv_tag(tag, func)?;
    let handle = match source_sel(&c, source, func)? {
        None => completed_request(&c, Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG), comm),
        Some(src) => request_handle(pt2pt::irecv(&c, src, tag, b, comm)),
    };
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

// A ready send may be sent as a standard one: the receive is posted, so it behaves the same.

pub(crate) fn mpi_send(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    // SAFETY: `c` only starts the send; a pending send is waited for through the instance,
    // cloned while `c` is still valid.
    if let Some((c, dest, tag, data)) =
        unsafe { plain_send_args(buf, count, datatype, dest, tag, comm) }
    {
        return match pt2pt::start_send(c, dest, tag, data, SendMode::Standard, None) {
            Ok(SendStart::Done) => Ok(()),
            Ok(SendStart::Pending(id)) => {
                let inst = c.session.instance.clone();
                pt2pt::wait_send(&inst, id).map_err(|e| prefix("MPI_Send", e))
            }
            Err(e) => Err(prefix("MPI_Send", e)),
        };
    }
    blocking_send(
        buf,
        count as MPI_Count,
        datatype,
        dest,
        tag,
        comm,
        SendMode::Standard,
        "MPI_Send",
    )
}

pub(crate) fn mpi_send_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    blocking_send(
        buf,
        count as MPI_Count,
        datatype,
        dest,
        tag,
        comm,
        SendMode::Standard,
        "MPI_Send_c",
    )
}

pub(crate) fn mpi_ssend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    blocking_send(
        buf,
        count as MPI_Count,
        datatype,
        dest,
        tag,
        comm,
        SendMode::Synchronous,
        "MPI_Ssend",
    )
}

pub(crate) fn mpi_ssend_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    blocking_send(
        buf,
        count as MPI_Count,
        datatype,
        dest,
        tag,
        comm,
        SendMode::Synchronous,
        "MPI_Ssend_c",
    )
}

pub(crate) fn mpi_rsend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    blocking_send(
        buf,
        count as MPI_Count,
        datatype,
        dest,
        tag,
        comm,
        SendMode::Standard,
        "MPI_Rsend",
    )
}

pub(crate) fn mpi_rsend_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    blocking_send(
        buf,
        count as MPI_Count,
        datatype,
        dest,
        tag,
        comm,
        SendMode::Standard,
        "MPI_Rsend_c",
    )
}

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
        // SAFETY: `c` only starts the send.
        if let Some((c, dest, tag, data)) =
            unsafe { plain_send_args(buf, count, datatype, dest, tag, comm) }
        {
            let id = pt2pt::isend(c, dest, tag, data, SendMode::Standard, comm)
                .map_err(|e| prefix("MPI_Isend", e))?;
            // SAFETY: checked non-null; the caller passes a writable MPI_Request.
            unsafe { request.write(request_handle(id)) };
            return Ok(());
        }
    }
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking_send(
            buf,
            count as MPI_Count,
            datatype,
            dest,
            tag,
            comm,
            request,
            SendMode::Standard,
            "MPI_Isend",
        )
    }
}

pub(crate) unsafe fn mpi_isend_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking_send(
            buf,
            count as MPI_Count,
            datatype,
            dest,
            tag,
            comm,
            request,
            SendMode::Standard,
            "MPI_Isend_c",
        )
    }
}

pub(crate) unsafe fn mpi_issend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking_send(
            buf,
            count as MPI_Count,
            datatype,
            dest,
            tag,
            comm,
            request,
            SendMode::Synchronous,
            "MPI_Issend",
        )
    }
}

pub(crate) unsafe fn mpi_issend_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking_send(
            buf,
            count as MPI_Count,
            datatype,
            dest,
            tag,
            comm,
            request,
            SendMode::Synchronous,
            "MPI_Issend_c",
        )
    }
}

pub(crate) unsafe fn mpi_irsend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking_send(
            buf,
            count as MPI_Count,
            datatype,
            dest,
            tag,
            comm,
            request,
            SendMode::Standard,
            "MPI_Irsend",
        )
    }
}

pub(crate) unsafe fn mpi_irsend_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking_send(
            buf,
            count as MPI_Count,
            datatype,
            dest,
            tag,
            comm,
            request,
            SendMode::Standard,
            "MPI_Irsend_c",
        )
    }
}

pub(crate) unsafe fn mpi_recv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    if let Some(a) = plain_recv_args(buf, count, datatype, source, tag, comm) {
        let s = pt2pt::recv(&a.comm, a.source, a.tag, a.buf);
        // SAFETY: as the caller's contract for `status`.
        return unsafe { finish_recv(s, status, "MPI_Recv") };
    }
    // SAFETY: forwarded caller contract.
    unsafe {
        blocking_recv(
            buf,
            count as MPI_Count,
            datatype,
            source,
            tag,
            comm,
            status,
            "MPI_Recv",
        )
    }
}

pub(crate) unsafe fn mpi_recv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        blocking_recv(
            buf,
            count as MPI_Count,
            datatype,
            source,
            tag,
            comm,
            status,
            "MPI_Recv_c",
        )
    }
}

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
        if let Some(a) = plain_recv_args(buf, count, datatype, source, tag, comm) {
            let id = pt2pt::irecv(&a.comm, a.source, a.tag, a.buf, comm);
            // SAFETY: checked non-null; the caller passes a writable MPI_Request.
            unsafe { request.write(request_handle(id)) };
            return Ok(());
        }
    }
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking_recv(
            buf,
            count as MPI_Count,
            datatype,
            source,
            tag,
            comm,
            request,
            "MPI_Irecv",
        )
    }
}

pub(crate) unsafe fn mpi_irecv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking_recv(
            buf,
            count as MPI_Count,
            datatype,
            source,
            tag,
            comm,
            request,
            "MPI_Irecv_c",
        )
    }
}

unsafe fn sendrecv(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    out: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    let c = objects::comm(comm, func, "comm")?;
    let sbuf = message_buf(sendbuf, sendcount, sendtype, func)?;
    let rbuf = message_buf(recvbuf, recvcount, recvtype, func)?;
    let dest = dest_rank(&c, dest, func)?;
    let sendtag = send_tag(sendtag, func)?;
    let recvtag = recv_tag(recvtag, func)?;
    let source = source_sel(&c, source, func)?;
    // Post the receive first so the exchange cannot deadlock with a peer doing the same.
    let rreq = source.map(|src| pt2pt::irecv(&c, src, recvtag, rbuf, comm));
    if let Some(d) = dest {
        pt2pt::send(&c, d, sendtag, sbuf, SendMode::Standard).map_err(|e| prefix(func, e))?;
    }
    let s = match rreq {
        None => Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG),
        Some(id) => weft_core::progress::wait(&c.session.instance, id).status,
    };
    // SAFETY: as the caller's contract for `out`.
    unsafe { finish_recv(s, out, func) }
}

pub(crate) unsafe fn mpi_sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        sendrecv(
            sendbuf,
            sendcount.into(),
            sendtype,
            dest,
            sendtag,
            recvbuf,
            recvcount.into(),
            recvtype,
            source,
            recvtag,
            comm,
            status,
            "MPI_Sendrecv",
        )
    }
}

pub(crate) unsafe fn mpi_sendrecv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        sendrecv(
            sendbuf,
            sendcount,
            sendtype,
            dest,
            sendtag,
            recvbuf,
            recvcount,
            recvtype,
            source,
            recvtag,
            comm,
            status,
            "MPI_Sendrecv_c",
        )
    }
}

unsafe fn sendrecv_replace(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    out: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    let b = message_buf(buf, count, datatype, func)?;
    // Send from a copy so the receive may land in the user's buffer meanwhile.
    let mut copy = vec![0u8; b.len()];
    b.pack(0, &mut copy);
    // SAFETY: forwarded caller contract; `copy` outlives the exchange.
    unsafe {
        sendrecv(
            copy.as_ptr().cast(),
            b.len() as MPI_Count,
            MPI_BYTE,
            dest,
            sendtag,
            buf,
            count,
            datatype,
            source,
            recvtag,
            comm,
            out,
            func,
        )
    }
}

pub(crate) unsafe fn mpi_sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        sendrecv_replace(
            buf,
            count.into(),
            datatype,
            dest,
            sendtag,
            source,
            recvtag,
            comm,
            status,
            "MPI_Sendrecv_replace",
        )
    }
}

pub(crate) unsafe fn mpi_sendrecv_replace_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        sendrecv_replace(
            buf,
            count,
            datatype,
            dest,
            sendtag,
            source,
            recvtag,
            comm,
            status,
            "MPI_Sendrecv_replace_c",
        )
    }
}

unsafe fn probe_impl(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: Option<*mut c_int>,
    out: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    let c = objects::comm(comm, func, "comm")?;
    let tag = recv_tag(tag, func)?;
    if let Some(f) = flag {
        non_null(f, func, "flag")?;
    }
    let found = match source_sel(&c, source, func)? {
        None => Some(Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG)),
        Some(src) if flag.is_some() => pt2pt::iprobe(&c, src, tag),
        Some(src) => Some(pt2pt::probe(&c, src, tag)),
    };
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

// ------------------------------------------------------------------ persistent requests

/// Which send a persistent request repeats.
#[derive(Clone, Copy, PartialEq, Eq)]
enum InitMode {
    Standard,
    Synchronous,
    Buffered,
}

#[allow(clippy::too_many_arguments)]
unsafe fn send_init(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
    mode: InitMode,
    func: &str,
) -> MpiResult<()> {
    non_null(request, func, "request")?;
    let a = send_args(buf, count, datatype, dest, tag, comm, func)?;
    let op = match a.dest {
        None => PersistentOp::Null(Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG)),
        Some(d) if mode == InitMode::Buffered => {
            let (comm, tag, buf) = (a.comm.to_arc(), a.tag, a.buf);
            // Each start copies the message into the attached buffer and sends it from there.
            PersistentOp::Deferred(StartFn::new(move |func| {
                crate::api::buffered::buffered_send(&comm, 0, d, tag, &buf, func).map(|()| None)
            }))
        }
        Some(d) => PersistentOp::Send {
            target: a.comm.target(d, a.tag).map_err(|e| prefix(func, e))?,
            buf: a.buf,
            mode: if mode == InitMode::Synchronous {
                SendMode::Synchronous
            } else {
                SendMode::Standard
            },
        },
    };
    let id = progress::persistent::init(&a.comm.session.instance, a.comm.vci, op, comm);
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(request_handle(id)) };
    Ok(())
}

pub(crate) unsafe fn mpi_send_init(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        send_init(
            buf,
            count.into(),
            datatype,
            dest,
            tag,
            comm,
            request,
            InitMode::Standard,
            "MPI_Send_init",
        )
    }
}

pub(crate) unsafe fn mpi_send_init_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        send_init(
            buf,
            count,
            datatype,
            dest,
            tag,
            comm,
            request,
            InitMode::Standard,
            "MPI_Send_init_c",
        )
    }
}

pub(crate) unsafe fn mpi_ssend_init(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        send_init(
            buf,
            count.into(),
            datatype,
            dest,
            tag,
            comm,
            request,
            InitMode::Synchronous,
            "MPI_Ssend_init",
        )
    }
}

pub(crate) unsafe fn mpi_ssend_init_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        send_init(
            buf,
            count,
            datatype,
            dest,
            tag,
            comm,
            request,
            InitMode::Synchronous,
            "MPI_Ssend_init_c",
        )
    }
}

pub(crate) unsafe fn mpi_rsend_init(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        send_init(
            buf,
            count.into(),
            datatype,
            dest,
            tag,
            comm,
            request,
            InitMode::Standard,
            "MPI_Rsend_init",
        )
    }
}

pub(crate) unsafe fn mpi_rsend_init_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        send_init(
            buf,
            count,
            datatype,
            dest,
            tag,
            comm,
            request,
            InitMode::Standard,
            "MPI_Rsend_init_c",
        )
    }
}

pub(crate) unsafe fn mpi_bsend_init(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        send_init(
            buf,
            count.into(),
            datatype,
            dest,
            tag,
            comm,
            request,
            InitMode::Buffered,
            "MPI_Bsend_init",
        )
    }
}

pub(crate) unsafe fn mpi_bsend_init_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        send_init(
            buf,
            count,
            datatype,
            dest,
            tag,
            comm,
            request,
            InitMode::Buffered,
            "MPI_Bsend_init_c",
        )
    }
}

#[allow(clippy::too_many_arguments)]
unsafe fn recv_init(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    non_null(request, func, "request")?;
    let c = objects::comm(comm, func, "comm")?;
    let b = message_buf(buf, count, datatype, func)?;
    let tag = recv_tag(tag, func)?;
    let op = match source_sel(&c, source, func)? {
        None => PersistentOp::Null(Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG)),
        Some(src) => PersistentOp::Recv {
            pattern: Pattern::new(c.context_id(), src, tag),
            buf: b,
        },
    };
    let id = progress::persistent::init(&c.session.instance, c.vci, op, comm);
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(request_handle(id)) };
    Ok(())
}

pub(crate) unsafe fn mpi_recv_init(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        recv_init(
            buf,
            count.into(),
            datatype,
            source,
            tag,
            comm,
            request,
            "MPI_Recv_init",
        )
    }
}

pub(crate) unsafe fn mpi_recv_init_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        recv_init(
            buf,
            count,
            datatype,
            source,
            tag,
            comm,
            request,
            "MPI_Recv_init_c",
        )
    }
}

// ------------------------------------------------------------------ buffered sends

unsafe fn bsend_impl(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: Option<*mut MPI_Request>,
    func: &str,
) -> MpiResult<()> {
    if let Some(r) = request {
        non_null(r, func, "request")?;
    }
    let a = send_args(buf, count, datatype, dest, tag, comm, func)?;
    if let Some(d) = a.dest {
        crate::api::buffered::buffered_send(&a.comm.to_arc(), comm, d, a.tag, &a.buf, func)?;
    }
    if let Some(r) = request {
        // The message is in the attached buffer (or went nowhere): the request is complete.
        let handle = completed_request(&a.comm, Status::default(), comm);
        // SAFETY: checked non-null above.
        unsafe { r.write(handle) };
    }
    Ok(())
}

pub(crate) unsafe fn mpi_bsend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        bsend_impl(
            buf,
            count.into(),
            datatype,
            dest,
            tag,
            comm,
            None,
            "MPI_Bsend",
        )
    }
}

pub(crate) unsafe fn mpi_bsend_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { bsend_impl(buf, count, datatype, dest, tag, comm, None, "MPI_Bsend_c") }
}

pub(crate) unsafe fn mpi_ibsend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        bsend_impl(
            buf,
            count.into(),
            datatype,
            dest,
            tag,
            comm,
            Some(request),
            "MPI_Ibsend",
        )
    }
}

pub(crate) unsafe fn mpi_ibsend_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        bsend_impl(
            buf,
            count,
            datatype,
            dest,
            tag,
            comm,
            Some(request),
            "MPI_Ibsend_c",
        )
    }
}

// ------------------------------------------------------------------ matched probes

/// Messages taken by `MPI_Mprobe`/`MPI_Improbe`, until `MPI_Mrecv`/`MPI_Imrecv` receives them.
pub(crate) static MESSAGES: Table<Mutex<Option<(Arc<Comm>, MPI_Comm, pt2pt::Message)>>> =
    Table::new(Kind::Message);

unsafe fn mprobe_impl(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: Option<*mut c_int>,
    message: *mut MPI_Message,
    out: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    let c = objects::comm(comm, func, "comm")?;
    let tag = recv_tag(tag, func)?;
    if let Some(f) = flag {
        non_null(f, func, "flag")?;
    }
    non_null(message, func, "message")?;
    let found = match source_sel(&c, source, func)? {
        None => Some((
            Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG),
            MPI_MESSAGE_NO_PROC,
        )),
        Some(src) => {
            let got = if flag.is_some() {
                pt2pt::improbe(&c, src, tag)
            } else {
                Some(pt2pt::mprobe(&c, src, tag))
            };
            got.map(|(s, m)| {
                (
                    s,
                    MESSAGES.insert(Arc::new(Mutex::new(Some((c.clone(), comm, m))))),
                )
            })
        }
    };
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
fn take_message(
    handle: MPI_Message,
    func: &str,
) -> MpiResult<Option<(Arc<Comm>, MPI_Comm, pt2pt::Message)>> {
    if handle == MPI_MESSAGE_NO_PROC {
        return Ok(None);
    }
    if handle == MPI_MESSAGE_NULL {
        return Err(MpiError::new(
            ErrorClass::Request,
            format!("{func}(message=MPI_MESSAGE_NULL): a matched message is required"),
        ));
    }
    let slot = MESSAGES.remove(handle).map_err(|why| {
        MpiError::new(
            ErrorClass::Request,
            format!("{func}(message={handle:#x}): message {}", why.describe()),
        )
    })?;
    let taken = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
    Ok(taken)
}

unsafe fn mrecv_impl(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    request: Option<*mut MPI_Request>,
    out: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    non_null(message, func, "message")?;
    if let Some(r) = request {
        non_null(r, func, "request")?;
    }
    let b = message_buf(buf, count, datatype, func)?;
    // SAFETY: checked non-null.
    let handle = unsafe { *message };
    let taken = take_message(handle, func)?;
    // SAFETY: checked non-null.
    unsafe { message.write(MPI_MESSAGE_NULL) };
    let null = Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG);
    match (taken, request) {
        (None, Some(r)) => {
            let inst = crate::objects::instance(func)?;
            let id = weft_core::progress::completed(&inst, 0, null, 0);
            // SAFETY: checked non-null.
            unsafe { r.write(request_handle(id)) };
            Ok(())
        }
        // SAFETY: `out` null or writable per the caller.
        (None, None) => unsafe { finish_recv(null, out, func) },
        (Some((c, comm, m)), Some(r)) => {
            let id = pt2pt::imrecv(&c.session.instance, m, b, comm);
            // SAFETY: checked non-null.
            unsafe { r.write(request_handle(id)) };
            Ok(())
        }
        (Some((c, comm, m)), None) => {
            let inst = &c.session.instance;
            let id = pt2pt::imrecv(inst, m, b, comm);
            let s = weft_core::progress::wait(inst, id).status;
            // SAFETY: `out` null or writable per the caller.
            unsafe { finish_recv(s, out, func) }
        }
    }
}

pub(crate) unsafe fn mpi_mrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        mrecv_impl(
            buf,
            count.into(),
            datatype,
            message,
            None,
            status,
            "MPI_Mrecv",
        )
    }
}

pub(crate) unsafe fn mpi_mrecv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { mrecv_impl(buf, count, datatype, message, None, status, "MPI_Mrecv_c") }
}

pub(crate) unsafe fn mpi_imrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        mrecv_impl(
            buf,
            count.into(),
            datatype,
            message,
            Some(request),
            std::ptr::null_mut(),
            "MPI_Imrecv",
        )
    }
}

pub(crate) unsafe fn mpi_imrecv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        mrecv_impl(
            buf,
            count,
            datatype,
            message,
            Some(request),
            std::ptr::null_mut(),
            "MPI_Imrecv_c",
        )
    }
}

// ------------------------------------------------------------------ nonblocking send-receive

#[allow(clippy::too_many_arguments)]
unsafe fn isendrecv_impl(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
    replace: bool,
    func: &str,
) -> MpiResult<()> {
    non_null(request, func, "request")?;
    let c = objects::comm(comm, func, "comm")?;
    let rbuf = message_buf(recvbuf, recvcount, recvtype, func)?;
    let mut sbuf = if replace {
        Buf::EMPTY
    } else {
        message_buf(sendbuf, sendcount, sendtype, func)?
    };
    let dest = dest_rank(&c, dest, func)?;
    let sendtag = send_tag(sendtag, func)?;
    let recvtag = recv_tag(recvtag, func)?;
    let source = source_sel(&c, source, func)?;
    let mut keep: Option<Box<dyn std::any::Any + Send>> = None;
    if replace && dest.is_some() {
        // Send from a copy so the receive may land in the user's buffer meanwhile; the
        // schedule owns the copy until it completes.
        let mut copy = vec![0u8; rbuf.len()].into_boxed_slice();
        rbuf.pack(0, &mut copy);
        // SAFETY: the boxed copy moves into the schedule (its heap block does not move) and
        // lives until the schedule completes, after the send finished.
        sbuf = unsafe { Buf::new(copy.as_ptr() as usize, copy.len()) };
        keep = Some(Box::new(copy));
    }
    let id = pt2pt::isendrecv(
        &c,
        dest.map(|d| (d, sendtag, sbuf)),
        source.map(|s| (s, recvtag, rbuf)),
        Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG),
        keep,
        comm,
    )
    .map_err(|e| prefix(func, e))?;
    // SAFETY: checked non-null.
    unsafe { request.write(request_handle(id)) };
    Ok(())
}

pub(crate) unsafe fn mpi_isendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        isendrecv_impl(
            sendbuf,
            sendcount.into(),
            sendtype,
            dest,
            sendtag,
            recvbuf,
            recvcount.into(),
            recvtype,
            source,
            recvtag,
            comm,
            request,
            false,
            "MPI_Isendrecv",
        )
    }
}

pub(crate) unsafe fn mpi_isendrecv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        isendrecv_impl(
            sendbuf,
            sendcount,
            sendtype,
            dest,
            sendtag,
            recvbuf,
            recvcount,
            recvtype,
            source,
            recvtag,
            comm,
            request,
            false,
            "MPI_Isendrecv_c",
        )
    }
}

pub(crate) unsafe fn mpi_isendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        isendrecv_impl(
            buf,
            count.into(),
            datatype,
            dest,
            sendtag,
            buf,
            count.into(),
            datatype,
            source,
            recvtag,
            comm,
            request,
            true,
            "MPI_Isendrecv_replace",
        )
    }
}

pub(crate) unsafe fn mpi_isendrecv_replace_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        isendrecv_impl(
            buf,
            count,
            datatype,
            dest,
            sendtag,
            buf,
            count,
            datatype,
            source,
            recvtag,
            comm,
            request,
            true,
            "MPI_Isendrecv_replace_c",
        )
    }
}
