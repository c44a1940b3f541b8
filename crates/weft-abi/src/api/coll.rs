//! Collective operations, rooted and reducing: barrier, broadcast, reduce, allreduce, scan,
//! exscan, reduce-scatter, local reduction. Each family's one implementation serves its
//! blocking, nonblocking and persistent forms and their `_c` twins (`family.rs`); the int
//! forms of barrier, broadcast, reduce and allreduce have fast paths for plain arguments.
//! Arguments are checked with `coll_args.rs`; the algorithms are in `weft_core::coll`.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use weft_core::coll;
use weft_core::datatype::{Buf, Type};
use weft_core::error::MpiResult;
use weft_core::mpi_err;
use weft_core::object::Comm;
use weft_core::op::Reduction;
use weft_core::threadcomm::ThreadComm;

use crate::api::coll_args::*;
use crate::api::family::Mode;
use crate::args::Int;
use crate::constants::{MPI_BOR, MPI_BYTE};
use crate::ctypes::*;
use crate::objects::CommRef;
use crate::small::Small;
use crate::{datatypes, objects, thread_ranks};

/// The arguments of a blocking reduction that need no checks beyond those made here.
struct PlainReduce {
    comm: CommRef,
    send: Buf,
    recv: Buf,
    red: Reduction,
}

/// The fast path of `MPI_Allreduce`/`MPI_Reduce`: disjoint send and receive buffers of a
/// predefined byte-contiguous type, a predefined op defined on it, an intracommunicator.
/// `None` for anything else, every error included: the general path then checks everything
/// and reports.
///
/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[inline(always)]
unsafe fn plain_reduce_args(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Option<PlainReduce> {
    if is_in_place(sendbuf) {
        return None;
    }
    // First, as it fails at once on a thread communicator (whose own fast path follows).
    let comm = objects::comm_ref_quiet(comm).filter(|c| !c.is_inter())?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let send = unsafe { datatypes::contiguous_buf(sendbuf, count.into(), datatype) }?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let recv = unsafe { datatypes::contiguous_buf(recvbuf, count.into(), datatype) }?;
    let overlap = send.addr() < recv.addr() + recv.len() && recv.addr() < send.addr() + send.len();
    if overlap && !send.is_empty() {
        return None;
    }
    let red = datatypes::contiguous_reduction(op, datatype)?;
    Some(PlainReduce {
        comm,
        send,
        recv,
        red,
    })
}

/// The fast path of `MPI_Reduce`/`MPI_Allreduce` on a thread communicator the calling thread
/// is a rank of: the arguments `plain_reduce_args` accepts (a receive buffer only where
/// `needs_recv`), handed to `run` with the thread communicator and the caller's rank.
/// `None` for anything else, every error included: the general path then checks everything
/// and reports.
///
/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[inline(always)]
unsafe fn thread_plain_reduce(
    (sendbuf, recvbuf, count): (*const c_void, *mut c_void, c_int),
    (datatype, op, comm): (MPI_Datatype, MPI_Op, MPI_Comm),
    needs_recv: impl FnOnce(&ThreadComm, u32) -> Option<bool>,
    run: impl FnOnce(&ThreadComm, u32, &Buf, &Buf, &Reduction) -> MpiResult<()>,
) -> Option<MpiResult<()>> {
    if is_in_place(sendbuf) {
        return None;
    }
    thread_ranks::with(comm, |_, tc, me| {
        let needs_recv = needs_recv(tc, me)?;
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let send = unsafe { datatypes::contiguous_buf(sendbuf, count.into(), datatype) }?;
        let recv = if needs_recv {
            // SAFETY: forwarded caller contract (the buffers hold what the counts say).
            let recv = unsafe { datatypes::contiguous_buf(recvbuf, count.into(), datatype) }?;
            let overlap =
                send.addr() < recv.addr() + recv.len() && recv.addr() < send.addr() + send.len();
            if overlap && !send.is_empty() {
                return None;
            }
            recv
        } else {
            Buf::EMPTY
        };
        let red = datatypes::contiguous_reduction(op, datatype)?;
        Some(run(tc, me, &send, &recv, &red))
    })
    .flatten()
}

// ------------------------------------------------------------------ barrier, bcast

pub(crate) fn mpi_barrier(comm: MPI_Comm) -> MpiResult<()> {
    if let Some(r) = thread_ranks::with(comm, |_, tc, me| tc.barrier(me)) {
        return core("MPI_Barrier", r);
    }
    let c = comm_ref(comm, "MPI_Barrier")?;
    core("MPI_Barrier", coll::barrier(&c))
}

/// The barrier family (the blocking int form is `mpi_barrier`).
pub(crate) fn barrier(comm: MPI_Comm, func: &str, nb: Mode) -> MpiResult<MPI_Request> {
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        thread_finish(func, nb, (c, tc), Vec::new(), move |tc| tc.barrier(me))
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = comm_ref(comm, func)?;
    finish(
        func,
        nb,
        &c,
        Vec::new,
        || coll::barrier(&c),
        || {
            let c = c.to_arc();
            move |o| coll::ibarrier(&c, o)
        },
    )
}

/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
pub(crate) unsafe fn bcast(
    buffer: *mut c_void,
    count: impl Int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let count = count.get();
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        let root = thread_root(tc, root, func)?;
        let dt = datatypes::committed_ref(datatype, func, "datatype")?;
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let buf = unsafe { buf_at(buffer as usize, count, &dt, func, "buffer", "count") }?;
        thread_finish(func, nb, (c, tc), keep(&[&buf]), move |tc| {
            tc.bcast(me, &buf, root)
        })
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = comm_ref(comm, func)?;
    let root = root_of(&c, root, func)?;
    let dt = datatypes::committed_ref(datatype, func, "datatype")?;
    let buf = if takes_part(&c, root) {
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        unsafe { buf_at(buffer as usize, count, &dt, func, "buffer", "count") }?
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
            let (c, buf) = (c.to_arc(), buf);
            move |o| coll::ibcast(&c, &buf, root, o)
        },
    )
}

