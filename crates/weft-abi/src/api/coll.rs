//! Collective operations on intracommunicators: blocking forms and their `_c` variants.
//! Arguments are checked here (communicator, root, counts, datatypes, buffers, op); the
//! algorithms are in `weft_core::coll`.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use weft_core::coll;
use weft_core::datatype::{Buf, Type};
use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::object::Comm;
use weft_core::op::Reduction;
use weft_core::request::ReqId;

use crate::api::op::reduction;
use crate::api::pt2pt::prefix;
use crate::args::non_null;
use crate::constants::*;
use crate::ctypes::*;
use crate::datatypes::TypeRef;
use crate::objects::CommRef;
use crate::requests::request_handle;
use crate::{datatypes, objects};

pub(crate) fn is_in_place(p: *const c_void) -> bool {
    p as usize == MPI_IN_PLACE
}

fn comm_of(comm: MPI_Comm, func: &str) -> MpiResult<Arc<Comm>> {
    objects::comm(comm, func, "comm")
}

/// `comm_of` for the blocking paths of the small collectives: no reference count or lock
/// unless calls may overlap (`objects::comm_ref`).
fn comm_ref(comm: MPI_Comm, func: &str) -> MpiResult<CommRef> {
    objects::comm_ref(comm, func, "comm")
}

/// A communicator for an operation the standard defines on intracommunicators only.
pub(crate) fn intra_of(comm: MPI_Comm, func: &str) -> MpiResult<Arc<Comm>> {
    let c = objects::comm(comm, func, "comm")?;
    intra_only(&c, func)?;
    Ok(c)
}

fn intra_only(c: &Comm, func: &str) -> MpiResult<()> {
    if c.is_inter() {
        return Err(MpiError::new(
            ErrorClass::Comm,
            format!("{func}(comm): not defined on an intercommunicator"),
        ));
    }
    Ok(())
}

/// The root argument: a rank of the communicator, or on an intercommunicator `MPI_ROOT`
/// (`coll::ROOT`), `MPI_PROC_NULL` (`coll::PROC_NULL`) or a rank of the remote group.
fn root_of(c: &Comm, root: c_int, func: &str) -> MpiResult<u32> {
    if c.is_inter() {
        match root {
            MPI_ROOT => return Ok(coll::ROOT),
            MPI_PROC_NULL => return Ok(coll::PROC_NULL),
            r if r >= 0 && (r as u32) < c.peer_size() => return Ok(r as u32),
            _ => {
                return Err(MpiError::new(
                    ErrorClass::Root,
                    format!(
                        "{func}(root={root}): not MPI_ROOT, MPI_PROC_NULL or a rank of the remote group (size {})",
                        c.peer_size()
                    ),
                ))
            }
        }
    }
    if root < 0 || root as u32 >= c.size() {
        return Err(MpiError::new(
            ErrorClass::Root,
            format!(
                "{func}(root={root}): not a rank of the communicator (size {})",
                c.size()
            ),
        ));
    }
    Ok(root as u32)
}

/// Whether this process holds the root's buffers (the root, or `MPI_ROOT`).
fn at_root(c: &Comm, root: u32) -> bool {
    if c.is_inter() {
        root == coll::ROOT
    } else {
        c.rank == root
    }
}

/// Whether this process takes part with data (not `MPI_PROC_NULL` on an intercommunicator).
fn takes_part(c: &Comm, root: u32) -> bool {
    !(c.is_inter() && root == coll::PROC_NULL)
}

/// A committed datatype.
pub(crate) fn dtype(handle: MPI_Datatype, func: &str, arg: &str) -> MpiResult<Arc<Type>> {
    datatypes::committed(handle, func, arg)
}

/// `count` instances of `t` at address `addr`.
pub(crate) fn buf_at(
    addr: usize,
    count: i64,
    t: &Arc<Type>,
    func: &str,
    buf_arg: &str,
    count_arg: &str,
) -> MpiResult<Buf> {
    if count < 0 {
        return Err(MpiError::new(
            ErrorClass::Count,
            format!("{func}({count_arg}={count}): negative count"),
        ));
    }
    let bytes = usize::try_from(count)
        .ok()
        .and_then(|c| t.bytes_for(c))
        .filter(|&b| {
            b == 0 || (count as u128) * (t.extent.unsigned_abs() as u128) <= isize::MAX as u128
        })
        .ok_or_else(|| {
            MpiError::new(
                ErrorClass::Count,
                format!("{func}({count_arg}={count}): the message size overflows"),
            )
        })?;
    // A derived type may address absolute memory from MPI_BOTTOM (null).
    if addr == 0 && bytes > 0 && t.predefined.is_some() {
        return Err(MpiError::new(
            ErrorClass::Buffer,
            format!("{func}({buf_arg}=NULL): a buffer is required for count {count}"),
        ));
    }
    if addr == MPI_IN_PLACE && bytes > 0 {
        return Err(MpiError::new(
            ErrorClass::Buffer,
            format!("{func}({buf_arg}=MPI_IN_PLACE): not allowed here"),
        ));
    }
    // SAFETY: the MPI standard obliges the caller to pass a buffer holding `count` instances
    // and to leave it alone until the collective completes; the type stays alive through
    // the handle table during the call and through `finish`'s `keep` (and the core's plans
    // and requests) after it.
    Ok(unsafe { Buf::typed(addr, count as usize, t) })
}

/// The types of typed buffers, for whoever holds the buffers past the call.
pub(crate) trait Keep {
    fn keep_into(&self, out: &mut Vec<Arc<Type>>);
}
impl Keep for Buf {
    fn keep_into(&self, out: &mut Vec<Arc<Type>>) {
        out.extend(self.keep());
    }
}
impl<T: Keep> Keep for Option<T> {
    fn keep_into(&self, out: &mut Vec<Arc<Type>>) {
        if let Some(b) = self {
            b.keep_into(out)
        }
    }
}
impl<T: Keep> Keep for Vec<T> {
    fn keep_into(&self, out: &mut Vec<Arc<Type>>) {
        for b in self {
            b.keep_into(out)
        }
    }
}

pub(crate) fn keep(bufs: &[&dyn Keep]) -> Vec<Arc<Type>> {
    let mut out = Vec::new();
    for b in bufs {
        b.keep_into(&mut out);
    }
    out
}

/// An integer type of count and displacement arrays.
pub(crate) trait Int: Copy {
    fn get(self) -> i64;
}
impl Int for i32 {
    fn get(self) -> i64 {
        self as i64
    }
}
impl Int for i64 {
    fn get(self) -> i64 {
        self
    }
}
impl Int for isize {
    fn get(self) -> i64 {
        self as i64
    }
}

/// Read `n` integers of a count or displacement array.
///
/// # Safety
/// `p` must be null or point to `n` readable integers.
pub(crate) unsafe fn array<T: Int>(
    p: *const T,
    n: usize,
    func: &str,
    arg: &str,
) -> MpiResult<Vec<i64>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    non_null(p, func, arg)?;
    // SAFETY: non-null and `n` elements long per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }
        .iter()
        .map(|v| v.get())
        .collect())
}

/// Read `n` datatype handles (alltoallw).
///
/// # Safety
/// `p` must be null or point to `n` readable handles.
pub(crate) unsafe fn types(
    p: *const MPI_Datatype,
    n: usize,
    func: &str,
    arg: &str,
) -> MpiResult<Vec<MPI_Datatype>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    non_null(p, func, arg)?;
    // SAFETY: non-null and `n` elements long per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }.to_vec())
}

/// Per-rank parts of a `v` buffer: `counts[i]` instances at `base + displs[i] * extent`
/// (bytes for `byte_displs`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn parts(
    base: *const c_void,
    counts: &[i64],
    displs: &[i64],
    dts: &[Arc<Type>],
    byte_displs: bool,
    func: &str,
    buf_arg: &str,
    counts_arg: &str,
) -> MpiResult<Vec<Buf>> {
    counts
        .iter()
        .zip(displs)
        .zip(dts)
        .enumerate()
        .map(|(i, ((&c, &d), dt))| {
            let scale = if byte_displs { 1 } else { dt.extent as i64 };
            let addr = (base as usize).wrapping_add_signed(d.wrapping_mul(scale) as isize);
            let addr = if c == 0 { base as usize } else { addr };
            buf_at(addr, c, dt, func, buf_arg, &format!("{counts_arg}[{i}]"))
        })
        .collect()
}

