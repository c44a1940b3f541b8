//! Enqueue onto offload streams (seed 000; docs/enqueue.md): `MPIX_Send_enqueue` and the
//! other `*_enqueue` functions check their arguments now, on the calling thread, and queue
//! the operation on the communicator's offload stream (`weft_core::object::offload`), where
//! it runs later as the blocking operation of the same arguments, in stream order. The
//! calling thread never waits. `MPIX_Stream_synchronize` waits for the queue;
//! `MPIX_Stream_enqueue_host_fn` queues a function of the program's.
//!
//! A queued operation that fails is reported twice, never lost: through its communicator's
//! errhandler when it runs, and by the next `MPIX_Wait_enqueue`/`MPIX_Waitall_enqueue`/
//! `MPIX_Stream_synchronize` on the stream (`Stream::record_error`).
//!
//! Buffers, statuses and handles cross to the queue's thread as addresses (`usize`): the
//! program keeps them valid until the operation has run, the rule of every offload queue.
//! A CUDA stream's device buffers are staged through host memory (`cuda_stage`).

use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::mpi_err;
use weft_core::object::stream::Stream;
use weft_core::object::stream_comm::offload_stream;
use weft_core::object::Comm;

use crate::api::coll::{self, AllKind};
use crate::api::coll_data::Exchange;
use crate::api::cuda_stage::{self, Access, Staged, Staging};
use crate::api::family::Mode;
use crate::api::pt2pt::{self, dest_rank, recv_tag, send_tag, source_sel, SendKind};
use crate::api::recv;
use crate::api::requests::{mpi_wait, mpi_waitall};
use crate::args::{index_below, non_null, Int};
use crate::boundary::{self, Scope};
use crate::constants::*;
use crate::ctypes::*;
use crate::handles::{Kind, Table};
use crate::{datatypes, objects, status};

/// What `MPIX_Isend_enqueue`/`MPIX_Irecv_enqueue` return: the request the queued start
/// will create, known only once it ran.
pub(crate) struct EnqueuedRequest {
    stream: Arc<Stream>,
    comm: MPI_Comm,
    /// The started operation's request (`MPI_REQUEST_NULL` until the start ran).
    started: AtomicUsize,
    /// A device buffer's staging on a CUDA stream: finished (copied back, blocks returned)
    /// after the queued wait.
    staging: Mutex<Option<Staging>>,
}

static ENQUEUED: Table<EnqueuedRequest> = Table::new(Kind::EnqueuedRequest);

/// The communicator and its offload stream; `MPI_ERR_COMM` for any other communicator.
fn offload_comm(comm: MPI_Comm, func: &str) -> MpiResult<(Arc<Comm>, Arc<Stream>)> {
    let c = objects::comm(comm, func, "comm")?;
    let s = offload_stream(&c).cloned().ok_or_else(|| {
        mpi_err!(
            Comm,
            "{func}(comm): the communicator has no offload stream: create it with \
                 MPIX_Stream_comm_create from a stream made with info \"type\" \
                 (\"weft_host_queue\" or \"cudaStream_t\")"
        )
    })?;
    Ok((c, s))
}

/// A count and datatype a queued operation will use: checked now.
fn check_data(count: i64, datatype: MPI_Datatype, func: &str, what: &str) -> MpiResult<()> {
    if count < 0 {
        return Err(mpi_err!(
            Count,
            "{func}({what}count={count}): negative count"
        ));
    }
    if count == 0 && datatype == MPI_DATATYPE_NULL {
        return Ok(());
    }
    datatypes::committed_ref(datatype, func, &format!("{what}type")).map(|_| ())
}

/// An op a queued reduction will use: checked now.
fn check_op(op: MPI_Op, func: &str) -> MpiResult<()> {
    if crate::api::op::predefined(op).is_some() {
        return Ok(());
    }
    crate::api::op::user_op(op, func).map(|_| ())
}

/// A root a queued collective will use: checked now.
fn check_root(c: &Comm, root: c_int, func: &str) -> MpiResult<()> {
    let what = (ErrorClass::Root, "a rank of the communicator");
    index_below(root, c.peer_size() as usize, what, func, "root").map(|_| ())
}

/// Queue `op` on `stream`: it runs on the queue's thread, and its error goes to `comm`'s
/// errhandler there and waits on the stream for the next report. `staged` are the device
/// buffers of a CUDA stream, copied to host memory before `op` and back after it.
fn enqueue(
    stream: &Arc<Stream>,
    comm: MPI_Comm,
    func: &'static str,
    staged: Vec<Staged>,
    op: impl FnOnce(&[Staged]) -> MpiResult<()> + Send + 'static,
) -> MpiResult<()> {
    enqueue_staged(stream, comm, func, staged, op)?.finish(stream, func)
}

