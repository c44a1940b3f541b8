//! MPIX streams (seed 000): `MPIX_Stream_create`/`free`, stream communicators, the
//! point-to-point operations between named streams, and progress control
//! (`MPIX_Stream_progress`, `MPIX_Start_progress_thread`/`MPIX_Stop_progress_thread`). The
//! model is `weft_core::object::stream`'s; here are handles and argument checks.

use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex, Weak};

use weft_core::error::{MpiError, MpiResult};
use weft_core::message::Status;
use weft_core::mpi_err;
use weft_core::object::offload::{HostQueue, OffloadQueue};
use weft_core::object::stream::Stream;
use weft_core::object::stream_comm;
use weft_core::object::Info;
use weft_core::progress;
use weft_core::progress::thread::{ProgressThread, Scope};
use weft_core::pt2pt;
use weft_core::vci::engine::SendStart;

use crate::api::family::Mode;
use crate::api::pt2pt::{dest_rank, message_buf, prefix, recv_tag, send_tag, source_sel};
use crate::api::recv::finish_recv;
use crate::args::{non_null, Int};
use crate::constants::*;
use crate::ctypes::*;
use crate::cuda::CudaQueue;
use crate::handles::{Kind, Table};
use crate::objects::{self, comm_handle};
use crate::requests::{completed_request, request_handle};

pub(crate) static STREAMS: Table<Stream> = Table::new(Kind::Stream);

/// The offload streams created so far (dead entries are dropped at each creation, so it
/// holds about the live ones): `MPI_Finalize` waits for their queues.
static OFFLOAD_STREAMS: Mutex<Vec<Weak<Stream>>> = Mutex::new(Vec::new());

/// The progress thread of the implicit VCIs (`MPIX_Start_progress_thread(MPIX_STREAM_NULL)`).
static IMPLICIT_PROGRESS: Mutex<Option<ProgressThread>> = Mutex::new(None);

/// The stream a handle names (`MPIX_STREAM_NULL` is refused).
fn stream(handle: MPIX_Stream, func: &str, arg: &str) -> MpiResult<Arc<Stream>> {
    if handle == MPIX_STREAM_NULL {
        return Err(mpi_err!(
            Arg,
            "{func}({arg}=MPIX_STREAM_NULL): a stream is required"
        ));
    }
    STREAMS
        .get(handle)
        .map_err(|why| mpi_err!(Arg, "{func}({arg}={handle:#x}): stream {}", why.describe()))
}

/// The stream a handle names, `None` for `MPIX_STREAM_NULL`.
fn stream_or_null(handle: MPIX_Stream, func: &str, arg: &str) -> MpiResult<Option<Arc<Stream>>> {
    if handle == MPIX_STREAM_NULL {
        return Ok(None);
    }
    stream(handle, func, arg).map(Some)
}

/// # Safety
/// `out` is null or a writable `MPIX_Stream`.
pub(crate) unsafe fn mpix_stream_create(info: MPI_Info, out: *mut MPIX_Stream) -> MpiResult<()> {
    let func = "MPIX_Stream_create";
    non_null(out, func, "stream")?;
    let inst = objects::instance(func)?;
    let queue = if info != MPI_INFO_NULL {
        offload_queue(&*objects::info_object(info, func)?, func)?
    } else {
        None
    };
    let s = match queue {
        Some(q) => {
            let s = Stream::create_offload(&inst, q, func)?;
            let mut live = OFFLOAD_STREAMS.lock().unwrap_or_else(|p| p.into_inner());
            live.retain(|w| w.strong_count() > 0);
            live.push(Arc::downgrade(&s));
            s
        }
        None => Stream::create(&inst, func)?,
    };
    let handle = STREAMS.insert(s.clone());
    let _ = s.handle.set(handle);
    // SAFETY: checked non-null.
    unsafe { out.write(handle) };
    Ok(())
}

