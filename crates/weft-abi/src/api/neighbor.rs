//! Neighbourhood collectives (`MPI_Neighbor_*`, `MPI_Ineighbor_*`, `MPI_Neighbor_*_init`,
//! and their `_c` forms) on Cartesian, graph and distributed-graph communicators. Every form
//! becomes one buffer per destination and per source for `coll::ineighbor_alltoallv`.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use weft_core::coll::{self, Neighbors};
use weft_core::datatype::Buf;
use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::object::Comm;

use crate::api::coll::{
    array, dtype, finish, intra_of, is_in_place, keep, parts, side, types, Int, Mode, SEND,
};
use crate::args::non_null;
use crate::ctypes::*;

fn topo_comm(comm: MPI_Comm, func: &str) -> MpiResult<(Arc<Comm>, Neighbors)> {
    let c = intra_of(comm, func)?;
    let nb = Neighbors::of(&c, func)?;
    Ok((c, nb))
}

fn no_in_place(p: *const c_void, func: &str, arg: &str) -> MpiResult<()> {
    if is_in_place(p) {
        return Err(MpiError::new(
            ErrorClass::Buffer,
            format!("{func}({arg}=MPI_IN_PLACE): not allowed in neighbourhood collectives"),
        ));
    }
    Ok(())
}

fn run(
    func: &str,
    nb: Mode,
    c: Arc<Comm>,
    n: Neighbors,
    send: Vec<Buf>,
    recv: Vec<Buf>,
) -> MpiResult<MPI_Request> {
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::neighbor_alltoallv(&c, &n, &send, &recv),
        || {
            let (c, n, send, recv) = (c.clone(), n.clone(), send.clone(), recv.clone());
            move |o| coll::ineighbor_alltoallv(&c, &n, &send, &recv, o)
        },
    )
}

/// `count` instances per neighbour, block k at `k * count * extent`.
fn blocks(
    buf: *const c_void,
    count: i64,
    datatype: MPI_Datatype,
    n: usize,
    func: &str,
    names: (&str, &str, &str),
) -> MpiResult<Vec<Buf>> {
    let t = dtype(datatype, func, names.2)?;
    if count < 0 {
        return Err(MpiError::new(
            ErrorClass::Count,
            format!("{func}({}={count}): negative count", names.1),
        ));
    }
    let displs: Vec<i64> = (0..n as i64).map(|k| k * count).collect();
    parts(
        buf,
        &vec![count; n],
        &displs,
        &vec![t; n],
        false,
        func,
        names.0,
        names.1,
    )
}

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
    let (c, n) = topo_comm(comm, func)?;
    no_in_place(sendbuf, func, "sendbuf")?;
    let s = side(sendbuf, sendcount, 1, sendtype, func, SEND)?;
    let send = vec![s; n.destinations.len()];
    let recv = blocks(recvbuf, recvcount, recvtype, n.sources.len(), func, RECV3)?;
    run(func, nb, c, n, send, recv)
}

const RECV3: (&str, &str, &str) = ("recvbuf", "recvcount", "recvtype");
const SEND3: (&str, &str, &str) = ("sendbuf", "sendcount", "sendtype");

/// # Safety
/// `recvcounts` and `displs` hold one entry per source.
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
    let (c, n) = topo_comm(comm, func)?;
    no_in_place(sendbuf, func, "sendbuf")?;
    let s = side(sendbuf, sendcount, 1, sendtype, func, SEND)?;
    let send = vec![s; n.destinations.len()];
    let k = n.sources.len();
    let t = dtype(recvtype, func, "recvtype")?;
    // SAFETY: one entry per source, per the caller's contract.
    let (counts, displs) = unsafe {
        (
            array(recvcounts, k, func, "recvcounts")?,
            array(displs, k, func, "displs")?,
        )
    };
    let recv = parts(
        recvbuf,
        &counts,
        &displs,
        &vec![t; k],
        false,
        func,
        "recvbuf",
        "recvcounts",
    )?;
    run(func, nb, c, n, send, recv)
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
    let (c, n) = topo_comm(comm, func)?;
    no_in_place(sendbuf, func, "sendbuf")?;
    let send = blocks(
        sendbuf,
        sendcount,
        sendtype,
        n.destinations.len(),
        func,
        SEND3,
    )?;
    let recv = blocks(recvbuf, recvcount, recvtype, n.sources.len(), func, RECV3)?;
    run(func, nb, c, n, send, recv)
}