/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[inline(never)]
pub(crate) unsafe fn mpi_bcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    // Fast path: a predefined byte-contiguous type, a valid root on an intracommunicator.
    if let (Some(buf), Some(c)) = (
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        unsafe { datatypes::contiguous_buf(buffer, count.into(), datatype) },
        objects::comm_ref_quiet(comm),
    ) {
        if !c.is_inter() && root >= 0 && (root as u32) < c.size() {
            return core("MPI_Bcast", coll::bcast(&c, &buf, root as u32));
        }
    }
    // The same on a thread communicator the calling thread is a rank of.
    let on_thread = thread_ranks::with(comm, |_, tc, me| {
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let buf = unsafe { datatypes::contiguous_buf(buffer, count.into(), datatype) }?;
        let root = u32::try_from(root).ok().filter(|&r| r < tc.size())?;
        Some(tc.bcast(me, &buf, root))
    });
    if let Some(r) = on_thread.flatten() {
        return core("MPI_Bcast", r);
    }
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    unsafe {
        bcast(
            buffer,
            count,
            datatype,
            root,
            comm,
            "MPI_Bcast",
            Mode::Blocking,
        )
    }
    .map(|_| ())
}

// ------------------------------------------------------------------ reductions

/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: impl Int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let count = count.get();
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        let root = thread_root(tc, root, func)?;
        let (dt, red) = op_for(op, datatype, func)?;
        let is_root = me == root;
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let send = unsafe { send_side(sendbuf, count, &dt, is_root, func) }?;
        let recv = if is_root {
            // SAFETY: forwarded caller contract (the buffers hold what the counts say).
            unsafe { buf_at(recvbuf as usize, count, &dt, func, "recvbuf", "count") }?
        } else {
            Buf::EMPTY
        };
        thread_finish(func, nb, (c, tc), keep(&[&send, &recv]), move |tc| {
            tc.reduce(me, send.as_ref(), &recv, &red, root)
        })
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = comm_ref(comm, func)?;
    let root = root_of(&c, root, func)?;
    // At `MPI_PROC_NULL` (an intercommunicator rank of the root's group other than the root)
    // only `root` is significant: the datatype and op are not looked at, and a valid pair
    // stands in for them.
    let (dt, red) = if takes_part(&c, root) {
        op_for(op, datatype, func)?
    } else {
        op_for(MPI_BOR, MPI_BYTE, func)?
    };
    let is_root = at_root(&c, root);
    let send = if c.is_inter() {
        if is_root || !takes_part(&c, root) {
            None
        } else {
            // SAFETY: forwarded caller contract (the buffers hold what the counts say).
            Some(unsafe { buf_at(sendbuf as usize, count, &dt, func, "sendbuf", "count") }?)
        }
    } else {
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        unsafe { send_side(sendbuf, count, &dt, is_root, func) }?
    };
    let recv = if is_root {
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        unsafe { buf_at(recvbuf as usize, count, &dt, func, "recvbuf", "count") }?
    } else {
        Buf::EMPTY
    };
    if is_root {
        check_alias(send.as_slice(), &[recv], func)?;
    }
    finish(
        func,
        nb,
        &c,
        || keep(&[&send, &recv]),
        || coll::reduce(&c, send.as_ref(), &recv, &red, root),
        || {
            let (c, send, recv, red) = (c.to_arc(), send, recv, red.clone());
            move |o| coll::ireduce(&c, send.as_ref(), &recv, &red, root, o)
        },
    )
}