/// The offload queue a stream's info asks for (key `type`), if any.
fn offload_queue(info: &Info, func: &str) -> MpiResult<Option<Box<dyn OffloadQueue>>> {
    let Some(kind) = info.get("type") else {
        return Ok(None);
    };
    match kind.as_str() {
        "weft_host_queue" => Ok(Some(Box::new(HostQueue::start(func)?))),
        "cudaStream_t" => {
            let value = info.get("value").ok_or_else(|| {
                mpi_err!(
                    InfoNokey,
                    "{func}(info): type \"cudaStream_t\" needs key \"value\": the stream, \
                         set with MPIX_Info_set_hex"
                )
            })?;
            let bytes = decode_hex(&value).filter(|b| b.len() == size_of::<usize>());
            let Some(bytes) = bytes else {
                return Err(mpi_err!(
                    InfoValue,
                    "{func}(info): key \"value\" is not a cudaStream_t ({} bytes) set with \
                         MPIX_Info_set_hex: \"{value}\"",
                    size_of::<usize>()
                ));
            };
            let stream = usize::from_ne_bytes(bytes.try_into().expect("length checked"));
            let cuda = crate::cuda::runtime().ok_or_else(|| {
                mpi_err!(
                    UnsupportedOperation,
                    "{func}(info): type \"cudaStream_t\": the CUDA runtime was not found \
                         (libcudart.so with a device; see weft-info); \"weft_host_queue\" is \
                         a CPU stand-in"
                )
            })?;
            Ok(Some(Box::new(CudaQueue::new(cuda, stream))))
        }
        other => Err(mpi_err!(
            InfoValue,
            "{func}(info): stream type \"{other}\" is not known: \"weft_host_queue\" or \
                 \"cudaStream_t\" (or no \"type\" for a CPU stream)"
        )),
    }
}

/// The bytes of an `MPIX_Info_set_hex` value: two hex digits per byte, in memory order;
/// MPICH's `[n]` (n zero bytes) is read too.
pub(crate) fn decode_hex(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'[' {
            let end = i + s[i..].find(']')?;
            let n: usize = s[i + 1..end].parse().ok()?;
            out.resize(out.len() + n, 0);
            i = end + 1;
            continue;
        }
        let hi = (*b.get(i)? as char).to_digit(16)?;
        let lo = (*b.get(i + 1)? as char).to_digit(16)?;
        out.push((hi * 16 + lo) as u8);
        i += 2;
    }
    Some(out)
}

/// `MPIX_Info_set_hex`'s encoding: two upper-case hex digits per byte, in memory order.
pub(crate) fn encode_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// # Safety
/// `handle` is null or a readable and writable `MPIX_Stream`.
pub(crate) unsafe fn mpix_stream_free(handle: *mut MPIX_Stream) -> MpiResult<()> {
    let func = "MPIX_Stream_free";
    non_null(handle, func, "stream")?;
    // SAFETY: checked non-null.
    let h = unsafe { *handle };
    let s = stream(h, func, "stream")?;
    let n = s.attached();
    if n > 0 {
        return Err(mpi_err!(
            Other,
            "{func}(stream={h:#x}): the stream is attached to {n} communicator{} not yet \
                 freed: free {} first",
            if n == 1 { "" } else { "s" },
            if n == 1 { "it" } else { "them" }
        ));
    }
    // An offload stream's queued work runs first (its pending error is reported below).
    if let Some(q) = s.offload() {
        q.synchronize(func)?;
    }
    let pending = s.take_error();
    drop(s);
    // Dropping the last reference stops a progress thread still running and frees the VCI.
    STREAMS
        .remove(h)
        .map_err(|why| mpi_err!(Arg, "{func}(stream={h:#x}): stream {}", why.describe()))?;
    // SAFETY: checked non-null.
    unsafe { handle.write(MPIX_STREAM_NULL) };
    match pending {
        None => Ok(()),
        // The communicator's errhandler saw it when it happened: this report goes to the
        // call's own (errors without an object).
        Some((_, e)) => Err(MpiError {
            message: format!("{func}: a queued operation failed: {}", e.message),
            ..e
        }),
    }
}