/// # Safety
/// Count and displacement arrays hold one entry per destination (send) or source (receive);
/// `sendtypes`/`recvtypes` likewise when given (the `w` forms, byte displacements).
#[allow(clippy::too_many_arguments)]
unsafe fn alltoallvw<C: Int, D: Int>(
    sendbuf: *const c_void,
    sendcounts: *const C,
    sdispls: *const D,
    sendtypes: Result<*const MPI_Datatype, MPI_Datatype>,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    rdispls: *const D,
    recvtypes: Result<*const MPI_Datatype, MPI_Datatype>,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let (c, n) = topo_comm(comm, func)?;
    no_in_place(sendbuf, func, "sendbuf")?;
    let (out, inn) = (n.destinations.len(), n.sources.len());
    let byte_displs = sendtypes.is_ok();
    // SAFETY: array lengths per the caller's contract.
    let (st, rt) = unsafe {
        (
            match sendtypes {
                Ok(p) => types(p, out, func, "sendtypes")?,
                Err(h) => vec![h; out],
            },
            match recvtypes {
                Ok(p) => types(p, inn, func, "recvtypes")?,
                Err(h) => vec![h; inn],
            },
        )
    };
    let st = st
        .iter()
        .map(|&h| dtype(h, func, "sendtypes"))
        .collect::<MpiResult<Vec<_>>>()?;
    let rt = rt
        .iter()
        .map(|&h| dtype(h, func, "recvtypes"))
        .collect::<MpiResult<Vec<_>>>()?;
    // SAFETY: as above.
    let (sc, sd, rc, rd) = unsafe {
        (
            array(sendcounts, out, func, "sendcounts")?,
            array(sdispls, out, func, "sdispls")?,
            array(recvcounts, inn, func, "recvcounts")?,
            array(rdispls, inn, func, "rdispls")?,
        )
    };
    let send = parts(
        sendbuf,
        &sc,
        &sd,
        &st,
        byte_displs,
        func,
        "sendbuf",
        "sendcounts",
    )?;
    let recv = parts(
        recvbuf,
        &rc,
        &rd,
        &rt,
        byte_displs,
        func,
        "recvbuf",
        "recvcounts",
    )?;
    run(func, nb, c, n, send, recv)
}

pub(crate) fn mpi_neighbor_allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let handle = allgather(
        sendbuf,
        sendcount as i64,
        sendtype,
        recvbuf,
        recvcount as i64,
        recvtype,
        comm,
        "MPI_Neighbor_allgather",
        Mode::Blocking,
    )?;
    let _ = handle;
    Ok(())
}

pub(crate) fn mpi_neighbor_allgather_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let handle = allgather(
        sendbuf,
        sendcount as i64,
        sendtype,
        recvbuf,
        recvcount as i64,
        recvtype,
        comm,
        "MPI_Neighbor_allgather_c",
        Mode::Blocking,
    )?;
    let _ = handle;
    Ok(())
}

pub(crate) unsafe fn mpi_ineighbor_allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ineighbor_allgather", "request")?;
    let handle = allgather(
        sendbuf,
        sendcount as i64,
        sendtype,
        recvbuf,
        recvcount as i64,
        recvtype,
        comm,
        "MPI_Ineighbor_allgather",
        Mode::Nonblocking(comm),
    )?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ineighbor_allgather_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ineighbor_allgather_c", "request")?;
    let handle = allgather(
        sendbuf,
        sendcount as i64,
        sendtype,
        recvbuf,
        recvcount as i64,
        recvtype,
        comm,
        "MPI_Ineighbor_allgather_c",
        Mode::Nonblocking(comm),
    )?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_neighbor_allgather_init(
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
    let _ = info;
    non_null(request, "MPI_Neighbor_allgather_init", "request")?;
    let handle = allgather(
        sendbuf,
        sendcount as i64,
        sendtype,
        recvbuf,
        recvcount as i64,
        recvtype,
        comm,
        "MPI_Neighbor_allgather_init",
        Mode::Persistent(comm),
    )?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_neighbor_allgather_init_c(
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
    let _ = info;
    non_null(request, "MPI_Neighbor_allgather_init_c", "request")?;
    let handle = allgather(
        sendbuf,
        sendcount as i64,
        sendtype,
        recvbuf,
        recvcount as i64,
        recvtype,
        comm,
        "MPI_Neighbor_allgather_init_c",
        Mode::Persistent(comm),
    )?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_neighbor_allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        allgatherv(
            sendbuf,
            sendcount as i64,
            sendtype,
            recvbuf,
            recvcounts,
            displs,
            recvtype,
            comm,
            "MPI_Neighbor_allgatherv",
            Mode::Blocking,
        )
    }?;
    let _ = handle;
    Ok(())
}

