//! Collective operations that move data without reducing it: gather(v), scatter(v),
//! allgather(v), alltoall(v/w). Each family's one implementation serves its blocking,
//! nonblocking and persistent forms and their `_c` twins (`family.rs`).

use std::ffi::{c_int, c_void};

use weft_core::coll;
use weft_core::datatype::Buf;
use weft_core::error::MpiResult;
use weft_core::object::Comm;

use crate::api::coll_args::*;
use crate::api::family::Mode;
use crate::args::Int;
use crate::ctypes::*;
use crate::datatypes::contiguous_buf;
use crate::objects::{comm_ref_quiet, CommRef};
use crate::thread_ranks;

/// The fast path's view of a send side (n blocks where `send_n`) and an n-block receive
/// side: predefined
/// byte-contiguous types, no `MPI_IN_PLACE`, an intracommunicator, disjoint buffers (`recv`
/// is used only where `wants_recv`). `None` for anything else, errors included: the family
/// then checks everything and reports.
///
/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn plain_blocks(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    send_n: bool,
    wants_recv: impl FnOnce(&CommRef) -> bool,
) -> Option<(CommRef, Buf, Buf)> {
    if is_in_place(sendbuf) {
        return None;
    }
    let c = comm_ref_quiet(comm).filter(|c| !c.is_inter())?;
    let blocks = if send_n { c.size() } else { 1 };
    let sends = MPI_Count::from(sendcount).checked_mul(blocks.into())?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let send = unsafe { contiguous_buf(sendbuf, sends, sendtype) }?;
    if !wants_recv(&c) {
        return Some((c, send, Buf::EMPTY));
    }
    let all = MPI_Count::from(recvcount).checked_mul(c.size().into())?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let recv = unsafe { contiguous_buf(recvbuf, all, recvtype) }?;
    let overlap = send.addr() < recv.addr() + recv.len() && recv.addr() < send.addr() + send.len();
    if overlap && !send.is_empty() && !recv.is_empty() {
        return None;
    }
    Some((c, send, recv))
}

/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn mpi_gather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let at_root = |c: &CommRef| root >= 0 && c.rank as c_int == root;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let plain = unsafe {
        plain_blocks(
            sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, false, at_root,
        )
    };
    if let Some((c, send, recv)) = plain.filter(|(c, ..)| root >= 0 && (root as u32) < c.size()) {
        return core(
            "MPI_Gather",
            coll::gather(&c, Some(&send), &recv, root as u32),
        );
    }
    let func = "MPI_Gather";
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    unsafe {
        gather(
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
            root,
            comm,
            func,
            Mode::Blocking,
        )
    }
    .map(|_| ())
}

/// The one implementation of the allgather or alltoall family, for counts of type `C`.
pub(crate) type Exchange<C> = unsafe fn(
    *const c_void,
    C,
    MPI_Datatype,
    *mut c_void,
    C,
    MPI_Datatype,
    MPI_Comm,
    &str,
    Mode,
) -> MpiResult<MPI_Request>;

/// `MPI_Allgather` and `MPI_Alltoall`: `plain`, the core algorithm, for plain arguments
/// (`plain_blocks`), else the family's one implementation.
///
/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn all_blocks_blocking(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    send_n: bool,
    plain: impl FnOnce(&Comm, Option<&Buf>, &Buf) -> MpiResult<()>,
    family: Exchange<c_int>,
    func: &str,
) -> MpiResult<()> {
    let (send, recv) = (
        (sendbuf, sendcount, sendtype),
        (recvbuf, recvcount, recvtype),
    );
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let fast = unsafe {
        plain_blocks(
            send.0,
            send.1,
            send.2,
            recv.0,
            recv.1,
            recv.2,
            comm,
            send_n,
            |_| true,
        )
    };
    if let Some((c, send, recv)) = fast {
        return core(func, plain(&c, Some(&send), &recv));
    }
    let nb = Mode::Blocking;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    unsafe {
        family(
            send.0, send.1, send.2, recv.0, recv.1, recv.2, comm, func, nb,
        )
    }
    .map(|_| ())
}