/// `MPIX_Stream_synchronize` (Weft's): wait until everything queued on the stream so far
/// has run, and report the first error a queued operation had since the last report. A
/// stream without a queue has nothing queued.
pub(crate) fn mpix_stream_synchronize(stream_h: MPIX_Stream) -> MpiResult<()> {
    let func = "MPIX_Stream_synchronize";
    let s = stream(stream_h, func, "stream")?;
    let Some(q) = s.offload() else {
        return Ok(());
    };
    q.synchronize(func)?;
    match s.take_error() {
        None => Ok(()),
        // The communicator's errhandler saw it when it happened: this report goes to the
        // call's own (errors without an object).
        Some((_, e)) => Err(MpiError {
            message: format!("{func}: a queued operation failed: {}", e.message),
            ..e
        }),
    }
}

/// `MPIX_Stream_enqueue_host_fn` (Weft's): queue `fn_(data)` on an offload stream, in
/// order with its MPI operations (CUDA's `cudaLaunchHostFunc`). The function must not
/// wait for the stream.
pub(crate) fn mpix_stream_enqueue_host_fn(
    stream_h: MPIX_Stream,
    fn_: Option<MPIX_Host_function>,
    data: *mut c_void,
) -> MpiResult<()> {
    let func = "MPIX_Stream_enqueue_host_fn";
    let s = stream(stream_h, func, "stream")?;
    let Some(f) = fn_ else {
        return Err(mpi_err!(Arg, "{func}(fn=NULL): a function is required"));
    };
    let q = s.offload().ok_or_else(|| {
        mpi_err!(
            Arg,
            "{func}(stream={stream_h:#x}): not an offload stream (create it with info \
                 \"type\")"
        )
    })?;
    let data = data as usize;
    q.enqueue(
        Box::new(move || {
            // SAFETY: the program's function and its argument, called as it asked.
            unsafe { f(data as *mut c_void) }
        }),
        func,
    )
}

/// `MPIX_Stream_comm_create` and `_multiplex` once the streams are known.
///
/// # Safety
/// `newcomm` is null or a writable `MPI_Comm`.
unsafe fn comm_create(
    comm: MPI_Comm,
    local: Vec<Option<Arc<Stream>>>,
    multiplex: bool,
    newcomm: *mut MPI_Comm,
    func: &str,
) -> MpiResult<()> {
    let parent = objects::comm(comm, func, "comm")?;
    let new = stream_comm::comm_create(&parent, local, multiplex, func)?;
    // SAFETY: checked non-null by the callers.
    unsafe { newcomm.write(comm_handle(Some(new))) };
    Ok(())
}

/// # Safety
/// `newcomm` is null or a writable `MPI_Comm`.
pub(crate) unsafe fn mpix_stream_comm_create(
    comm: MPI_Comm,
    stream: MPIX_Stream,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPIX_Stream_comm_create";
    non_null(newcomm, func, "newcomm")?;
    let local = stream_or_null(stream, func, "stream")?;
    // SAFETY: checked non-null.
    unsafe {
        comm_create(
            comm,
            local.into_iter().map(Some).collect(),
            false,
            newcomm,
            func,
        )
    }
}

/// # Safety
/// `streams` holds `count` handles; `newcomm` is null or a writable `MPI_Comm`.
pub(crate) unsafe fn mpix_stream_comm_create_multiplex(
    comm: MPI_Comm,
    count: c_int,
    streams: *mut MPIX_Stream,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPIX_Stream_comm_create_multiplex";
    non_null(newcomm, func, "newcomm")?;
    if !(0..=254).contains(&count) {
        return Err(mpi_err!(
            Count,
            "{func}(count={count}): a process attaches 0 to 254 streams"
        ));
    }
    if count > 0 {
        non_null(streams, func, "array_of_streams")?;
    }
    let mut local: Vec<Option<Arc<Stream>>> = Vec::with_capacity(count as usize);
    for i in 0..count as usize {
        // SAFETY: the caller's contract: `count` readable handles.
        let h = unsafe { *streams.add(i) };
        let s = stream_or_null(h, func, &format!("array_of_streams[{i}]"))?;
        let seen =
            |o: &Option<Arc<Stream>>| matches!((o, &s), (Some(a), Some(b)) if Arc::ptr_eq(a, b));
        if local.iter().any(seen) {
            return Err(mpi_err!(
                Arg,
                "{func}(array_of_streams[{i}]): the stream is already in the array"
            ));
        }
        local.push(s);
    }
    // SAFETY: checked non-null.
    unsafe { comm_create(comm, local, true, newcomm, func) }
}