/// `enqueue` up to the copies back of the staged buffers: the caller finishes the staging
/// (at once, or after a later queued wait).
fn enqueue_staged(
    stream: &Arc<Stream>,
    comm: MPI_Comm,
    func: &'static str,
    staged: Vec<Staged>,
    op: impl FnOnce(&[Staged]) -> MpiResult<()> + Send + 'static,
) -> MpiResult<Staging> {
    let queue = stream
        .offload()
        .expect("offload_comm returned an offload stream");
    let s = stream.clone();
    let staging = Staging::start(stream, staged, func)?;
    let staged = staging.buffers();
    let queued = queue.enqueue(
        Box::new(move || {
            let r = catch_unwind(AssertUnwindSafe(|| op(&staged))).unwrap_or_else(|_| {
                Err(mpi_err!(
                    Intern,
                    "{func}: internal error in the queued operation"
                ))
            });
            if let Err(e) = r {
                s.record_error(comm, e.clone());
                boundary::raise(Scope::Comm(comm), e);
            }
        }),
        func,
    );
    if let Err(e) = queued {
        staging.abandon(stream);
        return Err(e);
    }
    Ok(staging)
}

/// Report an error a queued operation left on the stream, on its communicator's
/// errhandler.
fn report_queued(stream: &Stream, func: &str) -> MpiResult<()> {
    match stream.take_error() {
        None => Ok(()),
        // The communicator's errhandler saw it when it happened: this report goes to the
        // call's own (errors without an object).
        Some((_, e)) => Err(MpiError {
            message: format!("{func}: a queued operation failed: {}", e.message),
            ..e
        }),
    }
}

/// A buffer a queued operation uses: address, count, datatype and how it is accessed (a
/// CUDA stream stages device buffers by it).
type Piece = (usize, i64, MPI_Datatype, Access);

/// Queue `op` with the host addresses of `pieces`: the buffers themselves, or, on a CUDA
/// stream, the host copies of the device buffers among them.
fn enqueue_on<const K: usize, R>(
    stream: &Arc<Stream>,
    comm: MPI_Comm,
    func: &'static str,
    pieces: [Piece; K],
    op: impl FnOnce([usize; K]) -> MpiResult<R> + Send + 'static,
) -> MpiResult<()> {
    let staged = cuda_stage::buffers(stream, &pieces);
    let addrs = pieces.map(|p| p.0);
    enqueue(stream, comm, func, staged, move |st| {
        let mut host = addrs;
        for (i, a) in host.iter_mut().enumerate() {
            *a = cuda_stage::host_addr(st, i, *a);
        }
        op(host).map(|_| ())
    })
}

/// Queue a point-to-point operation `start` on the buffer of `piece`: the blocking
/// operation when `request` is null, otherwise the start of a request written to
/// `request`, which a queued `MPIX_Wait_enqueue` completes (a device buffer's copy back
/// is queued after that wait).
///
/// # Safety
/// `request` is null or writable.
unsafe fn enqueue_p2p(
    stream: &Arc<Stream>,
    comm: MPI_Comm,
    func: &'static str,
    piece: Piece,
    request: *mut MPI_Request,
    start: impl FnOnce(usize) -> MpiResult<MPI_Request> + Send + 'static,
) -> MpiResult<()> {
    if request.is_null() {
        return enqueue_on(stream, comm, func, [piece], move |[b]| start(b));
    }
    // SAFETY: the caller's contract (not null here).
    let r = unsafe { new_request(stream, comm, request) };
    let (req, addr) = (r.clone(), piece.0);
    let staged = cuda_stage::buffers(stream, &[piece]);
    let staging = enqueue_staged(stream, comm, func, staged, move |st| {
        let b = cuda_stage::host_addr(st, 0, addr);
        req.started.store(start(b)?, Ordering::Release);
        Ok(())
    })?;
    *r.staging.lock().unwrap_or_else(|p| p.into_inner()) = Some(staging);
    Ok(())
}

