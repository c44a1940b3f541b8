//! Partitioned point-to-point: `MPI_Psend_init`, `MPI_Precv_init`, `MPI_Pready`,
//! `MPI_Pready_range`, `MPI_Pready_list`, `MPI_Parrived` (the protocol is in
//! `weft_core::pt2pt::partitioned`).

use std::any::Any;
use std::ffi::{c_int, c_void};
use std::sync::Arc;

use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::mpi_err;
use weft_core::progress;
use weft_core::pt2pt::partitioned::{self, Partitioned};
use weft_core::request::{PersistentOp, StartFn};
use weft_core::threadcomm::{PartArgs, ThreadPart};

use super::pt2pt::{dest_rank, message_buf, send_tag, thread_peer};
use crate::args::{index_below, non_null};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;
use crate::requests::{request_handle, request_id};
use crate::{datatypes, objects::instance, thread_ranks};

/// The arguments both init calls share, checked, but for the communicator and the peer.
pub(crate) struct Args {
    tag: i32,
    whole: weft_core::datatype::Buf,
    partitions: usize,
    count: usize,
    ty: Arc<weft_core::datatype::Type>,
}

/// Check the arguments other than the communicator and the peer.
#[allow(clippy::too_many_arguments)]
unsafe fn args(
    buf: *const c_void,
    partitions: c_int,
    count: MPI_Count,
    datatype: MPI_Datatype,
    tag: c_int,
    info: MPI_Info,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<Args> {
    non_null(request, func, "request")?;
    if partitions < 0 {
        return Err(mpi_err!(
            Arg,
            "{func}(partitions={partitions}): negative partition count"
        ));
    }
    if count < 0 {
        return Err(mpi_err!(Count, "{func}(count={count}): negative count"));
    }
    let total = count.checked_mul(partitions as MPI_Count).ok_or_else(|| {
        mpi_err!(
            Count,
            "{func}(partitions={partitions}, count={count}): the message size overflows"
        )
    })?;
    let ty = datatypes::committed(datatype, func, "datatype")?;
    // The buffer holds `partitions * count` elements and is left alone while the request lives.
    // SAFETY: forwarded caller contract.
    let whole = unsafe { message_buf(buf, total, datatype, func) }?;
    let tag = send_tag(tag, func)?;
    if info != MPI_INFO_NULL {
        objects::info_object(info, func)?;
    }
    Ok(Args {
        tag,
        whole,
        partitions: partitions as usize,
        count: count as usize,
        ty,
    })
}

/// An init call on a communicator of processes: the communicator, the peer (`None`:
/// `MPI_PROC_NULL`) and the other arguments, checked.
fn on_processes(
    comm: MPI_Comm,
    peer: c_int,
    peer_arg: &str,
    func: &str,
) -> MpiResult<(Arc<weft_core::object::Comm>, Option<u32>)> {
    let c = objects::comm_ref(comm, func, "comm")?;
    let peer = dest_rank(&c, peer, func).map_err(|e| MpiError {
        message: e.message.replace("(dest=", &format!("({peer_arg}=")),
        ..e
    })?;
    Ok((c.to_arc(), peer))
}

/// An init call by a thread of a thread communicator's region (`None`: the calling thread
/// is no rank of `comm`): the request's state and start code.
fn on_threads(
    comm: MPI_Comm,
    peer: c_int,
    peer_arg: &str,
    a: &Args,
    send: bool,
    func: &str,
) -> Option<
    MpiResult<(
        Arc<dyn Any + Send + Sync>,
        StartFn,
        Arc<weft_core::object::Comm>,
    )>,
> {
    thread_ranks::with(comm, |c, tc, me| {
        let peer = thread_peer(tc, peer, func, peer_arg)?;
        let pa = PartArgs {
            peer,
            tag: a.tag,
            buf: a.whole,
            partitions: a.partitions,
            count: a.count,
            ty: a.ty.clone(),
        };
        let (state, start) = if send {
            tc.psend_init(c.clone(), me, pa, func)?
        } else {
            tc.precv_init(c.clone(), me, pa)
        };
        Ok((state as Arc<dyn Any + Send + Sync>, start, c.clone()))
    })
}

/// Store the persistent request of a partitioned operation on `c`.
unsafe fn store(
    comm: MPI_Comm,
    c: &weft_core::object::Comm,
    state: Arc<dyn Any + Send + Sync>,
    start: weft_core::request::StartFn,
    request: *mut MPI_Request,
) {
    let op = PersistentOp::Partitioned { start, state };
    let id = progress::persistent::init(&c.session.instance, c.vci, op, comm);
    // SAFETY: checked non-null by `args`; writable per the caller's contract.
    unsafe { request.write(request_handle(id)) };
}

/// `MPI_Psend_init` (`send`) or `MPI_Precv_init` (forwarded by api/gen.py): check, make and
/// store the request.
///
/// # Safety
/// `buf` holds `partitions * count` elements of `datatype`, left alone (and for a receive
/// writable) while the request lives; `request` is writable.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn partitioned_init(
    buf: *const c_void,
    partitions: c_int,
    count: MPI_Count,
    datatype: MPI_Datatype,
    peer: c_int,
    tag: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
    send: bool,
) -> MpiResult<()> {
    let (func, peer_arg) = if send {
        ("MPI_Psend_init", "dest")
    } else {
        ("MPI_Precv_init", "source")
    };
    // SAFETY: forwarded caller contract.
    let a = unsafe { args(buf, partitions, count, datatype, tag, info, request, func) }?;
    let (state, start, c) = match on_threads(comm, peer, peer_arg, &a, send, func) {
        Some(made) => made?,
        None => {
            let (c, peer) = on_processes(comm, peer, peer_arg, func)?;
            let (part, start) = if send {
                let (buf, ty) = (a.whole, a.ty);
                partitioned::send_init(
                    c.clone(),
                    peer,
                    a.tag,
                    buf,
                    a.partitions,
                    a.count,
                    ty,
                    func,
                )?
            } else {
                partitioned::recv_init(c.clone(), peer, a.tag, a.whole, a.partitions, a.count, a.ty)
            };
            (part as Arc<dyn Any + Send + Sync>, start, c)
        }
    };
    // SAFETY: `request` checked non-null by `args`.
    unsafe { store(comm, &c, state, start, request) };
    Ok(())
}