/// The arguments of a blocking reduction that need no checks beyond those made here.
struct PlainReduce {
    comm: CommRef,
    send: Buf,
    recv: Buf,
    red: Reduction,
}

/// The fast path of `MPI_Allreduce`/`MPI_Reduce`: distinct send and receive buffers of a
/// predefined byte-contiguous type, a predefined op defined on it, an intracommunicator.
/// `None` for anything else, every error included: the general path then checks everything
/// and reports.
#[inline(always)]
fn plain_reduce_args(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Option<PlainReduce> {
    if is_in_place(sendbuf) || (sendbuf == recvbuf.cast_const() && count != 0) {
        return None;
    }
    let send = datatypes::contiguous_buf(sendbuf, count.into(), datatype)?;
    let recv = datatypes::contiguous_buf(recvbuf, count.into(), datatype)?;
    let red = datatypes::contiguous_reduction(op, datatype)?;
    let comm = objects::comm_ref_quiet(comm).filter(|c| !c.is_inter())?;
    Some(PlainReduce {
        comm,
        send,
        recv,
        red,
    })
}

fn op_for(op: MPI_Op, datatype: MPI_Datatype, func: &str) -> MpiResult<(TypeRef, Reduction)> {
    let t = datatypes::committed_ref(datatype, func, "datatype")?;
    let red = reduction(op, datatype, &t, func)?;
    Ok((t, red))
}

/// The send side of a reduction: `None` for `MPI_IN_PLACE`.
fn send_side(
    sendbuf: *const c_void,
    count: i64,
    dt: &Arc<Type>,
    allowed: bool,
    func: &str,
) -> MpiResult<Option<Buf>> {
    if is_in_place(sendbuf) {
        if !allowed {
            return Err(MpiError::new(
                ErrorClass::Buffer,
                format!("{func}(sendbuf=MPI_IN_PLACE): only the root may pass MPI_IN_PLACE"),
            ));
        }
        return Ok(None);
    }
    buf_at(sendbuf as usize, count, dt, func, "sendbuf", "count").map(Some)
}

fn check_alias(send: &Option<Buf>, recv: &Buf, func: &str) -> MpiResult<()> {
    if let Some(s) = send {
        if !s.is_empty() && s.addr() == recv.addr() {
            return Err(MpiError::new(
                ErrorClass::Buffer,
                format!(
                    "{func}(sendbuf, recvbuf): the buffers are the same memory (use MPI_IN_PLACE)"
                ),
            ));
        }
    }
    Ok(())
}

pub(crate) fn core<T>(func: &str, r: MpiResult<T>) -> MpiResult<T> {
    r.map_err(|e| prefix(func, e))
}

/// Run the blocking form, or (`nb` holds the communicator handle, the request's owner) start
/// the nonblocking one (made by `nonblocking`) and return its request handle. `keep` gives
/// the buffers' types, held for as long as a persistent request may start the operation
/// again. Both are built only when needed: the blocking form takes no reference counts.
pub(crate) fn finish<F>(
    func: &str,
    nb: Mode,
    c: &Comm,
    keep: impl FnOnce() -> Vec<Arc<Type>>,
    blocking: impl FnOnce() -> MpiResult<()>,
    nonblocking: impl FnOnce() -> F,
) -> MpiResult<MPI_Request>
where
    F: Fn(usize) -> MpiResult<ReqId> + Send + Sync + 'static,
{
    match nb {
        Mode::Blocking => core(func, blocking()).map(|_| MPI_REQUEST_NULL),
        Mode::Nonblocking(owner) => core(func, nonblocking()(owner)).map(request_handle),
        Mode::Persistent(owner) => {
            let (types, start) = (keep(), nonblocking());
            Ok(request_handle(coll::persistent::init(c, owner, move |o| {
                let _types = &types;
                start(o)
            })))
        }
    }
}

/// How a collective runs: now, started (`I` forms) or bound to a persistent request (`_init`
/// forms); the latter two carry the communicator handle (the request's owner).
#[derive(Clone, Copy)]
pub(crate) enum Mode {
    Blocking,
    Nonblocking(MPI_Comm),
    Persistent(MPI_Comm),
}

// ------------------------------------------------------------------ barrier, bcast

pub(crate) fn mpi_barrier(comm: MPI_Comm) -> MpiResult<()> {
    let c = comm_ref(comm, "MPI_Barrier")?;
    core("MPI_Barrier", coll::barrier(&c))
}

fn bcast(
    buffer: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let c = comm_ref(comm, func)?;
    let root = root_of(&c, root, func)?;
    let dt = datatypes::committed_ref(datatype, func, "datatype")?;
    let buf = if takes_part(&c, root) {
        buf_at(buffer as usize, count, &dt, func, "buffer", "count")?
    } else {
        Buf::EMPTY
    };
    finish(
        func,
        nb,
        &c,
        || keep(&[&buf]),
        || coll::bcast(&c, &buf, root),
        || {
            let (c, buf) = (c.to_arc(), buf.clone());
            move |o| coll::ibcast(&c, &buf, root, o)
        },
    )
}

pub(crate) fn mpi_bcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    // Fast path: a predefined byte-contiguous type, a valid root on an intracommunicator.
    if let (Some(buf), Some(c)) = (
        datatypes::contiguous_buf(buffer, count.into(), datatype),
        objects::comm_ref_quiet(comm),
    ) {
        if !c.is_inter() && root >= 0 && (root as u32) < c.size() {
            return core("MPI_Bcast", coll::bcast(&c, &buf, root as u32));
        }
    }
    bcast(
        buffer,
        count as i64,
        datatype,
        root,
        comm,
        "MPI_Bcast",
        Mode::Blocking,
    )
    .map(|_| ())
}

pub(crate) fn mpi_bcast_c(
    buffer: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    bcast(
        buffer,
        count,
        datatype,
        root,
        comm,
        "MPI_Bcast_c",
        Mode::Blocking,
    )
    .map(|_| ())
}

// ------------------------------------------------------------------ reductions

#[allow(clippy::too_many_arguments)]
fn reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let c = comm_ref(comm, func)?;
    let root = root_of(&c, root, func)?;
    let (dt, red) = op_for(op, datatype, func)?;
    let is_root = at_root(&c, root);
    let send = if c.is_inter() {
        if is_root || !takes_part(&c, root) {
            None
        } else {
            Some(buf_at(
                sendbuf as usize,
                count,
                &dt,
                func,
                "sendbuf",
                "count",
            )?)
        }
    } else {
        send_side(sendbuf, count, &dt, is_root, func)?
    };
    let recv = if is_root {
        buf_at(recvbuf as usize, count, &dt, func, "recvbuf", "count")?
    } else {
        Buf::EMPTY
    };
    if is_root {
        check_alias(&send, &recv, func)?;
    }
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::reduce(&c, send.as_ref(), &recv, &red, root),
        || {
            let (c, send, recv, red) = (c.to_arc(), send.clone(), recv.clone(), red.clone());
            move |o| coll::ireduce(&c, send.as_ref(), &recv, &red, root, o)
        },
    )
}

pub(crate) fn mpi_reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    if let Some(a) = plain_reduce_args(sendbuf, recvbuf, count, datatype, op, comm) {
        if root >= 0 && (root as u32) < a.comm.size() {
            let r = coll::reduce(&a.comm, Some(&a.send), &a.recv, &a.red, root as u32);
            return core("MPI_Reduce", r);
        }
    }
    reduce(
        sendbuf,
        recvbuf,
        count as i64,
        datatype,
        op,
        root,
        comm,
        "MPI_Reduce",
        Mode::Blocking,
    )
    .map(|_| ())
}