/// The staging of an enqueued request, taken for its queued wait to finish.
fn take_staging(r: &EnqueuedRequest) -> Option<Staging> {
    r.staging.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// The mode of a queued point-to-point operation: blocking without a request.
fn p2p_mode(comm: MPI_Comm, request: *mut MPI_Request) -> Mode {
    if request.is_null() {
        Mode::Blocking
    } else {
        Mode::Nonblocking(comm)
    }
}

/// Where the form of an enqueued send or receive leaves its result: nothing (`()`, the
/// blocking send), the blocking receive's status, or the nonblocking forms' request (whose
/// queued operation starts the call; a queued `MPIX_Wait_enqueue` completes it).
pub(crate) trait Completion {
    /// `(request, status)`: a null request for the blocking forms.
    fn split(self, func: &str) -> MpiResult<(*mut MPI_Request, *mut MPI_Status)>;
}

impl Completion for () {
    fn split(self, _: &str) -> MpiResult<(*mut MPI_Request, *mut MPI_Status)> {
        Ok((std::ptr::null_mut(), std::ptr::null_mut()))
    }
}

impl Completion for *mut MPI_Status {
    fn split(self, _: &str) -> MpiResult<(*mut MPI_Request, *mut MPI_Status)> {
        Ok((std::ptr::null_mut(), self))
    }
}

impl Completion for *mut MPI_Request {
    fn split(self, func: &str) -> MpiResult<(*mut MPI_Request, *mut MPI_Status)> {
        non_null(self, func, "request")?;
        Ok((self, std::ptr::null_mut()))
    }
}

/// `MPIX_Send_enqueue`, `MPIX_Isend_enqueue` and their `_c` twins (forwarded by api/gen.py).
///
/// # Safety
/// The buffer holds what the count and datatype say until the queued send has run (completed,
/// for the nonblocking form); the request is null or writable.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn send_enqueue<C: Int + Send + 'static>(
    buf: *const c_void,
    count: C,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    done: impl Completion,
    func: &'static str,
) -> MpiResult<()> {
    let (request, _) = done.split(func)?;
    let (c, s) = offload_comm(comm, func)?;
    check_data(count.get(), datatype, func, "")?;
    dest_rank(&c, dest, func)?;
    send_tag(tag, func)?;
    let piece = (buf as usize, count.get(), datatype, Access::Read);
    let mode = p2p_mode(comm, request);
    let start = move |b: usize| {
        // SAFETY: the enqueue contract: the buffer is valid until the send has run.
        unsafe {
            let b = b as *const c_void;
            let kind = SendKind::Standard;
            pt2pt::send(b, count, datatype, dest, tag, comm, func, mode, kind)
        }
    };
    // SAFETY: the caller's contract on `request`.
    unsafe { enqueue_p2p(&s, comm, func, piece, request, start) }
}

/// `MPIX_Recv_enqueue`, `MPIX_Irecv_enqueue` and their `_c` twins (forwarded by api/gen.py).
///
/// # Safety
/// The buffer holds what the count and datatype say, and the status is null or writable,
/// until the queued receive has run (completed, for the nonblocking form); the request is
/// null or writable.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn recv_enqueue<C: Int + Send + 'static>(
    buf: *mut c_void,
    count: C,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    done: impl Completion,
    func: &'static str,
) -> MpiResult<()> {
    let (request, out) = done.split(func)?;
    let (c, s) = offload_comm(comm, func)?;
    check_data(count.get(), datatype, func, "")?;
    source_sel(&c, source, func)?;
    recv_tag(tag, func)?;
    // ReadWrite: what the message does not fill keeps its bytes (`cuda_stage`).
    let piece = (buf as usize, count.get(), datatype, Access::ReadWrite);
    let (mode, out) = (p2p_mode(comm, request), out as usize);
    let start = move |b: usize| {
        // SAFETY: the enqueue contract: buffer and status are valid until the receive ran.
        unsafe {
            let (b, out) = (b as *mut c_void, out as *mut MPI_Status);
            recv::recv(b, count, datatype, source, tag, comm, out, func, mode)
        }
    };
    // SAFETY: the caller's contract on `request`.
    unsafe { enqueue_p2p(&s, comm, func, piece, request, start) }
}

