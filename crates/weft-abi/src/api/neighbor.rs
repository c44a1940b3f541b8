//! Neighbourhood collectives on Cartesian, graph and distributed-graph communicators: one
//! implementation per family serves `MPI_Neighbor_*`, `MPI_Ineighbor_*`,
//! `MPI_Neighbor_*_init` and their `_c` forms (`family.rs`). Every form becomes one buffer
//! per destination and per source for `coll::ineighbor_alltoallv`.

use std::ffi::c_void;
use std::sync::Arc;

use weft_core::coll::{self, Neighbors};
use weft_core::error::MpiResult;
use weft_core::mpi_err;
use weft_core::object::Comm;

use crate::api::coll_args::{
    array, finish, intra_of, is_in_place, keep, parts, parts_of, side, varying, PartTypes, Parts,
    RECV, RECV_V, SEND,
};
use crate::api::family::Mode;
use crate::args::Int;
use crate::ctypes::*;
use crate::datatypes;
use crate::small::Small;

fn topo_comm(comm: MPI_Comm, func: &str) -> MpiResult<(Arc<Comm>, Neighbors)> {
    let c = intra_of(comm, func)?;
    let nb = Neighbors::of(&c, func)?;
    Ok((c, nb))
}

fn no_in_place(p: *const c_void, func: &str, arg: &str) -> MpiResult<()> {
    if is_in_place(p) {
        return Err(mpi_err!(
            Buffer,
            "{func}({arg}=MPI_IN_PLACE): not allowed in neighbourhood collectives"
        ));
    }
    Ok(())
}

fn run(
    func: &str,
    nb: Mode,
    c: Arc<Comm>,
    n: Neighbors,
    send: Parts,
    recv: Parts,
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
///
/// # Safety
/// `buf` holds every block (`buf_at`'s contract).
unsafe fn blocks(
    buf: *const c_void,
    count: i64,
    datatype: MPI_Datatype,
    n: usize,
    func: &str,
    names: (&str, &str, &str),
) -> MpiResult<Parts> {
    let t = PartTypes::One(Some(datatypes::committed_ref(datatype, func, names.2)?));
    if count < 0 {
        return Err(mpi_err!(
            Count,
            "{func}({}={count}): negative count",
            names.1
        ));
    }
    let layout = |k: usize| (count, (k as i64).wrapping_mul(count));
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    unsafe { parts(buf, n, layout, &t, false, func, (names.0, names.1)) }
}

/// What each rank sends in a regular neighbourhood collective: its one block to every
/// destination (`MPI_Neighbor_allgather`) or a block per destination (`MPI_Neighbor_alltoall`).
#[derive(Clone, Copy)]
pub(crate) enum Sends {
    Same,
    Each,
}

/// The communicator's neighbourhood and, for the allgather forms, the one send block that
/// goes to every destination.
///
/// # Safety
/// The send buffer holds what its count and datatype say (the standard's rule).
unsafe fn with_send_block(
    comm: MPI_Comm,
    (sendbuf, sendcount, sendtype): (*const c_void, i64, MPI_Datatype),
    func: &str,
) -> MpiResult<(Arc<Comm>, Neighbors, Parts)> {
    let (c, n) = topo_comm(comm, func)?;
    no_in_place(sendbuf, func, "sendbuf")?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let s = unsafe { side(sendbuf, sendcount, 1, sendtype, func, SEND) }?;
    let send = Small::filled(n.destinations.len(), s);
    Ok((c, n, send))
}

/// The neighbor_allgather and neighbor_alltoall families (`sends` tells which).
///
/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn neighbor_blocks(
    sendbuf: *const c_void,
    sendcount: impl Int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: impl Int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
    sends: Sends,
) -> MpiResult<MPI_Request> {
    let send_side = (sendbuf, sendcount.get(), sendtype);
    let (c, n, send) = match sends {
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        Sends::Same => unsafe { with_send_block(comm, send_side, func) }?,
        Sends::Each => {
            let (c, n) = topo_comm(comm, func)?;
            no_in_place(sendbuf, func, "sendbuf")?;
            let out = n.destinations.len();
            // SAFETY: forwarded caller contract (the buffers hold what the counts say).
            let send = unsafe { blocks(sendbuf, send_side.1, sendtype, out, func, SEND) }?;
            (c, n, send)
        }
    };
    let k = n.sources.len();
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let recv = unsafe { blocks(recvbuf, recvcount.get(), recvtype, k, func, RECV) }?;
    run(func, nb, c, n, send, recv)
}

/// # Safety
/// `recvcounts` and `displs` hold one entry per source.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn neighbor_allgatherv<C: Int, D: Int>(
    sendbuf: *const c_void,
    sendcount: impl Int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    displs: *const D,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let send_side = (sendbuf, sendcount.get(), sendtype);
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let (c, n, send) = unsafe { with_send_block(comm, send_side, func) }?;
    let k = n.sources.len();
    let arrays = (recvcounts, displs);
    // SAFETY: the arrays hold one entry per source and the buffer every part.
    let recv = unsafe { varying(recvbuf, arrays, recvtype, k, func, RECV_V) }?;
    run(func, nb, c, n, send, recv)
}