pub(crate) fn mpi_reduce_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    reduce(
        sendbuf,
        recvbuf,
        count,
        datatype,
        op,
        root,
        comm,
        "MPI_Reduce_c",
        Mode::Blocking,
    )
    .map(|_| ())
}

/// Which all-rank reduction.
#[derive(Clone, Copy)]
enum AllKind {
    Allreduce,
    Scan,
    Exscan,
}

#[allow(clippy::too_many_arguments)]
fn all_reduce(
    kind: AllKind,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let c = comm_ref(comm, func)?;
    if !matches!(kind, AllKind::Allreduce) {
        intra_only(&c, func)?;
    }
    let (dt, red) = op_for(op, datatype, func)?;
    let send = send_side(sendbuf, count, &dt, !c.is_inter(), func)?;
    let recv = buf_at(recvbuf as usize, count, &dt, func, "recvbuf", "count")?;
    check_alias(&send, &recv, func)?;
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || match kind {
            AllKind::Allreduce => coll::allreduce(&c, send.as_ref(), &recv, &red),
            AllKind::Scan => coll::scan(&c, send.as_ref(), &recv, &red),
            AllKind::Exscan => coll::exscan(&c, send.as_ref(), &recv, &red),
        },
        || {
            let (c, send, recv, red) = (c.to_arc(), send.clone(), recv.clone(), red.clone());
            move |o| match kind {
                AllKind::Allreduce => coll::iallreduce(&c, send.as_ref(), &recv, &red, o),
                AllKind::Scan => coll::iscan(&c, send.as_ref(), &recv, &red, o),
                AllKind::Exscan => coll::iexscan(&c, send.as_ref(), &recv, &red, o),
            }
        },
    )
}

pub(crate) fn mpi_allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    if let Some(a) = plain_reduce_args(sendbuf, recvbuf, count, datatype, op, comm) {
        let r = coll::allreduce(&a.comm, Some(&a.send), &a.recv, &a.red);
        return core("MPI_Allreduce", r);
    }
    let k = AllKind::Allreduce;
    all_reduce(
        k,
        sendbuf,
        recvbuf,
        count as i64,
        datatype,
        op,
        comm,
        "MPI_Allreduce",
        Mode::Blocking,
    )
    .map(|_| ())
}

pub(crate) fn mpi_allreduce_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let k = AllKind::Allreduce;
    all_reduce(
        k,
        sendbuf,
        recvbuf,
        count,
        datatype,
        op,
        comm,
        "MPI_Allreduce_c",
        Mode::Blocking,
    )
    .map(|_| ())
}

pub(crate) fn mpi_scan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let k = AllKind::Scan;
    all_reduce(
        k,
        sendbuf,
        recvbuf,
        count as i64,
        datatype,
        op,
        comm,
        "MPI_Scan",
        Mode::Blocking,
    )
    .map(|_| ())
}

pub(crate) fn mpi_scan_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    all_reduce(
        AllKind::Scan,
        sendbuf,
        recvbuf,
        count,
        datatype,
        op,
        comm,
        "MPI_Scan_c",
        Mode::Blocking,
    )
    .map(|_| ())
}

pub(crate) fn mpi_exscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let k = AllKind::Exscan;
    all_reduce(
        k,
        sendbuf,
        recvbuf,
        count as i64,
        datatype,
        op,
        comm,
        "MPI_Exscan",
        Mode::Blocking,
    )
    .map(|_| ())
}

pub(crate) fn mpi_exscan_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let k = AllKind::Exscan;
    all_reduce(
        k,
        sendbuf,
        recvbuf,
        count,
        datatype,
        op,
        comm,
        "MPI_Exscan_c",
        Mode::Blocking,
    )
    .map(|_| ())
}

fn reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
    op: MPI_Op,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let (dt, red) = op_for(op, datatype, func)?;
    let input = buf_at(inbuf as usize, count, &dt, func, "inbuf", "count")?;
    let inout = buf_at(inoutbuf as usize, count, &dt, func, "inoutbuf", "count")?;
    finish(
        func,
        nb,
        &Arc::clone(&objects::comm(MPI_COMM_SELF, func, "comm").unwrap_or_else(|_| unreachable!())),
        || Vec::new(),
        || coll::reduce_local(&input, &inout, &red),
        || |_| unreachable!(),
    )
}

pub(crate) fn mpi_reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> MpiResult<()> {
    reduce_local(
        inbuf,
        inoutbuf,
        count as i64,
        datatype,
        op,
        "MPI_Reduce_local",
        Mode::Blocking,
    )
    .map(|_| ())
}

pub(crate) fn mpi_reduce_local_c(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> MpiResult<()> {
    reduce_local(
        inbuf,
        inoutbuf,
        count,
        datatype,
        op,
        "MPI_Reduce_local_c",
        Mode::Blocking,
    )
    .map(|_| ())
}

/// Reduce-scatter with `counts[i]` elements for rank i.
#[allow(clippy::too_many_arguments)]
fn reduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: &[i64],
    datatype: MPI_Datatype,
    op: MPI_Op,
    c: &Arc<Comm>,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let (dt, red) = op_for(op, datatype, func)?;
    let mut sizes = Vec::with_capacity(counts.len());
    for (i, &n) in counts.iter().enumerate() {
        let b = usize::try_from(n)
            .ok()
            .and_then(|n| dt.bytes_for(n))
            .ok_or_else(|| {
                MpiError::new(
                    ErrorClass::Count,
                    format!("{func}(recvcounts[{i}]={n}): negative or too large"),
                )
            })?;
        sizes.push(b);
    }
    let total: i64 = counts.iter().sum();
    let mine = counts[c.rank as usize];
    let output = buf_at(recvbuf as usize, mine, &dt, func, "recvbuf", "recvcount")?;
    let input = if is_in_place(sendbuf) && !c.is_inter() {
        buf_at(recvbuf as usize, total, &dt, func, "recvbuf", "recvcounts")?
    } else {
        let s = buf_at(sendbuf as usize, total, &dt, func, "sendbuf", "recvcounts")?;
        check_alias(&Some(s.clone()), &output, func)?;
        s
    };
    finish(
        func,
        nb,
        &c,
        || keep(&[&input, &output]),
        || coll::reduce_scatter(c, &input, &output, &red, &sizes),
        || {
            let (c, red, input, output, sizes) = (
                c.clone(),
                red.clone(),
                input.clone(),
                output.clone(),
                sizes.clone(),
            );
            move |o| coll::ireduce_scatter(&c, &input, &output, &red, &sizes, o)
        },
    )
}

pub(crate) unsafe fn mpi_reduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Reduce_scatter";
    let c = comm_of(comm, func)?;
    // SAFETY: the caller passes one count per rank.
    let counts = unsafe { array(recvcounts, c.size() as usize, func, "recvcounts")? };
    reduce_scatter(
        sendbuf,
        recvbuf,
        &counts,
        datatype,
        op,
        &c,
        func,
        Mode::Blocking,
    )
    .map(|_| ())
}

pub(crate) unsafe fn mpi_reduce_scatter_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Reduce_scatter_c";
    let c = comm_of(comm, func)?;
    // SAFETY: the caller passes one count per rank.
    let counts = unsafe { array(recvcounts, c.size() as usize, func, "recvcounts")? };
    reduce_scatter(
        sendbuf,
        recvbuf,
        &counts,
        datatype,
        op,
        &c,
        func,
        Mode::Blocking,
    )
    .map(|_| ())
}

fn reduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: i64,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let c = comm_of(comm, func)?;
    if recvcount < 0 {
        return Err(MpiError::new(
            ErrorClass::Count,
            format!("{func}(recvcount={recvcount}): negative count"),
        ));
    }
    let counts = vec![recvcount; c.size() as usize];
    reduce_scatter(sendbuf, recvbuf, &counts, datatype, op, &c, func, nb)
}

pub(crate) fn mpi_reduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let f = "MPI_Reduce_scatter_block";
    reduce_scatter_block(
        sendbuf,
        recvbuf,
        recvcount as i64,
        datatype,
        op,
        comm,
        f,
        Mode::Blocking,
    )
    .map(|_| ())
}