/// A partitioned operation: between processes, or between the threads of a thread
/// communicator.
enum Part {
    Processes(Arc<Partitioned>),
    Threads(Arc<ThreadPart>),
}

impl Part {
    fn is_send(&self) -> bool {
        match self {
            Part::Processes(p) => p.is_send(),
            Part::Threads(p) => p.is_send(),
        }
    }

    fn partitions(&self) -> usize {
        match self {
            Part::Processes(p) => p.partitions(),
            Part::Threads(p) => p.partitions(),
        }
    }

    fn ready(&self, partition: usize, func: &str) -> MpiResult<()> {
        match self {
            Part::Processes(p) => p.ready(partition, func),
            Part::Threads(p) => p.ready(partition, func),
        }
    }

    fn arrived(&self, partition: usize, func: &str) -> MpiResult<bool> {
        match self {
            Part::Processes(p) => p.arrived(partition, func),
            Part::Threads(p) => p.arrived(partition, func),
        }
    }
}

/// The partitioned operation behind `request`, which must be active.
fn active(request: MPI_Request, func: &str) -> MpiResult<Part> {
    let inst = instance(func)?;
    let Some(id) = request_id(request, func, "request")? else {
        return Err(mpi_err!(
            Request,
            "{func}(request=MPI_REQUEST_NULL): a partitioned request is required"
        ));
    };
    let not_partitioned = || {
        mpi_err!(
            Request,
            "{func}(request={request:#x}): not a partitioned request"
        )
    };
    let (state, is_active) =
        progress::persistent::partitioned(&inst, id).ok_or_else(not_partitioned)?;
    if !is_active {
        return Err(mpi_err!(
            Request,
            "{func}(request={request:#x}): the request is not active (call MPI_Start)"
        ));
    }
    match state.downcast::<Partitioned>() {
        Ok(p) => Ok(Part::Processes(p)),
        Err(state) => state
            .downcast::<ThreadPart>()
            .map(Part::Threads)
            .map_err(|_| not_partitioned()),
    }
}