/// A new enqueued request for `comm` on `stream`, written to `request`.
///
/// # Safety
/// `request` is writable (checked non-null by the caller).
unsafe fn new_request(
    stream: &Arc<Stream>,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> Arc<EnqueuedRequest> {
    let r = Arc::new(EnqueuedRequest {
        stream: stream.clone(),
        comm,
        started: AtomicUsize::new(MPI_REQUEST_NULL),
        staging: Mutex::new(None),
    });
    let h = ENQUEUED.insert(r.clone());
    // SAFETY: the caller's contract.
    unsafe { request.write(h) };
    r
}

/// Take an enqueued request out of its handle.
fn take_request(h: MPI_Request, func: &str, arg: &str) -> MpiResult<Arc<EnqueuedRequest>> {
    ENQUEUED.remove(h).map_err(|why| {
        let what = if crate::handles::is_user_handle_of(h, Kind::Request) {
            "a request of a plain MPI call: complete it with MPI_Wait"
        } else {
            why.describe()
        };
        mpi_err!(
            Request,
            "{func}({arg}={h:#x}): not a request of an *_enqueue call: {what}"
        )
    })
}

/// `MPIX_Wait_enqueue`: queue the completion of an enqueued request on its stream. The
/// handle becomes `MPI_REQUEST_NULL` now; the status is written when the wait has run.
/// Reports an error an operation queued earlier on the stream left.
///
/// # Safety
/// `request` is null or a readable and writable handle; `out` is null or a status that
/// stays writable until the wait has run.
pub(crate) unsafe fn mpix_wait_enqueue(
    request: *mut MPI_Request,
    out: *mut MPI_Status,
) -> MpiResult<()> {
    let func = "MPIX_Wait_enqueue";
    non_null(request, func, "request")?;
    // SAFETY: checked non-null.
    let h = unsafe { *request };
    if h == MPI_REQUEST_NULL {
        // SAFETY: null (ignored) or writable.
        unsafe { status::store_empty(out) };
        return Ok(());
    }
    let r = take_request(h, func, "request")?;
    // SAFETY: checked non-null.
    unsafe { request.write(MPI_REQUEST_NULL) };
    let out = out as usize;
    let comm = r.comm;
    let stream = r.stream.clone();
    let staging = take_staging(&r);
    let queued = enqueue(&stream, comm, func, Vec::new(), move |_| {
        let mut started = r.started.load(Ordering::Acquire);
        // SAFETY: the enqueue contract: the status stays writable until the wait ran.
        unsafe { mpi_wait(&mut started, out as *mut MPI_Status) }
    });
    finish_after_wait(&stream, staging, queued, func)?;
    report_queued(&stream, func)
}

/// `MPIX_Waitall_enqueue`: queue the completion of `count` enqueued requests of one
/// stream.
///
/// # Safety
/// `requests` holds `count` handles; `statuses` is null or holds `count` statuses that stay
/// writable until the wait has run.
pub(crate) unsafe fn mpix_waitall_enqueue(
    count: c_int,
    requests: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let func = "MPIX_Waitall_enqueue";
    if count < 0 {
        return Err(mpi_err!(Count, "{func}(count={count}): negative count"));
    }
    if count == 0 {
        return Ok(());
    }
    non_null(requests, func, "array_of_requests")?;
    let handles: Vec<MPI_Request> =
        // SAFETY: `count` readable handles per the caller's contract.
        unsafe { std::slice::from_raw_parts(requests, count as usize) }.to_vec();
    // Check them all before taking any: a failed call leaves the array as it was.
    let mut stream: Option<Arc<Stream>> = None;
    for (i, &h) in handles.iter().enumerate() {
        if h == MPI_REQUEST_NULL {
            continue;
        }
        let r = ENQUEUED.get(h).map_err(|why| {
            mpi_err!(
                Request,
                "{func}(array_of_requests[{i}]={h:#x}): not a request of an *_enqueue \
                     call: {}",
                why.describe()
            )
        })?;
        match &stream {
            Some(s) if !Arc::ptr_eq(s, &r.stream) => {
                return Err(mpi_err!(
                    Request,
                    "{func}(array_of_requests[{i}]): the requests belong to different \
                         offload streams"
                ))
            }
            Some(_) => {}
            None => stream = Some(r.stream.clone()),
        }
    }
    let Some(stream) = stream else {
        // Only null requests: empty statuses now.
        for i in 0..count as usize {
            if !statuses.is_null() {
                // SAFETY: `count` writable statuses per the caller's contract.
                unsafe { status::store_empty(statuses.add(i)) };
            }
        }
        return Ok(());
    };
    let mut taken = Vec::with_capacity(handles.len());
    let mut comm = MPI_COMM_NULL;
    for (i, &h) in handles.iter().enumerate() {
        if h == MPI_REQUEST_NULL {
            taken.push(None);
            continue;
        }
        let r = take_request(h, func, &format!("array_of_requests[{i}]"))?;
        comm = r.comm;
        taken.push(Some(r));
        // SAFETY: `count` writable handles per the caller's contract.
        unsafe { requests.add(i).write(MPI_REQUEST_NULL) };
    }
    let statuses = statuses as usize;
    let staging: Vec<Staging> = taken
        .iter()
        .flatten()
        .filter_map(|r| take_staging(r))
        .collect();
    let mut queued = enqueue(&stream, comm, func, Vec::new(), move |_| {
        let mut started: Vec<MPI_Request> = taken
            .iter()
            .map(|r| {
                r.as_ref()
                    .map_or(MPI_REQUEST_NULL, |r| r.started.load(Ordering::Acquire))
            })
            .collect();
        // SAFETY: the enqueue contract: the statuses stay writable until the wait ran.
        unsafe {
            mpi_waitall(
                started.len() as c_int,
                started.as_mut_ptr(),
                statuses as *mut MPI_Status,
            )
        }
    });
    for st in staging {
        // Each finishes (or gives its blocks back); the first error is the call's.
        let r = finish_after_wait(&stream, Some(st), Ok(()), func);
        if queued.is_ok() {
            queued = r;
        }
    }
    queued?;
    report_queued(&stream, func)
}

/// After a queued wait (`queued`: whether it was queued): queue the copy back of a device
/// buffer its request staged, or give the blocks back if the wait was not queued.
fn finish_after_wait(
    stream: &Stream,
    staging: Option<Staging>,
    queued: MpiResult<()>,
    func: &str,
) -> MpiResult<()> {
    match (staging, queued) {
        (None, q) => q,
        (Some(st), Ok(())) => st.finish(stream, func),
        (Some(st), Err(e)) => {
            st.abandon(stream);
            Err(e)
        }
    }
}

/// The send and receive buffers of a queued reduction: `send_n` elements of the send
/// buffer read, `recv_n` of the receive buffer read and written (0: not used here, e.g. at
/// a non-root of a reduce, where it may be any address or a smaller buffer).
fn reduction_pieces(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    (send_n, recv_n): (i64, i64),
    datatype: MPI_Datatype,
) -> [Piece; 2] {
    [
        (sendbuf as usize, send_n, datatype, Access::Read),
        (recvbuf as usize, recv_n, datatype, Access::ReadWrite),
    ]
}

/// The element counts `reduction_pieces` stages for a reduce-scatter-block on `size` ranks:
/// `recvcount * size` sent, `recvcount` received, or in place `recvcount * size` of the
/// receive buffer (its input).
fn reduce_scatter_block_counts(in_place: bool, recvcount: i64, size: i64) -> (i64, i64) {
    let total = recvcount * size;
    (total, if in_place { total } else { recvcount })
}

/// A count, datatype and op a queued reduction will use: checked now.
fn check_reduction(count: i64, datatype: MPI_Datatype, op: MPI_Op, func: &str) -> MpiResult<()> {
    check_data(count, datatype, func, "")?;
    check_op(op, func)
}

/// `MPIX_Allreduce_enqueue` and its `_c` twin.
///
/// # Safety
/// The buffers hold what the count and datatype say until the queued operation has run.
pub(crate) unsafe fn allreduce_enqueue<C: Int + Send + 'static>(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: C,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    func: &'static str,
) -> MpiResult<()> {
    let (_, s) = offload_comm(comm, func)?;
    let n = count.get();
    check_reduction(n, datatype, op, func)?;
    let pieces = reduction_pieces(sendbuf, recvbuf, (n, n), datatype);
    enqueue_on(&s, comm, func, pieces, move |[sb, rb]| {
        let (sb, rb, how) = (sb as *const c_void, rb as *mut c_void, Mode::Blocking);
        // SAFETY: the enqueue contract: the buffers are valid until the operation ran.
        unsafe {
            coll::all_reduce(
                sb,
                rb,
                count,
                datatype,
                op,
                comm,
                func,
                how,
                AllKind::Allreduce,
            )
        }
    })
}