pub(crate) fn mpi_reduce_scatter_block_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let f = "MPI_Reduce_scatter_block_c";
    reduce_scatter_block(
        sendbuf,
        recvbuf,
        recvcount,
        datatype,
        op,
        comm,
        f,
        Mode::Blocking,
    )
    .map(|_| ())
}

// ------------------------------------------------------------------ gather, scatter

/// One side of a regular gather/scatter/allgather/alltoall: `count` elements (times `times`
/// blocks) of `datatype` at `buf`.
pub(crate) fn side(
    buf: *const c_void,
    count: i64,
    times: i64,
    datatype: MPI_Datatype,
    func: &str,
    names: (&str, &str, &str),
) -> MpiResult<Buf> {
    let dt = dtype(datatype, func, names.2)?;
    if count < 0 {
        return Err(MpiError::new(
            ErrorClass::Count,
            format!("{func}({}={count}): negative count", names.1),
        ));
    }
    buf_at(
        buf as usize,
        count.saturating_mul(times),
        &dt,
        func,
        names.0,
        names.1,
    )
}

pub(crate) const SEND: (&str, &str, &str) = ("sendbuf", "sendcount", "sendtype");
pub(crate) const RECV: (&str, &str, &str) = ("recvbuf", "recvcount", "recvtype");

#[allow(clippy::too_many_arguments)]
fn gather(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let c = comm_of(comm, func)?;
    let root = root_of(&c, root, func)?;
    let is_root = at_root(&c, root);
    let n = c.peer_size() as i64;
    let send = if (is_in_place(sendbuf) && is_root) || (c.is_inter() && root >= coll::PROC_NULL) {
        None
    } else {
        Some(side(sendbuf, sendcount, 1, sendtype, func, SEND)?)
    };
    let recv = if is_root {
        side(recvbuf, recvcount, n, recvtype, func, RECV)?
    } else {
        Buf::EMPTY
    };
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::gather(&c, send.as_ref(), &recv, root),
        || {
            let (c, send, recv) = (c.clone(), send.clone(), recv.clone());
            move |o| coll::igather(&c, send.as_ref(), &recv, root, o)
        },
    )
}

pub(crate) fn mpi_gather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let (sc, rc) = (sendcount as i64, recvcount as i64);
    gather(
        sendbuf,
        sc,
        sendtype,
        recvbuf,
        rc,
        recvtype,
        root,
        comm,
        "MPI_Gather",
        Mode::Blocking,
    )
    .map(|_| ())
}

pub(crate) fn mpi_gather_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let (sc, rc) = (sendcount, recvcount);
    gather(
        sendbuf,
        sc,
        sendtype,
        recvbuf,
        rc,
        recvtype,
        root,
        comm,
        "MPI_Gather_c",
        Mode::Blocking,
    )
    .map(|_| ())
}

/// # Safety
/// At the root, `recvcounts` and `displs` hold one entry per rank.
#[allow(clippy::too_many_arguments)]
unsafe fn gatherv<C: Int, D: Int>(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    displs: *const D,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let c = comm_of(comm, func)?;
    let root = root_of(&c, root, func)?;
    let is_root = at_root(&c, root);
    let n = c.peer_size() as usize;
    let send = if (is_in_place(sendbuf) && is_root) || (c.is_inter() && root >= coll::PROC_NULL) {
        None
    } else {
        Some(side(sendbuf, sendcount, 1, sendtype, func, SEND)?)
    };
    let recv = if is_root {
        let dt = dtype(recvtype, func, "recvtype")?;
        // SAFETY: one entry per rank at the root, per the caller's contract.
        let (counts, displs) = unsafe {
            (
                array(recvcounts, n, func, "recvcounts")?,
                array(displs, n, func, "displs")?,
            )
        };
        parts(
            recvbuf,
            &counts,
            &displs,
            &vec![dt; n],
            false,
            func,
            "recvbuf",
            "recvcounts",
        )?
    } else {
        Vec::new()
    };
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::gatherv(&c, send.as_ref(), &recv, root),
        || {
            let (c, send, recv) = (c.clone(), send.clone(), recv.clone());
            move |o| coll::igatherv(&c, send.as_ref(), &recv, root, o)
        },
    )
}

pub(crate) unsafe fn mpi_gatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let sc = sendcount as i64;
    // SAFETY: forwarded caller contract.
    unsafe {
        gatherv(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            recvcounts,
            displs,
            recvtype,
            root,
            comm,
            "MPI_Gatherv",
            Mode::Blocking,
        )
        .map(|_| ())
    }
}

pub(crate) unsafe fn mpi_gatherv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let sc = sendcount;
    // SAFETY: forwarded caller contract.
    unsafe {
        gatherv(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            recvcounts,
            displs,
            recvtype,
            root,
            comm,
            "MPI_Gatherv_c",
            Mode::Blocking,
        )
        .map(|_| ())
    }
}

#[allow(clippy::too_many_arguments)]
fn scatter(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let c = comm_of(comm, func)?;
    let root = root_of(&c, root, func)?;
    let is_root = at_root(&c, root);
    let n = c.peer_size() as i64;
    let send = if is_root {
        side(sendbuf, sendcount, n, sendtype, func, SEND)?
    } else {
        Buf::EMPTY
    };
    let recv = if (is_in_place(recvbuf) && is_root) || (c.is_inter() && root >= coll::PROC_NULL) {
        None
    } else {
        Some(side(recvbuf, recvcount, 1, recvtype, func, RECV)?)
    };
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::scatter(&c, &send, recv.as_ref(), root),
        || {
            let (c, send, recv) = (c.clone(), send.clone(), recv.clone());
            move |o| coll::iscatter(&c, &send, recv.as_ref(), root, o)
        },
    )
}

pub(crate) fn mpi_scatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let (sc, rc) = (sendcount as i64, recvcount as i64);
    scatter(
        sendbuf,
        sc,
        sendtype,
        recvbuf,
        rc,
        recvtype,
        root,
        comm,
        "MPI_Scatter",
        Mode::Blocking,
    )
    .map(|_| ())
}

pub(crate) fn mpi_scatter_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let (sc, rc) = (sendcount, recvcount);
    scatter(
        sendbuf,
        sc,
        sendtype,
        recvbuf,
        rc,
        recvtype,
        root,
        comm,
        "MPI_Scatter_c",
        Mode::Blocking,
    )
    .map(|_| ())
}

/// # Safety
/// At the root, `sendcounts` and `displs` hold one entry per rank.
#[allow(clippy::too_many_arguments)]
unsafe fn scatterv<C: Int, D: Int>(
    sendbuf: *const c_void,
    sendcounts: *const C,
    displs: *const D,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let c = comm_of(comm, func)?;
    let root = root_of(&c, root, func)?;
    let is_root = at_root(&c, root);
    let n = c.peer_size() as usize;
    let send = if is_root {
        let dt = dtype(sendtype, func, "sendtype")?;
        // SAFETY: one entry per rank at the root, per the caller's contract.
        let (counts, displs) = unsafe {
            (
                array(sendcounts, n, func, "sendcounts")?,
                array(displs, n, func, "displs")?,
            )
        };
        parts(
            sendbuf,
            &counts,
            &displs,
            &vec![dt; n],
            false,
            func,
            "sendbuf",
            "sendcounts",
        )?
    } else {
        Vec::new()
    };
    let recv = if (is_in_place(recvbuf) && is_root) || (c.is_inter() && root >= coll::PROC_NULL) {
        None
    } else {
        Some(side(recvbuf, recvcount, 1, recvtype, func, RECV)?)
    };
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::scatterv(&c, &send, recv.as_ref(), root),
        || {
            let (c, send, recv) = (c.clone(), send.clone(), recv.clone());
            move |o| coll::iscatterv(&c, &send, recv.as_ref(), root, o)
        },
    )
}

pub(crate) unsafe fn mpi_scatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let rc = recvcount as i64;
    // SAFETY: forwarded caller contract.
    unsafe {
        scatterv(
            sendbuf,
            sendcounts,
            displs,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            root,
            comm,
            "MPI_Scatterv",
            Mode::Blocking,
        )
        .map(|_| ())
    }
}

