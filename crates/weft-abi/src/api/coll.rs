//! Collective operations on intracommunicators: blocking forms and their `_c` variants.
//! Arguments are checked here (communicator, root, counts, datatypes, buffers, op); the
//! algorithms are in `weft_core::coll`.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use weft_core::coll;
use weft_core::datatype::{Buf, Datatype, TypeClass};
use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::object::Comm;
use weft_core::op::Reduction;

use crate::api::op::reduction;
use crate::api::pt2pt::prefix;
use crate::args::non_null;
use crate::constants::*;
use crate::ctypes::*;
use crate::{datatypes, objects};

fn is_in_place(p: *const c_void) -> bool {
    p as usize == MPI_IN_PLACE
}

fn comm_of(comm: MPI_Comm, func: &str) -> MpiResult<Arc<Comm>> {
    objects::comm(comm, func, "comm")
}

fn root_of(c: &Comm, root: c_int, func: &str) -> MpiResult<u32> {
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

/// A datatype collectives can move: predefined, contiguous or a value-index pair (moved with
/// its padding).
fn dtype(handle: MPI_Datatype, func: &str, arg: &str) -> MpiResult<&'static Datatype> {
    let dt = datatypes::datatype(handle, func, arg)?;
    if !dt.is_contiguous() && dt.class != TypeClass::Pair {
        return Err(MpiError::new(
            ErrorClass::UnsupportedOperation,
            format!(
                "{func}({arg}={}): types with gaps are not supported yet",
                dt.name
            ),
        ));
    }
    Ok(dt)
}

/// `count` elements of `dt` at address `addr`.
fn buf_at(
    addr: usize,
    count: i64,
    dt: &Datatype,
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
        .and_then(|c| c.checked_mul(dt.extent))
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| {
            MpiError::new(
                ErrorClass::Count,
                format!("{func}({count_arg}={count}): the message size overflows"),
            )
        })?;
    if addr == 0 && bytes > 0 {
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
    // SAFETY: the MPI standard obliges the caller to pass a buffer holding `count` elements
    // and to leave it alone until the collective completes.
    Ok(unsafe { Buf::new(addr, bytes) })
}

/// An integer type of count and displacement arrays.
trait Int: Copy {
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
unsafe fn array<T: Int>(p: *const T, n: usize, func: &str, arg: &str) -> MpiResult<Vec<i64>> {
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
unsafe fn types(
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

/// Per-rank parts of a `v` buffer: `counts[i]` elements at `base + displs[i] * scale`.
#[allow(clippy::too_many_arguments)]
fn parts(
    base: *const c_void,
    counts: &[i64],
    displs: &[i64],
    dts: &[&Datatype],
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

fn op_for(
    op: MPI_Op,
    datatype: MPI_Datatype,
    func: &str,
) -> MpiResult<(&'static Datatype, Reduction)> {
    let dt = dtype(datatype, func, "datatype")?;
    let red = reduction(op, datatype, dt, func)?;
    Ok((dt, red))
}

/// The send side of a reduction: `None` for `MPI_IN_PLACE`.
fn send_side(
    sendbuf: *const c_void,
    count: i64,
    dt: &Datatype,
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

fn core<T>(func: &str, r: MpiResult<T>) -> MpiResult<T> {
    r.map_err(|e| prefix(func, e))
}

// ------------------------------------------------------------------ barrier, bcast

pub(crate) fn mpi_barrier(comm: MPI_Comm) -> MpiResult<()> {
    let c = comm_of(comm, "MPI_Barrier")?;
    core("MPI_Barrier", coll::barrier(&c))
}

fn bcast(
    buffer: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    func: &str,
) -> MpiResult<()> {
    let c = comm_of(comm, func)?;
    let root = root_of(&c, root, func)?;
    let dt = dtype(datatype, func, "datatype")?;
    let buf = buf_at(buffer as usize, count, dt, func, "buffer", "count")?;
    core(func, coll::bcast(&c, &buf, root))
}

pub(crate) fn mpi_bcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    bcast(buffer, count as i64, datatype, root, comm, "MPI_Bcast")
}

pub(crate) fn mpi_bcast_c(
    buffer: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    bcast(buffer, count, datatype, root, comm, "MPI_Bcast_c")
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
) -> MpiResult<()> {
    let c = comm_of(comm, func)?;
    let root = root_of(&c, root, func)?;
    let (dt, red) = op_for(op, datatype, func)?;
    let is_root = c.rank == root;
    let send = send_side(sendbuf, count, dt, is_root, func)?;
    let recv = if is_root {
        buf_at(recvbuf as usize, count, dt, func, "recvbuf", "count")?
    } else {
        Buf::EMPTY
    };
    if is_root {
        check_alias(&send, &recv, func)?;
    }
    core(func, coll::reduce(&c, send.as_ref(), &recv, &red, root))
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
    reduce(
        sendbuf,
        recvbuf,
        count as i64,
        datatype,
        op,
        root,
        comm,
        "MPI_Reduce",
    )
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
    )
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
) -> MpiResult<()> {
    let c = comm_of(comm, func)?;
    let (dt, red) = op_for(op, datatype, func)?;
    let send = send_side(sendbuf, count, dt, true, func)?;
    let recv = buf_at(recvbuf as usize, count, dt, func, "recvbuf", "count")?;
    check_alias(&send, &recv, func)?;
    let r = match kind {
        AllKind::Allreduce => coll::allreduce(&c, send.as_ref(), &recv, &red),
        AllKind::Scan => coll::scan(&c, send.as_ref(), &recv, &red),
        AllKind::Exscan => coll::exscan(&c, send.as_ref(), &recv, &red),
    };
    core(func, r)
}

pub(crate) fn mpi_allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
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
    )
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
    )
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
    )
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
    )
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
    )
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
    )
}