/// Per-neighbour datatypes (`Ok`: an array, the `w` forms) or one for all (`Err`).
type Types = Result<*const MPI_Datatype, MPI_Datatype>;

/// # Safety
/// Count and displacement arrays hold one entry per destination (send) or source (receive);
/// `sendtypes`/`recvtypes` likewise when given (the `w` forms, byte displacements).
#[allow(clippy::too_many_arguments)]
unsafe fn alltoallvw<C: Int, D: Int>(
    sendbuf: *const c_void,
    (sendcounts, sdispls, sendtypes): (*const C, *const D, Types),
    recvbuf: *mut c_void,
    (recvcounts, rdispls, recvtypes): (*const C, *const D, Types),
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
                Ok(p) => Ok(array(p, out, func, "sendtypes")?),
                Err(h) => Err(h),
            },
            match recvtypes {
                Ok(p) => Ok(array(p, inn, func, "recvtypes")?),
                Err(h) => Err(h),
            },
        )
    };
    let checked = |t: Result<&'static [MPI_Datatype], MPI_Datatype>, n, arg| match t {
        Ok(handles) => PartTypes::each(handles, func, arg),
        Err(h) => PartTypes::one(h, n, func, arg),
    };
    let (st, rt) = (
        checked(st, out, "sendtypes")?,
        checked(rt, inn, "recvtypes")?,
    );
    // SAFETY: as above.
    let (sc, sd, rc, rd) = unsafe {
        (
            array(sendcounts, out, func, "sendcounts")?,
            array(sdispls, out, func, "sdispls")?,
            array(recvcounts, inn, func, "recvcounts")?,
            array(rdispls, inn, func, "rdispls")?,
        )
    };
    let names = (("sendbuf", "sendcounts"), ("recvbuf", "recvcounts"));
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let send = unsafe { parts_of(sendbuf, (sc, sd), &st, byte_displs, func, names.0) }?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let recv = unsafe { parts_of(recvbuf, (rc, rd), &rt, byte_displs, func, names.1) }?;
    run(func, nb, c, n, send, recv)
}

/// The neighbor_alltoallv family.
///
/// # Safety
/// Count and displacement arrays hold one entry per destination (send) or source (receive).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn neighbor_alltoallv<C: Int, D: Int>(
    sendbuf: *const c_void,
    sendcounts: *const C,
    sdispls: *const D,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    rdispls: *const D,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let (s, r) = (
        (sendcounts, sdispls, Err(sendtype)),
        (recvcounts, rdispls, Err(recvtype)),
    );
    // SAFETY: forwarded caller contract.
    unsafe { alltoallvw(sendbuf, s, recvbuf, r, comm, func, nb) }
}

/// The neighbor_alltoallw family (byte displacements, a datatype per neighbour).
///
/// # Safety
/// Count, displacement and datatype arrays hold one entry per destination (send) or source
/// (receive).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn neighbor_alltoallw<C: Int, D: Int>(
    sendbuf: *const c_void,
    sendcounts: *const C,
    sdispls: *const D,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    rdispls: *const D,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let (s, r) = (
        (sendcounts, sdispls, Ok(sendtypes)),
        (recvcounts, rdispls, Ok(recvtypes)),
    );
    // SAFETY: forwarded caller contract.
    unsafe { alltoallvw(sendbuf, s, recvbuf, r, comm, func, nb) }
}