/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gather(
    sendbuf: *const c_void,
    sendcount: impl Int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: impl Int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let sendcount = sendcount.get();
    let recvcount = recvcount.get();
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        let root = thread_root(tc, root, func)?;
        let is_root = me == root;
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let send = unsafe { thread_block(is_root, sendbuf, sendcount, sendtype, func, SEND) }?;
        let n = tc.size() as i64;
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let recv = unsafe { root_blocks(is_root, (recvbuf, recvcount, recvtype), n, func, RECV) }?;
        thread_finish(func, nb, (c, tc), keep(&[&send, &recv]), move |tc| {
            tc.gather(me, send.as_ref(), &recv, root)
        })
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = comm_of(comm, func)?;
    let root = root_of(&c, root, func)?;
    let is_root = at_root(&c, root);
    let n = c.peer_size() as i64;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let send = unsafe { leaf_side(&c, root, (sendbuf, sendcount, sendtype), func, SEND) }?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let recv = unsafe { root_blocks(is_root, (recvbuf, recvcount, recvtype), n, func, RECV) }?;
    check_alias(send.as_slice(), &[recv], func)?;
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::gather(&c, send.as_ref(), &recv, root),
        || {
            let (c, send, recv) = (c.clone(), send, recv);
            move |o| coll::igather(&c, send.as_ref(), &recv, root, o)
        },
    )
}

/// # Safety
/// At the root, `recvcounts` and `displs` hold one entry per rank.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gatherv<C: Int, D: Int>(
    sendbuf: *const c_void,
    sendcount: impl Int,
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
    let sendcount = sendcount.get();
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        let root = thread_root(tc, root, func)?;
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let send = unsafe { thread_block(me == root, sendbuf, sendcount, sendtype, func, SEND) }?;
        let n = tc.size() as usize;
        let arrays = (recvcounts, displs);
        // SAFETY: at the root the arrays hold one entry per rank and the buffer every part.
        let recv = unsafe { root_parts(me == root, recvbuf, arrays, recvtype, n, func, RECV_V) }?;
        thread_finish(func, nb, (c, tc), keep(&[&send, &recv]), move |tc| {
            tc.gatherv(me, send.as_ref(), &recv, root)
        })
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = comm_ref(comm, func)?;
    let root = root_of(&c, root, func)?;
    let is_root = at_root(&c, root);
    let n = c.peer_size() as usize;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let send = unsafe { leaf_side(&c, root, (sendbuf, sendcount, sendtype), func, SEND) }?;
    let arrays = (recvcounts, displs);
    // SAFETY: at the root the arrays hold one entry per rank and the buffer every part.
    let recv = unsafe { root_parts(is_root, recvbuf, arrays, recvtype, n, func, RECV_V) }?;
    check_alias(send.as_slice(), &recv, func)?;
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::gatherv(&c, send.as_ref(), &recv, root),
        || {
            let (c, send, recv) = (c.to_arc(), send, recv.clone());
            move |o| coll::igatherv(&c, send.as_ref(), &recv, root, o)
        },
    )
}

/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatter(
    sendbuf: *const c_void,
    sendcount: impl Int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: impl Int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let sendcount = sendcount.get();
    let recvcount = recvcount.get();
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        let root = thread_root(tc, root, func)?;
        let is_root = me == root;
        let n = tc.size() as i64;
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let send = unsafe { root_blocks(is_root, (sendbuf, sendcount, sendtype), n, func, SEND) }?;
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let recv = unsafe { thread_block(is_root, recvbuf, recvcount, recvtype, func, RECV) }?;
        thread_finish(func, nb, (c, tc), keep(&[&send, &recv]), move |tc| {
            tc.scatter(me, &send, recv.as_ref(), root)
        })
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = comm_of(comm, func)?;
    let root = root_of(&c, root, func)?;
    let is_root = at_root(&c, root);
    let n = c.peer_size() as i64;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let send = unsafe { root_blocks(is_root, (sendbuf, sendcount, sendtype), n, func, SEND) }?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let recv = unsafe { leaf_side(&c, root, (recvbuf, recvcount, recvtype), func, RECV) }?;
    check_alias(&[send], recv.as_slice(), func)?;
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::scatter(&c, &send, recv.as_ref(), root),
        || {
            let (c, send, recv) = (c.clone(), send, recv);
            move |o| coll::iscatter(&c, &send, recv.as_ref(), root, o)
        },
    )
}