fn partition_index(part: &Part, partition: c_int, arg: &str, func: &str) -> MpiResult<usize> {
    let what = (ErrorClass::Arg, "a partition of the request");
    index_below(partition, part.partitions(), what, func, arg)
}

fn send_side(request: MPI_Request, func: &str) -> MpiResult<Part> {
    let part = active(request, func)?;
    if !part.is_send() {
        return Err(mpi_err!(
            Request,
            "{func}(request={request:#x}): not a partitioned send request"
        ));
    }
    Ok(part)
}

pub(crate) fn mpi_pready(partition: c_int, request: MPI_Request) -> MpiResult<()> {
    const FUNC: &str = "MPI_Pready";
    let part = send_side(request, FUNC)?;
    let i = partition_index(&part, partition, "partition", FUNC)?;
    part.ready(i, FUNC)
}

pub(crate) fn mpi_pready_range(
    partition_low: c_int,
    partition_high: c_int,
    request: MPI_Request,
) -> MpiResult<()> {
    const FUNC: &str = "MPI_Pready_range";
    let part = send_side(request, FUNC)?;
    let low = partition_index(&part, partition_low, "partition_low", FUNC)?;
    let high = partition_index(&part, partition_high, "partition_high", FUNC)?;
    if low > high {
        return Err(mpi_err!(
            Arg,
            "{FUNC}(partition_low={low}, partition_high={high}): an empty range"
        ));
    }
    (low..=high).try_for_each(|i| part.ready(i, FUNC))
}

/// # Safety
/// `array_of_partitions` holds `length` ints.
pub(crate) unsafe fn mpi_pready_list(
    length: c_int,
    array_of_partitions: *const c_int,
    request: MPI_Request,
) -> MpiResult<()> {
    const FUNC: &str = "MPI_Pready_list";
    let part = send_side(request, FUNC)?;
    if length < 0 {
        return Err(mpi_err!(Arg, "{FUNC}(length={length}): negative length"));
    }
    if length == 0 {
        return Ok(());
    }
    non_null(array_of_partitions, FUNC, "array_of_partitions")?;
    // SAFETY: non-null and holding `length` ints per the caller's contract.
    let list = unsafe { std::slice::from_raw_parts(array_of_partitions, length as usize) };
    let indexes = list
        .iter()
        .map(|&p| partition_index(&part, p, "array_of_partitions", FUNC))
        .collect::<MpiResult<Vec<usize>>>()?;
    indexes.into_iter().try_for_each(|i| part.ready(i, FUNC))
}

/// # Safety
/// `flag` is a writable int.
pub(crate) unsafe fn mpi_parrived(
    request: MPI_Request,
    partition: c_int,
    flag: *mut c_int,
) -> MpiResult<()> {
    const FUNC: &str = "MPI_Parrived";
    non_null(flag, FUNC, "flag")?;
    let part = active(request, FUNC)?;
    if part.is_send() {
        return Err(mpi_err!(
            Request,
            "{FUNC}(request={request:#x}): not a partitioned receive request"
        ));
    }
    let i = partition_index(&part, partition, "partition", FUNC)?;
    let arrived = part.arrived(i, FUNC)?;
    // SAFETY: checked non-null; writable per the caller's contract.
    unsafe { flag.write(arrived as c_int) };
    Ok(())
}