fn reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
    op: MPI_Op,
    func: &str,
) -> MpiResult<()> {
    let (dt, red) = op_for(op, datatype, func)?;
    let input = buf_at(inbuf as usize, count, dt, func, "inbuf", "count")?;
    let inout = buf_at(inoutbuf as usize, count, dt, func, "inoutbuf", "count")?;
    core(func, coll::reduce_local(&input, &inout, &red))
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
    )
}

pub(crate) fn mpi_reduce_local_c(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> MpiResult<()> {
    reduce_local(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local_c")
}

/// Reduce-scatter with `counts[i]` elements for rank i.
#[allow(clippy::too_many_arguments)]
fn reduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: &[i64],
    datatype: MPI_Datatype,
    op: MPI_Op,
    c: &Comm,
    func: &str,
) -> MpiResult<()> {
    let (dt, red) = op_for(op, datatype, func)?;
    let mut sizes = Vec::with_capacity(counts.len());
    for (i, &n) in counts.iter().enumerate() {
        let b = buf_at(1 << 12, n, dt, func, "recvbuf", &format!("recvcounts[{i}]"))?;
        sizes.push(b.len());
    }
    let total: i64 = counts.iter().sum();
    let mine = counts[c.rank as usize];
    let output = buf_at(recvbuf as usize, mine, dt, func, "recvbuf", "recvcount")?;
    let input = if is_in_place(sendbuf) {
        buf_at(recvbuf as usize, total, dt, func, "recvbuf", "recvcounts")?
    } else {
        let s = buf_at(sendbuf as usize, total, dt, func, "sendbuf", "recvcounts")?;
        check_alias(&Some(s.clone()), &output, func)?;
        s
    };
    core(func, coll::reduce_scatter(c, &input, &output, &red, &sizes))
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
    reduce_scatter(sendbuf, recvbuf, &counts, datatype, op, &c, func)
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
    reduce_scatter(sendbuf, recvbuf, &counts, datatype, op, &c, func)
}

fn reduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: i64,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    func: &str,
) -> MpiResult<()> {
    let c = comm_of(comm, func)?;
    if recvcount < 0 {
        return Err(MpiError::new(
            ErrorClass::Count,
            format!("{func}(recvcount={recvcount}): negative count"),
        ));
    }
    let counts = vec![recvcount; c.size() as usize];
    reduce_scatter(sendbuf, recvbuf, &counts, datatype, op, &c, func)
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
    reduce_scatter_block(sendbuf, recvbuf, recvcount as i64, datatype, op, comm, f)
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
    reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, f)
}

// ------------------------------------------------------------------ gather, scatter

/// One side of a regular gather/scatter/allgather/alltoall: `count` elements (times `times`
/// blocks) of `datatype` at `buf`.
fn side(
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
        dt,
        func,
        names.0,
        names.1,
    )
}