/// # Safety
/// At the root, `sendcounts` and `displs` hold one entry per rank.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatterv<C: Int, D: Int>(
    sendbuf: *const c_void,
    sendcounts: *const C,
    displs: *const D,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: impl Int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let recvcount = recvcount.get();
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        let root = thread_root(tc, root, func)?;
        let n = tc.size() as usize;
        let arrays = (sendcounts, displs);
        // SAFETY: at the root the arrays hold one entry per rank and the buffer every part.
        let send = unsafe { root_parts(me == root, sendbuf, arrays, sendtype, n, func, SEND_V) }?;
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let recv = unsafe { thread_block(me == root, recvbuf, recvcount, recvtype, func, RECV) }?;
        thread_finish(func, nb, (c, tc), keep(&[&send, &recv]), move |tc| {
            tc.scatterv(me, &send, recv.as_ref(), root)
        })
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = comm_ref(comm, func)?;
    let root = root_of(&c, root, func)?;
    let is_root = at_root(&c, root);
    let n = c.peer_size() as usize;
    let arrays = (sendcounts, displs);
    // SAFETY: at the root the arrays hold one entry per rank and the buffer every part.
    let send = unsafe { root_parts(is_root, sendbuf, arrays, sendtype, n, func, SEND_V) }?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let recv = unsafe { leaf_side(&c, root, (recvbuf, recvcount, recvtype), func, RECV) }?;
    check_alias(&send, recv.as_slice(), func)?;
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::scatterv(&c, &send, recv.as_ref(), root),
        || {
            let (c, send, recv) = (c.to_arc(), send.clone(), recv);
            move |o| coll::iscatterv(&c, &send, recv.as_ref(), root, o)
        },
    )
}

/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn allgather(
    sendbuf: *const c_void,
    sendcount: impl Int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: impl Int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let sendcount = sendcount.get();
    let recvcount = recvcount.get();
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        let n = tc.size() as i64;
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let send = unsafe { thread_block(true, sendbuf, sendcount, sendtype, func, SEND) }?;
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let recv = unsafe { side(recvbuf, recvcount, n, recvtype, func, RECV) }?;
        thread_finish(func, nb, (c, tc), keep(&[&send, &recv]), move |tc| {
            tc.allgather(me, send.as_ref(), &recv)
        })
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = comm_of(comm, func)?;
    let n = c.peer_size() as i64;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let send = unsafe { own_blocks(&c, (sendbuf, sendcount, sendtype), 1, func) }?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let recv = unsafe { side(recvbuf, recvcount, n, recvtype, func, RECV) }?;
    check_alias(send.as_slice(), &[recv], func)?;
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::allgather(&c, send.as_ref(), &recv),
        || {
            let (c, send, recv) = (c.clone(), send, recv);
            move |o| coll::iallgather(&c, send.as_ref(), &recv, o)
        },
    )
}

/// # Safety
/// `recvcounts` and `displs` hold one entry per rank.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn allgatherv<C: Int, D: Int>(
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
    let sendcount = sendcount.get();
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let send = unsafe { thread_block(true, sendbuf, sendcount, sendtype, func, SEND) }?;
        let (arrays, n) = ((recvcounts, displs), tc.size() as usize);
        // SAFETY: the arrays hold one entry per rank and the buffer every part.
        let recv = unsafe { varying(recvbuf, arrays, recvtype, n, func, RECV_V) }?;
        thread_finish(func, nb, (c, tc), keep(&[&send, &recv]), move |tc| {
            tc.allgatherv(me, send.as_ref(), &recv)
        })
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = comm_ref(comm, func)?;
    let n = c.peer_size() as usize;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let send = unsafe { own_blocks(&c, (sendbuf, sendcount, sendtype), 1, func) }?;
    let arrays = (recvcounts, displs);
    // SAFETY: the arrays hold one entry per rank and the buffer every part.
    let recv = unsafe { varying(recvbuf, arrays, recvtype, n, func, RECV_V) }?;
    check_alias(send.as_slice(), &recv, func)?;
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::allgatherv(&c, send.as_ref(), &recv),
        || {
            let (c, send, recv) = (c.to_arc(), send, recv.clone());
            move |o| coll::iallgatherv(&c, send.as_ref(), &recv, o)
        },
    )
}