/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[inline(never)]
pub(crate) unsafe fn mpi_reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    if let Some(a) = unsafe { plain_reduce_args(sendbuf, recvbuf, count, datatype, op, comm) } {
        if root >= 0 && (root as u32) < a.comm.size() {
            let r = coll::reduce(&a.comm, Some(&a.send), &a.recv, &a.red, root as u32);
            return core("MPI_Reduce", r);
        }
    }
    let root_of_thread = |tc: &ThreadComm, me: u32| {
        let root = u32::try_from(root).ok().filter(|&r| r < tc.size())?;
        Some(me == root)
    };
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let on_thread = unsafe {
        thread_plain_reduce(
            (sendbuf, recvbuf, count),
            (datatype, op, comm),
            root_of_thread,
            |tc, me, send, recv, red| tc.reduce(me, Some(send), recv, red, root as u32),
        )
    };
    if let Some(r) = on_thread {
        return core("MPI_Reduce", r);
    }
    let func = "MPI_Reduce";
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    unsafe {
        reduce(
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            root,
            comm,
            func,
            Mode::Blocking,
        )
    }
    .map(|_| ())
}

/// Which all-rank reduction.
#[derive(Clone, Copy)]
pub(crate) enum AllKind {
    Allreduce,
    Scan,
    Exscan,
}

/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn all_reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: impl Int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
    kind: AllKind,
) -> MpiResult<MPI_Request> {
    let count = count.get();
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        let (dt, red) = op_for(op, datatype, func)?;
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let send = unsafe { send_side(sendbuf, count, &dt, true, func) }?;
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let recv = unsafe { buf_at(recvbuf as usize, count, &dt, func, "recvbuf", "count") }?;
        thread_finish(
            func,
            nb,
            (c, tc),
            keep(&[&send, &recv]),
            move |tc| match kind {
                AllKind::Allreduce => tc.allreduce(me, send.as_ref(), &recv, &red),
                AllKind::Scan => tc.scan(me, send.as_ref(), &recv, &red, false),
                AllKind::Exscan => tc.scan(me, send.as_ref(), &recv, &red, true),
            },
        )
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = comm_ref(comm, func)?;
    if !matches!(kind, AllKind::Allreduce) {
        intra_only(&c, func)?;
    }
    let (dt, red) = op_for(op, datatype, func)?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let send = unsafe { send_side(sendbuf, count, &dt, !c.is_inter(), func) }?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let recv = unsafe { buf_at(recvbuf as usize, count, &dt, func, "recvbuf", "count") }?;
    check_alias(send.as_slice(), &[recv], func)?;
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
            let (c, send, recv, red) = (c.to_arc(), send, recv, red.clone());
            move |o| match kind {
                AllKind::Allreduce => coll::iallreduce(&c, send.as_ref(), &recv, &red, o),
                AllKind::Scan => coll::iscan(&c, send.as_ref(), &recv, &red, o),
                AllKind::Exscan => coll::iexscan(&c, send.as_ref(), &recv, &red, o),
            }
        },
    )
}