pub(crate) unsafe fn mpi_scatterv_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let rc = recvcount;
    // SAFETY: forwarded caller contract.
    unsafe {
        scatterv(
            sendbuf,
            sendcounts,
            displs,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            root,
            comm,
            "MPI_Scatterv_c",
            Mode::Blocking,
        )
        .map(|_| ())
    }
}

// ------------------------------------------------------------------ allgather, alltoall

#[allow(clippy::too_many_arguments)]
fn allgather(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let c = comm_of(comm, func)?;
    let n = c.peer_size() as i64;
    let send = if is_in_place(sendbuf) && !c.is_inter() {
        None
    } else {
        Some(side(sendbuf, sendcount, 1, sendtype, func, SEND)?)
    };
    let recv = side(recvbuf, recvcount, n, recvtype, func, RECV)?;
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::allgather(&c, send.as_ref(), &recv),
        || {
            let (c, send, recv) = (c.clone(), send.clone(), recv.clone());
            move |o| coll::iallgather(&c, send.as_ref(), &recv, o)
        },
    )
}

pub(crate) fn mpi_allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let (sc, rc) = (sendcount as i64, recvcount as i64);
    allgather(
        sendbuf,
        sc,
        sendtype,
        recvbuf,
        rc,
        recvtype,
        comm,
        "MPI_Allgather",
        Mode::Blocking,
    )
    .map(|_| ())
}

pub(crate) fn mpi_allgather_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let (sc, rc) = (sendcount, recvcount);
    allgather(
        sendbuf,
        sc,
        sendtype,
        recvbuf,
        rc,
        recvtype,
        comm,
        "MPI_Allgather_c",
        Mode::Blocking,
    )
    .map(|_| ())
}

/// # Safety
/// `recvcounts` and `displs` hold one entry per rank.
#[allow(clippy::too_many_arguments)]
unsafe fn allgatherv<C: Int, D: Int>(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    displs: *const D,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let c = comm_of(comm, func)?;
    let n = c.peer_size() as usize;
    let send = if is_in_place(sendbuf) && !c.is_inter() {
        None
    } else {
        Some(side(sendbuf, sendcount, 1, sendtype, func, SEND)?)
    };
    let dt = dtype(recvtype, func, "recvtype")?;
    // SAFETY: one entry per rank, per the caller's contract.
    let (counts, displs) = unsafe {
        (
            array(recvcounts, n, func, "recvcounts")?,
            array(displs, n, func, "displs")?,
        )
    };
    let recv = parts(
        recvbuf,
        &counts,
        &displs,
        &vec![dt; n],
        false,
        func,
        "recvbuf",
        "recvcounts",
    )?;
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::allgatherv(&c, send.as_ref(), &recv),
        || {
            let (c, send, recv) = (c.clone(), send.clone(), recv.clone());
            move |o| coll::iallgatherv(&c, send.as_ref(), &recv, o)
        },
    )
}

pub(crate) unsafe fn mpi_allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let sc = sendcount as i64;
    // SAFETY: forwarded caller contract.
    unsafe {
        allgatherv(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            recvcounts,
            displs,
            recvtype,
            comm,
            "MPI_Allgatherv",
            Mode::Blocking,
        )
        .map(|_| ())
    }
}

pub(crate) unsafe fn mpi_allgatherv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let sc = sendcount;
    // SAFETY: forwarded caller contract.
    unsafe {
        allgatherv(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            recvcounts,
            displs,
            recvtype,
            comm,
            "MPI_Allgatherv_c",
            Mode::Blocking,
        )
        .map(|_| ())
    }
}

#[allow(clippy::too_many_arguments)]
fn alltoall(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let c = comm_of(comm, func)?;
    let n = c.peer_size() as i64;
    let send = if is_in_place(sendbuf) && !c.is_inter() {
        None
    } else {
        Some(side(sendbuf, sendcount, n, sendtype, func, SEND)?)
    };
    let recv = side(recvbuf, recvcount, n, recvtype, func, RECV)?;
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::alltoall(&c, send.as_ref(), &recv),
        || {
            let (c, send, recv) = (c.clone(), send.clone(), recv.clone());
            move |o| coll::ialltoall(&c, send.as_ref(), &recv, o)
        },
    )
}

pub(crate) fn mpi_alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let (sc, rc) = (sendcount as i64, recvcount as i64);
    alltoall(
        sendbuf,
        sc,
        sendtype,
        recvbuf,
        rc,
        recvtype,
        comm,
        "MPI_Alltoall",
        Mode::Blocking,
    )
    .map(|_| ())
}

pub(crate) fn mpi_alltoall_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let (sc, rc) = (sendcount, recvcount);
    alltoall(
        sendbuf,
        sc,
        sendtype,
        recvbuf,
        rc,
        recvtype,
        comm,
        "MPI_Alltoall_c",
        Mode::Blocking,
    )
    .map(|_| ())
}

/// Alltoallv and alltoallw: per-rank counts, displacements (in elements for v, bytes for w)
/// and datatypes.
///
/// # Safety
/// Every array holds one entry per rank (the send arrays are ignored with `MPI_IN_PLACE`).
#[allow(clippy::too_many_arguments)]
unsafe fn alltoallvw<C: Int, D: Int>(
    sendbuf: *const c_void,
    sendcounts: *const C,
    sdispls: *const D,
    sendtypes: &[MPI_Datatype],
    recvbuf: *mut c_void,
    recvcounts: *const C,
    rdispls: *const D,
    recvtypes: &[MPI_Datatype],
    byte_displs: bool,
    c: &Arc<Comm>,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let n = c.peer_size() as usize;
    let resolve = |handles: &[MPI_Datatype], arg: &str| -> MpiResult<Vec<Arc<Type>>> {
        handles.iter().map(|&h| dtype(h, func, arg)).collect()
    };
    let send = if is_in_place(sendbuf) && !c.is_inter() {
        None
    } else {
        let dts = resolve(sendtypes, "sendtype")?;
        // SAFETY: one entry per rank, per the caller's contract.
        let (counts, displs) = unsafe {
            (
                array(sendcounts, n, func, "sendcounts")?,
                array(sdispls, n, func, "sdispls")?,
            )
        };
        Some(parts(
            sendbuf,
            &counts,
            &displs,
            &dts,
            byte_displs,
            func,
            "sendbuf",
            "sendcounts",
        )?)
    };
    let dts = resolve(recvtypes, "recvtype")?;
    // SAFETY: one entry per rank, per the caller's contract.
    let (counts, displs) = unsafe {
        (
            array(recvcounts, n, func, "recvcounts")?,
            array(rdispls, n, func, "rdispls")?,
        )
    };
    let recv = parts(
        recvbuf,
        &counts,
        &displs,
        &dts,
        byte_displs,
        func,
        "recvbuf",
        "recvcounts",
    )?;
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::alltoallv(c, send.as_deref(), &recv),
        || {
            let (c, send, recv) = (c.clone(), send.clone(), recv.clone());
            move |o| coll::ialltoallv(&c, send.as_deref(), &recv, o)
        },
    )
}

pub(crate) unsafe fn mpi_alltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Alltoallv";
    let c = comm_of(comm, func)?;
    let n = c.peer_size() as usize;
    let (st, rt) = (vec![sendtype; n], vec![recvtype; n]);
    // SAFETY: forwarded caller contract.
    unsafe {
        alltoallvw(
            sendbuf,
            sendcounts,
            sdispls,
            &st,
            recvbuf,
            recvcounts,
            rdispls,
            &rt,
            false,
            &c,
            func,
            Mode::Blocking,
        )
        .map(|_| ())
    }
}

pub(crate) unsafe fn mpi_alltoallv_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Alltoallv_c";
    let c = comm_of(comm, func)?;
    let n = c.peer_size() as usize;
    let (st, rt) = (vec![sendtype; n], vec![recvtype; n]);
    // SAFETY: forwarded caller contract.
    unsafe {
        alltoallvw(
            sendbuf,
            sendcounts,
            sdispls,
            &st,
            recvbuf,
            recvcounts,
            rdispls,
            &rt,
            false,
            &c,
            func,
            Mode::Blocking,
        )
        .map(|_| ())
    }
}