/// # Safety
/// `out` is null or a writable `MPIX_Stream`.
pub(crate) unsafe fn mpix_comm_get_stream(
    comm: MPI_Comm,
    idx: c_int,
    out: *mut MPIX_Stream,
) -> MpiResult<()> {
    let func = "MPIX_Comm_get_stream";
    non_null(out, func, "stream")?;
    let c = objects::comm_local(comm, func, "comm")?;
    let local = c.streams.as_ref().map_or(&[][..], |s| s.local());
    let handle = match usize::try_from(idx).ok().and_then(|i| local.get(i)) {
        Some(Some(s)) => stream_handle(s),
        Some(None) => MPIX_STREAM_NULL,
        // A communicator without streams (or a member that attached MPIX_STREAM_NULL) has
        // the null stream at index 0, as MPICH answers.
        None if idx == 0 && local.is_empty() => MPIX_STREAM_NULL,
        None => {
            return Err(mpi_err!(
                Arg,
                "{func}(idx={idx}): this process attached {} stream{} to the communicator",
                local.len(),
                if local.len() == 1 { "" } else { "s" }
            ))
        }
    };
    // SAFETY: checked non-null.
    unsafe { out.write(handle) };
    Ok(())
}

/// The handle of a stream attached to a communicator (a stream cannot be freed while
/// attached, so its handle is still valid).
fn stream_handle(s: &Stream) -> MPIX_Stream {
    s.handle.get().copied().unwrap_or(MPIX_STREAM_NULL)
}

/// `MPIX_Stream_send`/`isend` and their `_c` twins (a family: `api/family.rs`).
///
/// # Safety
/// The buffer holds `count` elements of `datatype`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn stream_send(
    buf: *const c_void,
    count: impl Int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    source_stream_index: c_int,
    dest_stream_index: c_int,
    func: &str,
    mode: Mode,
) -> MpiResult<MPI_Request> {
    let c = objects::comm_ref(comm, func, "comm")?;
    // SAFETY: forwarded caller contract.
    let b = unsafe { message_buf(buf, count.get(), datatype, func) }?;
    let tag = send_tag(tag, func)?;
    let Some(d) = dest_rank(&c, dest, func)? else {
        let null = Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG);
        return Ok(match mode {
            Mode::Blocking => MPI_REQUEST_NULL,
            _ => completed_request(&c, null, comm),
        });
    };
    let lane = stream_comm::send_lane(&c, source_stream_index, d, dest_stream_index, func)?;
    let owner = match mode {
        Mode::Blocking => None,
        Mode::Nonblocking(c) | Mode::Persistent(c) => Some(c),
    };
    match pt2pt::start_stream_send(&c, d, tag, b, lane, owner).map_err(|e| prefix(func, e))? {
        SendStart::Pending(id) if owner.is_some() => Ok(request_handle(id)),
        SendStart::Pending(id) => {
            pt2pt::wait_send(&c.session.instance, id).map_err(|e| prefix(func, e))?;
            Ok(MPI_REQUEST_NULL)
        }
        SendStart::Done => Ok(MPI_REQUEST_NULL),
    }
}

/// `MPIX_Stream_recv`/`irecv` and their `_c` twins (a family: `api/family.rs`); the
/// status is the blocking form's.
///
/// # Safety
/// The buffer holds `count` elements of `datatype`; `status` is null or writable.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn stream_recv(
    buf: *mut c_void,
    count: impl Int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    source_stream_index: c_int,
    dest_stream_index: c_int,
    status: *mut MPI_Status,
    func: &str,
    mode: Mode,
) -> MpiResult<MPI_Request> {
    let c = objects::comm_ref(comm, func, "comm")?;
    // SAFETY: forwarded caller contract.
    let b = unsafe { message_buf(buf, count.get(), datatype, func) }?;
    let tag = recv_tag(tag, func)?;
    let Some(src) = source_sel(&c, source, func)? else {
        let null = Status::proc_null(MPI_PROC_NULL, MPI_ANY_TAG);
        return match mode {
            // SAFETY: forwarded caller contract for the status.
            Mode::Blocking => unsafe { finish_recv(null, status, func) }.map(|_| MPI_REQUEST_NULL),
            _ => Ok(completed_request(&c, null, comm)),
        };
    };
    let rank = match src {
        weft_core::message::SourceSel::Rank(r) => Some(r),
        weft_core::message::SourceSel::Any => None,
    };
    let lane = stream_comm::recv_lane(&c, source_stream_index, rank, dest_stream_index, func)?;
    match mode {
        Mode::Blocking => {
            let got = pt2pt::stream_recv(&c, src, tag, b, lane);
            // SAFETY: forwarded caller contract for the status.
            unsafe { finish_recv(got, status, func) }.map(|_| MPI_REQUEST_NULL)
        }
        _ => Ok(request_handle(pt2pt::stream_irecv(
            &c, src, tag, b, lane, comm,
        ))),
    }
}