/// `MPI_Allreduce`, `MPI_Scan` and `MPI_Exscan` (int forms; `api/gen.py` passes the name
/// and the kind): the core algorithm for plain arguments (`plain_reduce_args`), else the
/// family's one implementation.
///
/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn all_reduce_blocking(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    func: &str,
    kind: AllKind,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    if let Some(a) = unsafe { plain_reduce_args(sendbuf, recvbuf, count, datatype, op, comm) } {
        let (send, recv) = (Some(&a.send), &a.recv);
        let r = match kind {
            AllKind::Allreduce => coll::allreduce(&a.comm, send, recv, &a.red),
            AllKind::Scan => coll::scan(&a.comm, send, recv, &a.red),
            AllKind::Exscan => coll::exscan(&a.comm, send, recv, &a.red),
        };
        return core(func, r);
    }
    if matches!(kind, AllKind::Allreduce) {
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let on_thread = unsafe {
            thread_plain_reduce(
                (sendbuf, recvbuf, count),
                (datatype, op, comm),
                |_, _| Some(true),
                |tc, me, send, recv, red| tc.allreduce(me, Some(send), recv, red),
            )
        };
        if let Some(r) = on_thread {
            return core(func, r);
        }
    }
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    unsafe {
        all_reduce(
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            comm,
            func,
            Mode::Blocking,
            kind,
        )
    }
    .map(|_| ())
}

/// `MPI_Reduce_local` and its `_c` twin.
///
/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
pub(crate) unsafe fn reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: impl Int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    func: &str,
) -> MpiResult<()> {
    let count = count.get();
    let (dt, red) = op_for(op, datatype, func)?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let input = unsafe { buf_at(inbuf as usize, count, &dt, func, "inbuf", "count") }?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let inout = unsafe { buf_at(inoutbuf as usize, count, &dt, func, "inoutbuf", "count") }?;
    if buffers_overlap(&[input], &[inout]) {
        return Err(mpi_err!(
            Buffer,
            "{func}(inbuf, inoutbuf): the two buffers are the same memory"
        ));
    }
    core(func, coll::reduce_local(&input, &inout, &red))
}

/// A reduce-scatter's element counts per rank: `MPI_Reduce_scatter`'s array (borrowed), or
/// `MPI_Reduce_scatter_block`'s one count for each of `n` ranks.
#[derive(Clone, Copy)]
enum Counts<'a, C> {
    Each(&'a [C]),
    Same(i64, usize),
}

impl<C: Int> Counts<'_, C> {
    fn len(&self) -> usize {
        match self {
            Counts::Each(a) => a.len(),
            Counts::Same(_, n) => *n,
        }
    }

    fn at(&self, i: usize) -> i64 {
        match self {
            Counts::Each(a) => a[i].get(),
            Counts::Same(v, _) => *v,
        }
    }

    fn total(&self) -> i64 {
        (0..self.len()).map(|i| self.at(i)).sum()
    }
}

/// Reduce-scatter with `counts.at(i)` elements for rank i.
///
/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[allow(clippy::too_many_arguments)]
unsafe fn reduce_scatter_counts<C: Int>(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: Counts<C>,
    datatype: MPI_Datatype,
    op: MPI_Op,
    c: &CommRef,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let (dt, red) = op_for(op, datatype, func)?;
    let sizes = byte_sizes(&dt, counts, func)?;
    let total = counts.total();
    let mine = counts.at(c.rank as usize);
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let output = unsafe { buf_at(recvbuf as usize, mine, &dt, func, "recvbuf", "recvcount") }?;
    let input = if is_in_place(sendbuf) && !c.is_inter() {
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        unsafe { buf_at(recvbuf as usize, total, &dt, func, "recvbuf", "recvcounts") }?
    } else {
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        let s = unsafe { buf_at(sendbuf as usize, total, &dt, func, "sendbuf", "recvcounts") }?;
        check_alias(&[s], &[output], func)?;
        s
    };
    finish(
        func,
        nb,
        c,
        || keep(&[&input, &output]),
        || coll::reduce_scatter(c, &input, &output, &red, &sizes),
        || {
            let (c, red, input, output, sizes) =
                (c.to_arc(), red.clone(), input, output, sizes.clone());
            move |o| coll::ireduce_scatter(&c, &input, &output, &red, &sizes, o)
        },
    )
}