pub(crate) unsafe fn mpi_alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Alltoallw";
    let c = comm_of(comm, func)?;
    let n = c.peer_size() as usize;
    // SAFETY: one type per rank, per the caller's contract (send types unused in place).
    let st = if is_in_place(sendbuf) {
        Vec::new()
    } else {
        unsafe { types(sendtypes, n, func, "sendtypes")? }
    };
    // SAFETY: as above.
    let rt = unsafe { types(recvtypes, n, func, "recvtypes")? };
    // SAFETY: forwarded caller contract.
    unsafe {
        alltoallvw(
            sendbuf,
            sendcounts,
            sdispls,
            &st,
            recvbuf,
            recvcounts,
            rdispls,
            &rt,
            true,
            &c,
            func,
            Mode::Blocking,
        )
        .map(|_| ())
    }
}

pub(crate) unsafe fn mpi_alltoallw_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Alltoallw_c";
    let c = comm_of(comm, func)?;
    let n = c.peer_size() as usize;
    // SAFETY: one type per rank, per the caller's contract (send types unused in place).
    let st = if is_in_place(sendbuf) {
        Vec::new()
    } else {
        unsafe { types(sendtypes, n, func, "sendtypes")? }
    };
    // SAFETY: as above.
    let rt = unsafe { types(recvtypes, n, func, "recvtypes")? };
    // SAFETY: forwarded caller contract.
    unsafe {
        alltoallvw(
            sendbuf,
            sendcounts,
            sdispls,
            &st,
            recvbuf,
            recvcounts,
            rdispls,
            &rt,
            true,
            &c,
            func,
            Mode::Blocking,
        )
        .map(|_| ())
    }
}

// ------------------------------------------------------------------ nonblocking forms

pub(crate) unsafe fn mpi_ibarrier(comm: MPI_Comm, request: *mut MPI_Request) -> MpiResult<()> {
    non_null(request, "MPI_Ibarrier", "request")?;
    let c = comm_of(comm, "MPI_Ibarrier")?;
    let id = core("MPI_Ibarrier", coll::ibarrier(&c, comm))?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(request_handle(id)) };
    Ok(())
}