/// `MPIX_Reduce_enqueue` and its `_c` twin (Weft's).
///
/// # Safety
/// As `allreduce_enqueue`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce_enqueue<C: Int + Send + 'static>(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: C,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
    func: &'static str,
) -> MpiResult<()> {
    let (c, s) = offload_comm(comm, func)?;
    let n = count.get();
    check_reduction(n, datatype, op, func)?;
    check_root(&c, root, func)?;
    let recv_n = if c.rank == root as u32 { n } else { 0 };
    let pieces = reduction_pieces(sendbuf, recvbuf, (n, recv_n), datatype);
    enqueue_on(&s, comm, func, pieces, move |[sb, rb]| {
        let (sb, rb, how) = (sb as *const c_void, rb as *mut c_void, Mode::Blocking);
        // SAFETY: the enqueue contract.
        unsafe { coll::reduce(sb, rb, count, datatype, op, root, comm, func, how) }
    })
}

/// `MPIX_Reduce_scatter_block_enqueue` and its `_c` twin (Weft's).
///
/// # Safety
/// As `allreduce_enqueue`.
pub(crate) unsafe fn reduce_scatter_block_enqueue<C: Int + Send + 'static>(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: C,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    func: &'static str,
) -> MpiResult<()> {
    let (c, s) = offload_comm(comm, func)?;
    check_data(recvcount.get(), datatype, func, "recv")?;
    check_op(op, func)?;
    let in_place = sendbuf as usize == MPI_IN_PLACE;
    let counts = reduce_scatter_block_counts(in_place, recvcount.get(), c.peer_size() as i64);
    let pieces = reduction_pieces(sendbuf, recvbuf, counts, datatype);
    enqueue_on(&s, comm, func, pieces, move |[sb, rb]| {
        let (sb, rb, how) = (sb as *const c_void, rb as *mut c_void, Mode::Blocking);
        // SAFETY: the enqueue contract.
        unsafe { coll::reduce_scatter_block(sb, rb, recvcount, datatype, op, comm, func, how) }
    })
}