/// The bytes of `counts.at(i)` elements of `dt`, for each `i`.
fn byte_sizes<C: Int>(dt: &Type, counts: Counts<C>, func: &str) -> MpiResult<Small<usize>> {
    Small::try_from_fn(counts.len(), 0, |i| {
        let n = counts.at(i);
        usize::try_from(n)
            .ok()
            .and_then(|n| dt.bytes_for(n))
            .ok_or_else(|| mpi_err!(Count, "{func}(recvcounts[{i}]={n}): negative or too large"))
    })
}

/// Reduce-scatter on a thread communicator, by its rank `me` (`counts` per rank).
///
/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[allow(clippy::too_many_arguments)]
unsafe fn thread_reduce_scatter<C: Int>(
    (c, tc, me): (&Comm, &Arc<ThreadComm>, u32),
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: Counts<C>,
    datatype: MPI_Datatype,
    op: MPI_Op,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let (dt, red) = op_for(op, datatype, func)?;
    let sizes = byte_sizes(&dt, counts, func)?;
    let total = counts.total();
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let output = unsafe {
        buf_at(
            recvbuf as usize,
            counts.at(me as usize),
            &dt,
            func,
            "recvbuf",
            "recvcount",
        )
    }?;
    let (at, arg) = if is_in_place(sendbuf) {
        (recvbuf as usize, "recvbuf")
    } else {
        (sendbuf as usize, "sendbuf")
    };
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let input = unsafe { buf_at(at, total, &dt, func, arg, "recvcounts") }?;
    thread_finish(func, nb, (c, tc), keep(&[&input, &output]), move |tc| {
        tc.reduce_scatter(me, &input, &output, &red, &sizes)
    })
}

/// The reduce-scatter family: `recvcounts[i]` elements for rank i.
///
/// # Safety
/// `recvcounts` holds one count per rank.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce_scatter<C: Int>(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    // SAFETY: the caller passes one count per rank.
    let counts = |n: usize| unsafe { array(recvcounts, n, func, "recvcounts") }.map(Counts::Each);
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    unsafe { reduce_scatter_on(comm, sendbuf, recvbuf, counts, datatype, op, func, nb) }
}

/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: impl Int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let recvcount = recvcount.get();
    if recvcount < 0 {
        return Err(mpi_err!(
            Count,
            "{func}(recvcount={recvcount}): negative count"
        ));
    }
    let counts = |n: usize| Ok(Counts::<i64>::Same(recvcount, n));
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    unsafe { reduce_scatter_on(comm, sendbuf, recvbuf, counts, datatype, op, func, nb) }
}

/// Reduce-scatter on `comm`, a thread communicator (by the caller's rank) or not, with the
/// counts `counts(size)` gives.
///
/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
#[allow(clippy::too_many_arguments)]
unsafe fn reduce_scatter_on<'a, C: Int + 'a>(
    comm: MPI_Comm,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: impl Fn(usize) -> MpiResult<Counts<'a, C>>,
    datatype: MPI_Datatype,
    op: MPI_Op,
    func: &str,
    nb: Mode,
) -> MpiResult<MPI_Request> {
    let on_thread = thread_ranks::with(comm, |c, tc, me| {
        let counts = counts(tc.size() as usize)?;
        let on = (&**c, tc, me);
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        unsafe { thread_reduce_scatter(on, sendbuf, recvbuf, counts, datatype, op, func, nb) }
    });
    if let Some(r) = on_thread {
        return r;
    }
    let c = comm_ref(comm, func)?;
    let counts = counts(c.size() as usize)?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    unsafe { reduce_scatter_counts(sendbuf, recvbuf, counts, datatype, op, &c, func, nb) }
}