/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn alltoall(
    sendbuf: *const c_void,
    sendcount: impl Int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: impl Int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let sendcount = sendcount.get();
    let recvcount = recvcount.get();
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        let n = tc.size() as i64;
        let send = if is_in_place(sendbuf) {
            None
        } else {
            // SAFETY: forwarded caller contract (the buffers hold what the counts say).
            Some(unsafe { side(sendbuf, sendcount, n, sendtype, func, SEND) }?)
        };
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let recv = unsafe { side(recvbuf, recvcount, n, recvtype, func, RECV) }?;
        thread_finish(func, nb, (c, tc), keep(&[&send, &recv]), move |tc| {
            tc.alltoall(me, send.as_ref(), &recv)
        })
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = comm_of(comm, func)?;
    let n = c.peer_size() as i64;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let send = unsafe { own_blocks(&c, (sendbuf, sendcount, sendtype), n, func) }?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let recv = unsafe { side(recvbuf, recvcount, n, recvtype, func, RECV) }?;
    check_alias(send.as_slice(), &[recv], func)?;
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::alltoall(&c, send.as_ref(), &recv),
        || {
            let (c, send, recv) = (c.clone(), send, recv);
            move |o| coll::ialltoall(&c, send.as_ref(), &recv, o)
        },
    )
}

/// One side of alltoallv or alltoallw: counts, displacements and the datatype handles (one
/// for all, or one per rank).
type VwSide<'a, C, D> = (*const C, *const D, Handles<'a>);

/// The datatype argument of a `v` side (one handle) or a `w` side (a handle per rank).
#[derive(Clone, Copy)]
enum Handles<'a> {
    One(MPI_Datatype),
    Each(&'a [MPI_Datatype]),
}

/// Alltoallv and alltoallw: per-rank counts, displacements (in elements for v, bytes for w)
/// and datatypes.
///
/// # Safety
/// Every array holds one entry per rank (the send arrays are ignored with `MPI_IN_PLACE`).
unsafe fn alltoallvw<C: Int, D: Int>(
    (sendbuf, s): (*const c_void, VwSide<C, D>),
    (recvbuf, r): (*mut c_void, VwSide<C, D>),
    byte_displs: bool,
    c: &CommRef,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let n = c.peer_size() as usize;
    let (send, recv) =
        // SAFETY: forwarded caller contract.
        unsafe { vw_parts((sendbuf, s), (recvbuf, r), byte_displs, n, !c.is_inter(), func) }?;
    check_alias(send.as_deref().unwrap_or_default(), &recv, func)?;
    finish(
        func,
        nb,
        c,
        || keep(&[&send, &recv]),
        || coll::alltoallv(c, send.as_deref(), &recv),
        || {
            let (c, send, recv) = (c.to_arc(), send.clone(), recv.clone());
            move |o| coll::ialltoallv(&c, send.as_deref(), &recv, o)
        },
    )
}

/// The parts of one side of alltoallv or alltoallw for `n` ranks; `names` are the buffer,
/// counts, displacements and datatype arguments' names.
///
/// # Safety
/// Every array holds `n` entries and the buffer every part.
unsafe fn vw_side<C: Int, D: Int>(
    buf: *const c_void,
    (counts, displs, handles): VwSide<C, D>,
    byte_displs: bool,
    n: usize,
    func: &str,
    names: [&str; 4],
) -> MpiResult<Parts> {
    let types = match handles {
        Handles::One(h) => PartTypes::one(h, n, func, names[3])?,
        Handles::Each(hs) => PartTypes::each(hs, func, names[3])?,
    };
    // SAFETY: one entry per rank and every part in the buffer, per the caller's contract.
    unsafe {
        let arrays = (
            array(counts, n, func, names[1])?,
            array(displs, n, func, names[2])?,
        );
        parts_of(buf, arrays, &types, byte_displs, func, (names[0], names[1]))
    }
}