pub(crate) unsafe fn mpi_ibcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ibcast", "request")?;
    let handle = {
        bcast(
            buffer,
            count as i64,
            datatype,
            root,
            comm,
            "MPI_Ibcast",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ibcast_c(
    buffer: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ibcast_c", "request")?;
    let handle = {
        bcast(
            buffer,
            count,
            datatype,
            root,
            comm,
            "MPI_Ibcast_c",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ireduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ireduce", "request")?;
    let handle = {
        reduce(
            sendbuf,
            recvbuf,
            count as i64,
            datatype,
            op,
            root,
            comm,
            "MPI_Ireduce",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ireduce_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ireduce_c", "request")?;
    let handle = {
        reduce(
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            root,
            comm,
            "MPI_Ireduce_c",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_iallreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Iallreduce", "request")?;
    let handle = {
        let k = AllKind::Allreduce;
        all_reduce(
            k,
            sendbuf,
            recvbuf,
            count as i64,
            datatype,
            op,
            comm,
            "MPI_Iallreduce",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_iallreduce_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Iallreduce_c", "request")?;
    let handle = {
        let k = AllKind::Allreduce;
        all_reduce(
            k,
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            comm,
            "MPI_Iallreduce_c",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_iscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Iscan", "request")?;
    let handle = {
        let k = AllKind::Scan;
        all_reduce(
            k,
            sendbuf,
            recvbuf,
            count as i64,
            datatype,
            op,
            comm,
            "MPI_Iscan",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_iscan_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Iscan_c", "request")?;
    let handle = {
        all_reduce(
            AllKind::Scan,
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            comm,
            "MPI_Iscan_c",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_iexscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Iexscan", "request")?;
    let handle = {
        let k = AllKind::Exscan;
        all_reduce(
            k,
            sendbuf,
            recvbuf,
            count as i64,
            datatype,
            op,
            comm,
            "MPI_Iexscan",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_iexscan_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Iexscan_c", "request")?;
    let handle = {
        let k = AllKind::Exscan;
        all_reduce(
            k,
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            comm,
            "MPI_Iexscan_c",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ireduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ireduce_scatter", "request")?;
    let handle = {
        let func = "MPI_Ireduce_scatter";
        let c = comm_of(comm, func)?;
        // SAFETY: the caller passes one count per rank.
        let counts = unsafe { array(recvcounts, c.size() as usize, func, "recvcounts")? };
        reduce_scatter(
            sendbuf,
            recvbuf,
            &counts,
            datatype,
            op,
            &c,
            func,
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ireduce_scatter_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ireduce_scatter_c", "request")?;
    let handle = {
        let func = "MPI_Ireduce_scatter_c";
        let c = comm_of(comm, func)?;
        // SAFETY: the caller passes one count per rank.
        let counts = unsafe { array(recvcounts, c.size() as usize, func, "recvcounts")? };
        reduce_scatter(
            sendbuf,
            recvbuf,
            &counts,
            datatype,
            op,
            &c,
            func,
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ireduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ireduce_scatter_block", "request")?;
    let handle = {
        let f = "MPI_Ireduce_scatter_block";
        reduce_scatter_block(
            sendbuf,
            recvbuf,
            recvcount as i64,
            datatype,
            op,
            comm,
            f,
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ireduce_scatter_block_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ireduce_scatter_block_c", "request")?;
    let handle = {
        let f = "MPI_Ireduce_scatter_block_c";
        reduce_scatter_block(
            sendbuf,
            recvbuf,
            recvcount,
            datatype,
            op,
            comm,
            f,
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_igather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Igather", "request")?;
    let handle = {
        let (sc, rc) = (sendcount as i64, recvcount as i64);
        gather(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            root,
            comm,
            "MPI_Igather",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_igather_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Igather_c", "request")?;
    let handle = {
        let (sc, rc) = (sendcount, recvcount);
        gather(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            root,
            comm,
            "MPI_Igather_c",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_igatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Igatherv", "request")?;
    let handle = {
        let sc = sendcount as i64;
        // SAFETY: forwarded caller contract.
        unsafe {
            gatherv(
                sendbuf,
                sc,
                sendtype,
                recvbuf,
                recvcounts,
                displs,
                recvtype,
                root,
                comm,
                "MPI_Igatherv",
                Mode::Nonblocking(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_igatherv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Igatherv_c", "request")?;
    let handle = {
        let sc = sendcount;
        // SAFETY: forwarded caller contract.
        unsafe {
            gatherv(
                sendbuf,
                sc,
                sendtype,
                recvbuf,
                recvcounts,
                displs,
                recvtype,
                root,
                comm,
                "MPI_Igatherv_c",
                Mode::Nonblocking(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_iscatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Iscatter", "request")?;
    let handle = {
        let (sc, rc) = (sendcount as i64, recvcount as i64);
        scatter(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            root,
            comm,
            "MPI_Iscatter",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_iscatter_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Iscatter_c", "request")?;
    let handle = {
        let (sc, rc) = (sendcount, recvcount);
        scatter(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            root,
            comm,
            "MPI_Iscatter_c",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_iscatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Iscatterv", "request")?;
    let handle = {
        let rc = recvcount as i64;
        // SAFETY: forwarded caller contract.
        unsafe {
            scatterv(
                sendbuf,
                sendcounts,
                displs,
                sendtype,
                recvbuf,
                rc,
                recvtype,
                root,
                comm,
                "MPI_Iscatterv",
                Mode::Nonblocking(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_iscatterv_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Iscatterv_c", "request")?;
    let handle = {
        let rc = recvcount;
        // SAFETY: forwarded caller contract.
        unsafe {
            scatterv(
                sendbuf,
                sendcounts,
                displs,
                sendtype,
                recvbuf,
                rc,
                recvtype,
                root,
                comm,
                "MPI_Iscatterv_c",
                Mode::Nonblocking(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_iallgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Iallgather", "request")?;
    let handle = {
        let (sc, rc) = (sendcount as i64, recvcount as i64);
        allgather(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            comm,
            "MPI_Iallgather",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_iallgather_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Iallgather_c", "request")?;
    let handle = {
        let (sc, rc) = (sendcount, recvcount);
        allgather(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            comm,
            "MPI_Iallgather_c",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_iallgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Iallgatherv", "request")?;
    let handle = {
        let sc = sendcount as i64;
        // SAFETY: forwarded caller contract.
        unsafe {
            allgatherv(
                sendbuf,
                sc,
                sendtype,
                recvbuf,
                recvcounts,
                displs,
                recvtype,
                comm,
                "MPI_Iallgatherv",
                Mode::Nonblocking(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_iallgatherv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Iallgatherv_c", "request")?;
    let handle = {
        let sc = sendcount;
        // SAFETY: forwarded caller contract.
        unsafe {
            allgatherv(
                sendbuf,
                sc,
                sendtype,
                recvbuf,
                recvcounts,
                displs,
                recvtype,
                comm,
                "MPI_Iallgatherv_c",
                Mode::Nonblocking(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ialltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ialltoall", "request")?;
    let handle = {
        let (sc, rc) = (sendcount as i64, recvcount as i64);
        alltoall(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            comm,
            "MPI_Ialltoall",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ialltoall_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ialltoall_c", "request")?;
    let handle = {
        let (sc, rc) = (sendcount, recvcount);
        alltoall(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            comm,
            "MPI_Ialltoall_c",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ialltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ialltoallv", "request")?;
    let handle = {
        let func = "MPI_Ialltoallv";
        let c = comm_of(comm, func)?;
        let n = c.peer_size() as usize;
        let (st, rt) = (vec![sendtype; n], vec![recvtype; n]);
        // SAFETY: forwarded caller contract.
        unsafe {
            alltoallvw(
                sendbuf,
                sendcounts,
                sdispls,
                &st,
                recvbuf,
                recvcounts,
                rdispls,
                &rt,
                false,
                &c,
                func,
                Mode::Nonblocking(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ialltoallv_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ialltoallv_c", "request")?;
    let handle = {
        let func = "MPI_Ialltoallv_c";
        let c = comm_of(comm, func)?;
        let n = c.peer_size() as usize;
        let (st, rt) = (vec![sendtype; n], vec![recvtype; n]);
        // SAFETY: forwarded caller contract.
        unsafe {
            alltoallvw(
                sendbuf,
                sendcounts,
                sdispls,
                &st,
                recvbuf,
                recvcounts,
                rdispls,
                &rt,
                false,
                &c,
                func,
                Mode::Nonblocking(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ialltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ialltoallw", "request")?;
    let handle = {
        let func = "MPI_Ialltoallw";
        let c = comm_of(comm, func)?;
        let n = c.peer_size() as usize;
        // SAFETY: one type per rank, per the caller's contract (send types unused in place).
        let st = if is_in_place(sendbuf) {
            Vec::new()
        } else {
            unsafe { types(sendtypes, n, func, "sendtypes")? }
        };
        // SAFETY: as above.
        let rt = unsafe { types(recvtypes, n, func, "recvtypes")? };
        // SAFETY: forwarded caller contract.
        unsafe {
            alltoallvw(
                sendbuf,
                sendcounts,
                sdispls,
                &st,
                recvbuf,
                recvcounts,
                rdispls,
                &rt,
                true,
                &c,
                func,
                Mode::Nonblocking(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ialltoallw_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ialltoallw_c", "request")?;
    let handle = {
        let func = "MPI_Ialltoallw_c";
        let c = comm_of(comm, func)?;
        let n = c.peer_size() as usize;
        // SAFETY: one type per rank, per the caller's contract (send types unused in place).
        let st = if is_in_place(sendbuf) {
            Vec::new()
        } else {
            unsafe { types(sendtypes, n, func, "sendtypes")? }
        };
        // SAFETY: as above.
        let rt = unsafe { types(recvtypes, n, func, "recvtypes")? };
        // SAFETY: forwarded caller contract.
        unsafe {
            alltoallvw(
                sendbuf,
                sendcounts,
                sdispls,
                &st,
                recvbuf,
                recvcounts,
                rdispls,
                &rt,
                true,
                &c,
                func,
                Mode::Nonblocking(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

// ------------------------------------------------------------------ persistent forms

pub(crate) unsafe fn mpi_barrier_init(
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let _ = info;
    non_null(request, "MPI_Barrier_init", "request")?;
    let c = comm_of(comm, "MPI_Barrier_init")?;
    let id = {
        let c2 = c.clone();
        coll::persistent::init(&c, comm, move |o| coll::ibarrier(&c2, o))
    };
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(request_handle(id)) };
    Ok(())
}

pub(crate) unsafe fn mpi_bcast_init(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Bcast_init", "request")?;
    let _ = info;
    let handle = {
        bcast(
            buffer,
            count as i64,
            datatype,
            root,
            comm,
            "MPI_Bcast_init",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_bcast_init_c(
    buffer: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Bcast_init_c", "request")?;
    let _ = info;
    let handle = {
        bcast(
            buffer,
            count,
            datatype,
            root,
            comm,
            "MPI_Bcast_init_c",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_reduce_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Reduce_init", "request")?;
    let _ = info;
    let handle = {
        reduce(
            sendbuf,
            recvbuf,
            count as i64,
            datatype,
            op,
            root,
            comm,
            "MPI_Reduce_init",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_reduce_init_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Reduce_init_c", "request")?;
    let _ = info;
    let handle = {
        reduce(
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            root,
            comm,
            "MPI_Reduce_init_c",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_allreduce_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Allreduce_init", "request")?;
    let _ = info;
    let handle = {
        let k = AllKind::Allreduce;
        all_reduce(
            k,
            sendbuf,
            recvbuf,
            count as i64,
            datatype,
            op,
            comm,
            "MPI_Allreduce_init",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_allreduce_init_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Allreduce_init_c", "request")?;
    let _ = info;
    let handle = {
        let k = AllKind::Allreduce;
        all_reduce(
            k,
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            comm,
            "MPI_Allreduce_init_c",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_scan_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Scan_init", "request")?;
    let _ = info;
    let handle = {
        let k = AllKind::Scan;
        all_reduce(
            k,
            sendbuf,
            recvbuf,
            count as i64,
            datatype,
            op,
            comm,
            "MPI_Scan_init",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_scan_init_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Scan_init_c", "request")?;
    let _ = info;
    let handle = {
        all_reduce(
            AllKind::Scan,
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            comm,
            "MPI_Scan_init_c",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_exscan_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Exscan_init", "request")?;
    let _ = info;
    let handle = {
        let k = AllKind::Exscan;
        all_reduce(
            k,
            sendbuf,
            recvbuf,
            count as i64,
            datatype,
            op,
            comm,
            "MPI_Exscan_init",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_exscan_init_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Exscan_init_c", "request")?;
    let _ = info;
    let handle = {
        let k = AllKind::Exscan;
        all_reduce(
            k,
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            comm,
            "MPI_Exscan_init_c",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_reduce_scatter_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Reduce_scatter_init", "request")?;
    let _ = info;
    let handle = {
        let func = "MPI_Reduce_scatter_init";
        let c = comm_of(comm, func)?;
        // SAFETY: the caller passes one count per rank.
        let counts = unsafe { array(recvcounts, c.size() as usize, func, "recvcounts")? };
        reduce_scatter(
            sendbuf,
            recvbuf,
            &counts,
            datatype,
            op,
            &c,
            func,
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_reduce_scatter_init_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Reduce_scatter_init_c", "request")?;
    let _ = info;
    let handle = {
        let func = "MPI_Reduce_scatter_init_c";
        let c = comm_of(comm, func)?;
        // SAFETY: the caller passes one count per rank.
        let counts = unsafe { array(recvcounts, c.size() as usize, func, "recvcounts")? };
        reduce_scatter(
            sendbuf,
            recvbuf,
            &counts,
            datatype,
            op,
            &c,
            func,
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_reduce_scatter_block_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Reduce_scatter_block_init", "request")?;
    let _ = info;
    let handle = {
        let f = "MPI_Reduce_scatter_block_init";
        reduce_scatter_block(
            sendbuf,
            recvbuf,
            recvcount as i64,
            datatype,
            op,
            comm,
            f,
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_reduce_scatter_block_init_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Reduce_scatter_block_init_c", "request")?;
    let _ = info;
    let handle = {
        let f = "MPI_Reduce_scatter_block_init_c";
        reduce_scatter_block(
            sendbuf,
            recvbuf,
            recvcount,
            datatype,
            op,
            comm,
            f,
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_gather_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Gather_init", "request")?;
    let _ = info;
    let handle = {
        let (sc, rc) = (sendcount as i64, recvcount as i64);
        gather(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            root,
            comm,
            "MPI_Gather_init",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_gather_init_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Gather_init_c", "request")?;
    let _ = info;
    let handle = {
        let (sc, rc) = (sendcount, recvcount);
        gather(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            root,
            comm,
            "MPI_Gather_init_c",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_gatherv_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Gatherv_init", "request")?;
    let _ = info;
    let handle = {
        let sc = sendcount as i64;
        // SAFETY: forwarded caller contract.
        unsafe {
            gatherv(
                sendbuf,
                sc,
                sendtype,
                recvbuf,
                recvcounts,
                displs,
                recvtype,
                root,
                comm,
                "MPI_Gatherv_init",
                Mode::Persistent(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_gatherv_init_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Gatherv_init_c", "request")?;
    let _ = info;
    let handle = {
        let sc = sendcount;
        // SAFETY: forwarded caller contract.
        unsafe {
            gatherv(
                sendbuf,
                sc,
                sendtype,
                recvbuf,
                recvcounts,
                displs,
                recvtype,
                root,
                comm,
                "MPI_Gatherv_init_c",
                Mode::Persistent(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_scatter_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Scatter_init", "request")?;
    let _ = info;
    let handle = {
        let (sc, rc) = (sendcount as i64, recvcount as i64);
        scatter(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            root,
            comm,
            "MPI_Scatter_init",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_scatter_init_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Scatter_init_c", "request")?;
    let _ = info;
    let handle = {
        let (sc, rc) = (sendcount, recvcount);
        scatter(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            root,
            comm,
            "MPI_Scatter_init_c",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_scatterv_init(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Scatterv_init", "request")?;
    let _ = info;
    let handle = {
        let rc = recvcount as i64;
        // SAFETY: forwarded caller contract.
        unsafe {
            scatterv(
                sendbuf,
                sendcounts,
                displs,
                sendtype,
                recvbuf,
                rc,
                recvtype,
                root,
                comm,
                "MPI_Scatterv_init",
                Mode::Persistent(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_scatterv_init_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Scatterv_init_c", "request")?;
    let _ = info;
    let handle = {
        let rc = recvcount;
        // SAFETY: forwarded caller contract.
        unsafe {
            scatterv(
                sendbuf,
                sendcounts,
                displs,
                sendtype,
                recvbuf,
                rc,
                recvtype,
                root,
                comm,
                "MPI_Scatterv_init_c",
                Mode::Persistent(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_allgather_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Allgather_init", "request")?;
    let _ = info;
    let handle = {
        let (sc, rc) = (sendcount as i64, recvcount as i64);
        allgather(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            comm,
            "MPI_Allgather_init",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_allgather_init_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Allgather_init_c", "request")?;
    let _ = info;
    let handle = {
        let (sc, rc) = (sendcount, recvcount);
        allgather(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            comm,
            "MPI_Allgather_init_c",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_allgatherv_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Allgatherv_init", "request")?;
    let _ = info;
    let handle = {
        let sc = sendcount as i64;
        // SAFETY: forwarded caller contract.
        unsafe {
            allgatherv(
                sendbuf,
                sc,
                sendtype,
                recvbuf,
                recvcounts,
                displs,
                recvtype,
                comm,
                "MPI_Allgatherv_init",
                Mode::Persistent(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_allgatherv_init_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Allgatherv_init_c", "request")?;
    let _ = info;
    let handle = {
        let sc = sendcount;
        // SAFETY: forwarded caller contract.
        unsafe {
            allgatherv(
                sendbuf,
                sc,
                sendtype,
                recvbuf,
                recvcounts,
                displs,
                recvtype,
                comm,
                "MPI_Allgatherv_init_c",
                Mode::Persistent(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_alltoall_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Alltoall_init", "request")?;
    let _ = info;
    let handle = {
        let (sc, rc) = (sendcount as i64, recvcount as i64);
        alltoall(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            comm,
            "MPI_Alltoall_init",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_alltoall_init_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Alltoall_init_c", "request")?;
    let _ = info;
    let handle = {
        let (sc, rc) = (sendcount, recvcount);
        alltoall(
            sendbuf,
            sc,
            sendtype,
            recvbuf,
            rc,
            recvtype,
            comm,
            "MPI_Alltoall_init_c",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_alltoallv_init(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Alltoallv_init", "request")?;
    let _ = info;
    let handle = {
        let func = "MPI_Alltoallv_init";
        let c = comm_of(comm, func)?;
        let n = c.peer_size() as usize;
        let (st, rt) = (vec![sendtype; n], vec![recvtype; n]);
        // SAFETY: forwarded caller contract.
        unsafe {
            alltoallvw(
                sendbuf,
                sendcounts,
                sdispls,
                &st,
                recvbuf,
                recvcounts,
                rdispls,
                &rt,
                false,
                &c,
                func,
                Mode::Persistent(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_alltoallv_init_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Alltoallv_init_c", "request")?;
    let _ = info;
    let handle = {
        let func = "MPI_Alltoallv_init_c";
        let c = comm_of(comm, func)?;
        let n = c.peer_size() as usize;
        let (st, rt) = (vec![sendtype; n], vec![recvtype; n]);
        // SAFETY: forwarded caller contract.
        unsafe {
            alltoallvw(
                sendbuf,
                sendcounts,
                sdispls,
                &st,
                recvbuf,
                recvcounts,
                rdispls,
                &rt,
                false,
                &c,
                func,
                Mode::Persistent(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_alltoallw_init(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Alltoallw_init", "request")?;
    let _ = info;
    let handle = {
        let func = "MPI_Alltoallw_init";
        let c = comm_of(comm, func)?;
        let n = c.peer_size() as usize;
        // SAFETY: one type per rank, per the caller's contract (send types unused in place).
        let st = if is_in_place(sendbuf) {
            Vec::new()
        } else {
            unsafe { types(sendtypes, n, func, "sendtypes")? }
        };
        // SAFETY: as above.
        let rt = unsafe { types(recvtypes, n, func, "recvtypes")? };
        // SAFETY: forwarded caller contract.
        unsafe {
            alltoallvw(
                sendbuf,
                sendcounts,
                sdispls,
                &st,
                recvbuf,
                recvcounts,
                rdispls,
                &rt,
                true,
                &c,
                func,
                Mode::Persistent(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_alltoallw_init_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Alltoallw_init_c", "request")?;
    let _ = info;
    let handle = {
        let func = "MPI_Alltoallw_init_c";
        let c = comm_of(comm, func)?;
        let n = c.peer_size() as usize;
        // SAFETY: one type per rank, per the caller's contract (send types unused in place).
        let st = if is_in_place(sendbuf) {
            Vec::new()
        } else {
            unsafe { types(sendtypes, n, func, "sendtypes")? }
        };
        // SAFETY: as above.
        let rt = unsafe { types(recvtypes, n, func, "recvtypes")? };
        // SAFETY: forwarded caller contract.
        unsafe {
            alltoallvw(
                sendbuf,
                sendcounts,
                sdispls,
                &st,
                recvbuf,
                recvcounts,
                rdispls,
                &rt,
                true,
                &c,
                func,
                Mode::Persistent(comm),
            )
        }
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}