/// `MPIX_Bcast_enqueue` and its `_c` twin (Weft's).
///
/// # Safety
/// As `allreduce_enqueue`.
pub(crate) unsafe fn bcast_enqueue<C: Int + Send + 'static>(
    buffer: *mut c_void,
    count: C,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    func: &'static str,
) -> MpiResult<()> {
    let (c, s) = offload_comm(comm, func)?;
    check_data(count.get(), datatype, func, "")?;
    check_root(&c, root, func)?;
    let piece = (buffer as usize, count.get(), datatype, Access::ReadWrite);
    enqueue_on(&s, comm, func, [piece], move |[b]| {
        // SAFETY: the enqueue contract.
        unsafe {
            coll::bcast(
                b as *mut c_void,
                count,
                datatype,
                root,
                comm,
                func,
                Mode::Blocking,
            )
        }
    })
}

/// `MPIX_Barrier_enqueue` (Weft's).
pub(crate) fn mpix_barrier_enqueue(comm: MPI_Comm) -> MpiResult<()> {
    let func = "MPIX_Barrier_enqueue";
    let (_, s) = offload_comm(comm, func)?;
    enqueue_on(&s, comm, func, [], move |[]| {
        coll::barrier(comm, func, Mode::Blocking)
    })
}

/// `MPIX_Allgather_enqueue`, `MPIX_Alltoall_enqueue` and their `_c` twins (Weft's;
/// generated forwards): `run` queued; `each_peer` says the send buffer holds a block per
/// peer.
///
/// # Safety
/// As `allreduce_enqueue`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn exchange_enqueue(
    sendbuf: *const c_void,
    sendcount: impl Int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: impl Int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    each_peer: bool,
    run: Exchange<i64>,
    func: &'static str,
) -> MpiResult<()> {
    let (c, s) = offload_comm(comm, func)?;
    let (sendcount, recvcount) = (sendcount.get(), recvcount.get());
    if sendbuf as usize != MPI_IN_PLACE {
        check_data(sendcount, sendtype, func, "send")?;
    }
    check_data(recvcount, recvtype, func, "recv")?;
    let n = c.peer_size() as i64;
    let send_n = if each_peer { sendcount * n } else { sendcount };
    let pieces = [
        (sendbuf as usize, send_n, sendtype, Access::Read),
        (recvbuf as usize, recvcount * n, recvtype, Access::ReadWrite),
    ];
    enqueue_on(&s, comm, func, pieces, move |[sb, rb]| {
        let (sb, rb) = (sb as *const c_void, rb as *mut c_void);
        // SAFETY: the enqueue contract.
        unsafe {
            run(
                sb,
                sendcount,
                sendtype,
                rb,
                recvcount,
                recvtype,
                comm,
                func,
                Mode::Blocking,
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_scatter_block_stages_recvcount_of_the_receive_buffer() {
        // Before: recvcount * size elements of a recvcount-element device buffer were
        // staged (copied from the device and back past its end).
        assert_eq!(reduce_scatter_block_counts(false, 37, 4), (148, 37));
        assert_eq!(reduce_scatter_block_counts(true, 37, 4), (148, 148));
    }
}