/// The parts of alltoallv and alltoallw for `n` ranks (send `None`: `MPI_IN_PLACE`, where
/// `in_place_ok`).
///
/// # Safety
/// Every array holds `n` entries (the send arrays are ignored with `MPI_IN_PLACE`).
unsafe fn vw_parts<C: Int, D: Int>(
    (sendbuf, s): (*const c_void, VwSide<C, D>),
    (recvbuf, r): (*mut c_void, VwSide<C, D>),
    byte_displs: bool,
    n: usize,
    in_place_ok: bool,
    func: &str,
) -> MpiResult<(Option<Parts>, Parts)> {
    let send = if is_in_place(sendbuf) && in_place_ok {
        None
    } else {
        let names = ["sendbuf", "sendcounts", "sdispls", "sendtype"];
        // SAFETY: forwarded caller contract.
        Some(unsafe { vw_side(sendbuf, s, byte_displs, n, func, names) }?)
    };
    let names = ["recvbuf", "recvcounts", "rdispls", "recvtype"];
    // SAFETY: forwarded caller contract.
    let recv = unsafe { vw_side(recvbuf, r, byte_displs, n, func, names) }?;
    Ok((send, recv))
}

/// The alltoallv family.
///
/// # Safety
/// The count and displacement arrays hold one entry per rank.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn alltoallv<C: Int, D: Int>(
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
    let s = (sendbuf, (sendcounts, sdispls, Handles::One(sendtype)));
    let r = (recvbuf, (recvcounts, rdispls, Handles::One(recvtype)));
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        let n = tc.size() as usize;
        // SAFETY: forwarded caller contract.
        let (send, recv) = unsafe { vw_parts(s, r, false, n, true, func) }?;
        thread_finish(func, nb, (c, tc), keep(&[&send, &recv]), move |tc| {
            tc.alltoallv(me, send.as_deref(), &recv)
        })
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = comm_ref(comm, func)?;
    // SAFETY: forwarded caller contract.
    unsafe { alltoallvw(s, r, false, &c, func, nb) }
}

/// The alltoallw family (displacements in bytes, a datatype per rank).
///
/// # Safety
/// The count, displacement and datatype arrays hold one entry per rank.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn alltoallw<C: Int, D: Int>(
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
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        let n = tc.size() as usize;
        // SAFETY: one type per rank, per the caller's contract.
        let (st, rt) = unsafe { w_types(sendbuf, (sendtypes, recvtypes), n, true, func) }?;
        let s = (sendbuf, (sendcounts, sdispls, Handles::Each(st)));
        let r = (recvbuf, (recvcounts, rdispls, Handles::Each(rt)));
        // SAFETY: forwarded caller contract.
        let (send, recv) = unsafe { vw_parts(s, r, true, n, true, func) }?;
        thread_finish(func, nb, (c, tc), keep(&[&send, &recv]), move |tc| {
            tc.alltoallv(me, send.as_deref(), &recv)
        })
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = comm_ref(comm, func)?;
    let n = c.peer_size() as usize;
    let in_place_ok = !c.is_inter();
    // SAFETY: one type per rank, per the caller's contract.
    let (st, rt) = unsafe { w_types(sendbuf, (sendtypes, recvtypes), n, in_place_ok, func) }?;
    let s = (sendbuf, (sendcounts, sdispls, Handles::Each(st)));
    let r = (recvbuf, (recvcounts, rdispls, Handles::Each(rt)));
    // SAFETY: forwarded caller contract.
    unsafe { alltoallvw(s, r, true, &c, func, nb) }
}

/// Alltoallw's `n` send and receive datatypes (no send types with `MPI_IN_PLACE` where
/// `in_place_ok`; elsewhere the send side then reports `MPI_IN_PLACE`).
///
/// # Safety
/// Each array holds `n` types (the send array is unused with `MPI_IN_PLACE`).
unsafe fn w_types<'a>(
    sendbuf: *const c_void,
    (sendtypes, recvtypes): (*const MPI_Datatype, *const MPI_Datatype),
    n: usize,
    in_place_ok: bool,
    func: &str,
) -> MpiResult<(&'a [MPI_Datatype], &'a [MPI_Datatype])> {
    // SAFETY: forwarded caller contract.
    unsafe {
        let st = if is_in_place(sendbuf) && in_place_ok {
            &[]
        } else {
            array(sendtypes, n, func, "sendtypes")?
        };
        Ok((st, array(recvtypes, n, func, "recvtypes")?))
    }
}