// ------------------------------------------------------------------ progress control

/// `MPIX_Stream_progress`: one pass over the stream's VCI, or with `MPIX_STREAM_NULL` over
/// every implicit VCI and the polled work (generalized requests' `poll_fn`s).
pub(crate) fn mpix_stream_progress(stream_h: MPIX_Stream) -> MpiResult<()> {
    let f = "MPIX_Stream_progress";
    match stream_or_null(stream_h, f, "stream")? {
        Some(s) => {
            progress::poke(&s.instance, s.vci);
        }
        None => {
            let inst = objects::instance(f)?;
            progress::progress_all(&inst);
        }
    }
    Ok(())
}

pub(crate) fn mpix_start_progress_thread(stream_h: MPIX_Stream) -> MpiResult<()> {
    let f = "MPIX_Start_progress_thread";
    match stream_or_null(stream_h, f, "stream")? {
        Some(s) => s.start_progress_thread(f),
        None => {
            let inst = objects::instance(f)?;
            let mut slot = IMPLICIT_PROGRESS.lock().unwrap_or_else(|p| p.into_inner());
            // One left from an instance that ended has ended with it.
            if slot.as_ref().is_some_and(|t| t.is_orphan()) {
                *slot = None;
            }
            if slot.is_some() {
                return Err(mpi_err!(Other, "{f}(stream=MPIX_STREAM_NULL): the implicit VCIs already have a progress thread"));
            }
            let t = ProgressThread::start(&inst, Scope::Implicit)
                .map_err(|e| mpi_err!(Other, "{f}: {e}"))?;
            *slot = Some(t);
            Ok(())
        }
    }
}

/// Wait for the queues of the offload streams still alive (`MPI_Finalize`, before the world
/// ends: queued operations need it). An error a queue left is reported here.
pub(crate) fn drain_offload_streams() -> MpiResult<()> {
    let live: Vec<Arc<Stream>> = OFFLOAD_STREAMS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .filter_map(Weak::upgrade)
        .collect();
    let func = "MPI_Finalize";
    let mut first = Ok(());
    for s in live {
        if let Some(q) = s.offload() {
            let r = q.synchronize(func).and_then(|()| match s.take_error() {
                None => Ok(()),
                Some((_, e)) => Err(MpiError {
                    message: format!("{func}: a queued operation failed: {}", e.message),
                    ..e
                }),
            });
            if first.is_ok() {
                first = r;
            }
        }
    }
    first
}

/// Stop the implicit VCIs' progress thread, if one runs (`MPI_Finalize`, before the world
/// ends).
pub(crate) fn stop_implicit_progress() {
    let t = IMPLICIT_PROGRESS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    drop(t);
}

pub(crate) fn mpix_stop_progress_thread(stream_h: MPIX_Stream) -> MpiResult<()> {
    let f = "MPIX_Stop_progress_thread";
    match stream_or_null(stream_h, f, "stream")? {
        Some(s) => s.stop_progress_thread(f),
        None => {
            let t = IMPLICIT_PROGRESS
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            match t {
                Some(t) => {
                    t.stop();
                    Ok(())
                }
                None => Err(mpi_err!(
                    Other,
                    "{f}(stream=MPIX_STREAM_NULL): no progress thread runs on the implicit VCIs"
                )),
            }
        }
    }
}