const SEND: (&str, &str, &str) = ("sendbuf", "sendcount", "sendtype");
const RECV: (&str, &str, &str) = ("recvbuf", "recvcount", "recvtype");

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
) -> MpiResult<()> {
    let c = comm_of(comm, func)?;
    let root = root_of(&c, root, func)?;
    let is_root = c.rank == root;
    let n = c.size() as i64;
    let send = if is_in_place(sendbuf) && is_root {
        None
    } else {
        Some(side(sendbuf, sendcount, 1, sendtype, func, SEND)?)
    };
    let recv = if is_root {
        side(recvbuf, recvcount, n, recvtype, func, RECV)?
    } else {
        Buf::EMPTY
    };
    core(func, coll::gather(&c, send.as_ref(), &recv, root))
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
    )
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
    )
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
) -> MpiResult<()> {
    let c = comm_of(comm, func)?;
    let root = root_of(&c, root, func)?;
    let is_root = c.rank == root;
    let n = c.size() as usize;
    let send = if is_in_place(sendbuf) && is_root {
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
    core(func, coll::gatherv(&c, send.as_ref(), &recv, root))
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
        )
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
        )
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
) -> MpiResult<()> {
    let c = comm_of(comm, func)?;
    let root = root_of(&c, root, func)?;
    let is_root = c.rank == root;
    let n = c.size() as i64;
    let send = if is_root {
        side(sendbuf, sendcount, n, sendtype, func, SEND)?
    } else {
        Buf::EMPTY
    };
    let recv = if is_in_place(recvbuf) && is_root {
        None
    } else {
        Some(side(recvbuf, recvcount, 1, recvtype, func, RECV)?)
    };
    core(func, coll::scatter(&c, &send, recv.as_ref(), root))
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
    )
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
    )
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
) -> MpiResult<()> {
    let c = comm_of(comm, func)?;
    let root = root_of(&c, root, func)?;
    let is_root = c.rank == root;
    let n = c.size() as usize;
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
    let recv = if is_in_place(recvbuf) && is_root {
        None
    } else {
        Some(side(recvbuf, recvcount, 1, recvtype, func, RECV)?)
    };
    core(func, coll::scatterv(&c, &send, recv.as_ref(), root))
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
        )
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
        )
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
) -> MpiResult<()> {
    let c = comm_of(comm, func)?;
    let n = c.size() as i64;
    let send = if is_in_place(sendbuf) {
        None
    } else {
        Some(side(sendbuf, sendcount, 1, sendtype, func, SEND)?)
    };
    let recv = side(recvbuf, recvcount, n, recvtype, func, RECV)?;
    core(func, coll::allgather(&c, send.as_ref(), &recv))
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
    )
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
    )
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
) -> MpiResult<()> {
    let c = comm_of(comm, func)?;
    let n = c.size() as usize;
    let send = if is_in_place(sendbuf) {
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
    core(func, coll::allgatherv(&c, send.as_ref(), &recv))
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
        )
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
        )
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
) -> MpiResult<()> {
    let c = comm_of(comm, func)?;
    let n = c.size() as i64;
    let send = if is_in_place(sendbuf) {
        None
    } else {
        Some(side(sendbuf, sendcount, n, sendtype, func, SEND)?)
    };
    let recv = side(recvbuf, recvcount, n, recvtype, func, RECV)?;
    core(func, coll::alltoall(&c, send.as_ref(), &recv))
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
    )
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
    )
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
    c: &Comm,
    func: &str,
) -> MpiResult<()> {
    let n = c.size() as usize;
    let resolve = |handles: &[MPI_Datatype], arg: &str| -> MpiResult<Vec<&'static Datatype>> {
        handles.iter().map(|&h| dtype(h, func, arg)).collect()
    };
    let send = if is_in_place(sendbuf) {
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
    core(func, coll::alltoallv(c, send.as_deref(), &recv))
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
    let n = c.size() as usize;
    let (st, rt) = (vec![sendtype; n], vec![recvtype; n]);
    // SAFETY: forwarded caller contract.
    unsafe {
        alltoallvw(
            sendbuf, sendcounts, sdispls, &st, recvbuf, recvcounts, rdispls, &rt, false, &c, func,
        )
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
    let n = c.size() as usize;
    let (st, rt) = (vec![sendtype; n], vec![recvtype; n]);
    // SAFETY: forwarded caller contract.
    unsafe {
        alltoallvw(
            sendbuf, sendcounts, sdispls, &st, recvbuf, recvcounts, rdispls, &rt, false, &c, func,
        )
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
    let n = c.size() as usize;
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
            sendbuf, sendcounts, sdispls, &st, recvbuf, recvcounts, rdispls, &rt, true, &c, func,
        )
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
    let n = c.size() as usize;
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
            sendbuf, sendcounts, sdispls, &st, recvbuf, recvcounts, rdispls, &rt, true, &c, func,
        )
    }
}