pub(crate) unsafe fn mpi_neighbor_allgatherv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        allgatherv(
            sendbuf,
            sendcount as i64,
            sendtype,
            recvbuf,
            recvcounts,
            displs,
            recvtype,
            comm,
            "MPI_Neighbor_allgatherv_c",
            Mode::Blocking,
        )
    }?;
    let _ = handle;
    Ok(())
}

pub(crate) unsafe fn mpi_ineighbor_allgatherv(
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
    non_null(request, "MPI_Ineighbor_allgatherv", "request")?;
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        allgatherv(
            sendbuf,
            sendcount as i64,
            sendtype,
            recvbuf,
            recvcounts,
            displs,
            recvtype,
            comm,
            "MPI_Ineighbor_allgatherv",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ineighbor_allgatherv_c(
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
    non_null(request, "MPI_Ineighbor_allgatherv_c", "request")?;
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        allgatherv(
            sendbuf,
            sendcount as i64,
            sendtype,
            recvbuf,
            recvcounts,
            displs,
            recvtype,
            comm,
            "MPI_Ineighbor_allgatherv_c",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_neighbor_allgatherv_init(
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
    let _ = info;
    non_null(request, "MPI_Neighbor_allgatherv_init", "request")?;
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        allgatherv(
            sendbuf,
            sendcount as i64,
            sendtype,
            recvbuf,
            recvcounts,
            displs,
            recvtype,
            comm,
            "MPI_Neighbor_allgatherv_init",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_neighbor_allgatherv_init_c(
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
    let _ = info;
    non_null(request, "MPI_Neighbor_allgatherv_init_c", "request")?;
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        allgatherv(
            sendbuf,
            sendcount as i64,
            sendtype,
            recvbuf,
            recvcounts,
            displs,
            recvtype,
            comm,
            "MPI_Neighbor_allgatherv_init_c",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) fn mpi_neighbor_alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let handle = alltoall(
        sendbuf,
        sendcount as i64,
        sendtype,
        recvbuf,
        recvcount as i64,
        recvtype,
        comm,
        "MPI_Neighbor_alltoall",
        Mode::Blocking,
    )?;
    let _ = handle;
    Ok(())
}

pub(crate) fn mpi_neighbor_alltoall_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let handle = alltoall(
        sendbuf,
        sendcount as i64,
        sendtype,
        recvbuf,
        recvcount as i64,
        recvtype,
        comm,
        "MPI_Neighbor_alltoall_c",
        Mode::Blocking,
    )?;
    let _ = handle;
    Ok(())
}

pub(crate) unsafe fn mpi_ineighbor_alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ineighbor_alltoall", "request")?;
    let handle = alltoall(
        sendbuf,
        sendcount as i64,
        sendtype,
        recvbuf,
        recvcount as i64,
        recvtype,
        comm,
        "MPI_Ineighbor_alltoall",
        Mode::Nonblocking(comm),
    )?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ineighbor_alltoall_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ineighbor_alltoall_c", "request")?;
    let handle = alltoall(
        sendbuf,
        sendcount as i64,
        sendtype,
        recvbuf,
        recvcount as i64,
        recvtype,
        comm,
        "MPI_Ineighbor_alltoall_c",
        Mode::Nonblocking(comm),
    )?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_neighbor_alltoall_init(
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
    let _ = info;
    non_null(request, "MPI_Neighbor_alltoall_init", "request")?;
    let handle = alltoall(
        sendbuf,
        sendcount as i64,
        sendtype,
        recvbuf,
        recvcount as i64,
        recvtype,
        comm,
        "MPI_Neighbor_alltoall_init",
        Mode::Persistent(comm),
    )?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_neighbor_alltoall_init_c(
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
    let _ = info;
    non_null(request, "MPI_Neighbor_alltoall_init_c", "request")?;
    let handle = alltoall(
        sendbuf,
        sendcount as i64,
        sendtype,
        recvbuf,
        recvcount as i64,
        recvtype,
        comm,
        "MPI_Neighbor_alltoall_init_c",
        Mode::Persistent(comm),
    )?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_neighbor_alltoallv(
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
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        alltoallvw(
            sendbuf,
            sendcounts,
            sdispls,
            Err(sendtype),
            recvbuf,
            recvcounts,
            rdispls,
            Err(recvtype),
            comm,
            "MPI_Neighbor_alltoallv",
            Mode::Blocking,
        )
    }?;
    let _ = handle;
    Ok(())
}

pub(crate) unsafe fn mpi_neighbor_alltoallv_c(
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
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        alltoallvw(
            sendbuf,
            sendcounts,
            sdispls,
            Err(sendtype),
            recvbuf,
            recvcounts,
            rdispls,
            Err(recvtype),
            comm,
            "MPI_Neighbor_alltoallv_c",
            Mode::Blocking,
        )
    }?;
    let _ = handle;
    Ok(())
}

pub(crate) unsafe fn mpi_ineighbor_alltoallv(
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
    non_null(request, "MPI_Ineighbor_alltoallv", "request")?;
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        alltoallvw(
            sendbuf,
            sendcounts,
            sdispls,
            Err(sendtype),
            recvbuf,
            recvcounts,
            rdispls,
            Err(recvtype),
            comm,
            "MPI_Ineighbor_alltoallv",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ineighbor_alltoallv_c(
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
    non_null(request, "MPI_Ineighbor_alltoallv_c", "request")?;
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        alltoallvw(
            sendbuf,
            sendcounts,
            sdispls,
            Err(sendtype),
            recvbuf,
            recvcounts,
            rdispls,
            Err(recvtype),
            comm,
            "MPI_Ineighbor_alltoallv_c",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_neighbor_alltoallv_init(
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
    let _ = info;
    non_null(request, "MPI_Neighbor_alltoallv_init", "request")?;
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        alltoallvw(
            sendbuf,
            sendcounts,
            sdispls,
            Err(sendtype),
            recvbuf,
            recvcounts,
            rdispls,
            Err(recvtype),
            comm,
            "MPI_Neighbor_alltoallv_init",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_neighbor_alltoallv_init_c(
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
    let _ = info;
    non_null(request, "MPI_Neighbor_alltoallv_init_c", "request")?;
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        alltoallvw(
            sendbuf,
            sendcounts,
            sdispls,
            Err(sendtype),
            recvbuf,
            recvcounts,
            rdispls,
            Err(recvtype),
            comm,
            "MPI_Neighbor_alltoallv_init_c",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_neighbor_alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        alltoallvw(
            sendbuf,
            sendcounts,
            sdispls,
            Ok(sendtypes),
            recvbuf,
            recvcounts,
            rdispls,
            Ok(recvtypes),
            comm,
            "MPI_Neighbor_alltoallw",
            Mode::Blocking,
        )
    }?;
    let _ = handle;
    Ok(())
}

pub(crate) unsafe fn mpi_neighbor_alltoallw_c(
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
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        alltoallvw(
            sendbuf,
            sendcounts,
            sdispls,
            Ok(sendtypes),
            recvbuf,
            recvcounts,
            rdispls,
            Ok(recvtypes),
            comm,
            "MPI_Neighbor_alltoallw_c",
            Mode::Blocking,
        )
    }?;
    let _ = handle;
    Ok(())
}

pub(crate) unsafe fn mpi_ineighbor_alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    non_null(request, "MPI_Ineighbor_alltoallw", "request")?;
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        alltoallvw(
            sendbuf,
            sendcounts,
            sdispls,
            Ok(sendtypes),
            recvbuf,
            recvcounts,
            rdispls,
            Ok(recvtypes),
            comm,
            "MPI_Ineighbor_alltoallw",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_ineighbor_alltoallw_c(
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
    non_null(request, "MPI_Ineighbor_alltoallw_c", "request")?;
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        alltoallvw(
            sendbuf,
            sendcounts,
            sdispls,
            Ok(sendtypes),
            recvbuf,
            recvcounts,
            rdispls,
            Ok(recvtypes),
            comm,
            "MPI_Ineighbor_alltoallw_c",
            Mode::Nonblocking(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_neighbor_alltoallw_init(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let _ = info;
    non_null(request, "MPI_Neighbor_alltoallw_init", "request")?;
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        alltoallvw(
            sendbuf,
            sendcounts,
            sdispls,
            Ok(sendtypes),
            recvbuf,
            recvcounts,
            rdispls,
            Ok(recvtypes),
            comm,
            "MPI_Neighbor_alltoallw_init",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_neighbor_alltoallw_init_c(
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
    let _ = info;
    non_null(request, "MPI_Neighbor_alltoallw_init_c", "request")?;
    // SAFETY: forwarded caller contract (array lengths).
    let handle = unsafe {
        alltoallvw(
            sendbuf,
            sendcounts,
            sdispls,
            Ok(sendtypes),
            recvbuf,
            recvcounts,
            rdispls,
            Ok(recvtypes),
            comm,
            "MPI_Neighbor_alltoallw_init_c",
            Mode::Persistent(comm),
        )
    }?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(handle) };
    Ok(())
}
