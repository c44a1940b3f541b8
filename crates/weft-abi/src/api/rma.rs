//! The RMA operations: `MPI_Put`, `MPI_Get`, `MPI_Accumulate`, `MPI_Get_accumulate`, their
//! request-based `MPI_R*` forms (each with its `_c` twin), `MPI_Fetch_and_op` and
//! `MPI_Compare_and_swap`. Arguments are checked here (window, rank, access epoch, counts,
//! datatypes, op); the core (`weft_core::rma`) moves the data, completing at the call, so a
//! request-based form returns a request that is already complete.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use weft_core::datatype::{Buf, Type};
use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::message::Status;
use weft_core::op::{OpKind, Reduction};
use weft_core::rma::Target;

use crate::api::coll_args::{buf_at, dtype};
use crate::api::op as ops;
use crate::args::{non_null, Int};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;
use crate::requests::completed_request;
use crate::win_object::WinObject;

/// The window and the target's window rank (`None`: `MPI_PROC_NULL`, nothing to do), with
/// the rank and the access epoch checked.
fn window_target(
    win: MPI_Win,
    target_rank: c_int,
    func: &str,
) -> MpiResult<(Arc<WinObject>, Option<u32>)> {
    let w = objects::win(win, func, "win")?;
    if target_rank == MPI_PROC_NULL {
        return Ok((w, None));
    }
    if target_rank < 0 || target_rank as u32 >= w.comm.size() {
        return Err(MpiError::new(
            ErrorClass::Rank,
            format!(
                "{func}(target_rank={target_rank}): not a rank of the window's group (size {})",
                w.comm.size()
            ),
        ));
    }
    let t = target_rank as u32;
    w.rma.check_access(t, func)?;
    Ok((w, Some(t)))
}

/// The target datatype and count, checked.
fn target_type(count: i64, datatype: MPI_Datatype, func: &str) -> MpiResult<(usize, Arc<Type>)> {
    if count < 0 {
        return Err(MpiError::new(
            ErrorClass::Count,
            format!("{func}(target_count={count}): negative count"),
        ));
    }
    let t = dtype(datatype, func, "target_datatype")?;
    if t.bytes_for(count as usize).is_none() {
        return Err(MpiError::new(
            ErrorClass::Count,
            format!("{func}(target_count={count}): the target data size overflows"),
        ));
    }
    Ok((count as usize, t))
}

/// The op of an accumulate-type operation on `count` elements of `datatype`: predefined ops
/// only (MPI 4.1 §12.3.4), `MPI_REPLACE` and `MPI_NO_OP` included. With nothing to combine
/// (`count` 0) any predefined op is accepted on any type, as MPICH does (mpi4py's tests
/// accumulate zero `MPI_BYTE`s with `MPI_SUM`).
fn acc_op(
    op: MPI_Op,
    datatype: MPI_Datatype,
    t: &Arc<Type>,
    count: usize,
    func: &str,
) -> MpiResult<Reduction> {
    if count == 0 && ops::predefined(op).is_some() {
        return ops::reduction(MPI_REPLACE, datatype, t, func);
    }
    if ops::predefined(op).is_none() {
        if op != MPI_OP_NULL {
            ops::user_op(op, func)?;
        }
        return Err(MpiError::new(
            ErrorClass::Op,
            format!("{func}(op={op:#x}): RMA accumulates take predefined ops only"),
        ));
    }
    ops::reduction(op, datatype, t, func)
}

/// Write the request of a request-based form: complete already.
///
/// # Safety
/// `request` null or writable.
unsafe fn complete_request(win: MPI_Win, request: *mut MPI_Request, func: &str) -> MpiResult<()> {
    let w = objects::win(win, func, "win")?;
    let h = completed_request(&w.comm, Status::default(), MPI_COMM_NULL);
    // SAFETY: checked non-null by the caller; writable per the caller's contract.
    unsafe { request.write(h) };
    Ok(())
}

/// What a put, get or accumulate names on both sides.
struct Move {
    w: Arc<WinObject>,
    rank: Option<u32>,
    origin: Buf,
    count: usize,
    ty: Arc<Type>,
    _origin_ty: Arc<Type>,
}

/// Check the arguments shared by put, get and accumulate.
///
/// # Safety
/// `origin_addr` holds `origin_count` instances of the origin type.
#[allow(clippy::too_many_arguments)]
unsafe fn moving(
    origin_addr: usize,
    origin_count: i64,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: i64,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    func: &str,
) -> MpiResult<Move> {
    let (w, rank) = window_target(win, target_rank, func)?;
    let ot = dtype(origin_datatype, func, "origin_datatype")?;
    // SAFETY: forwarded contract.
    let origin = unsafe {
        buf_at(
            origin_addr,
            origin_count,
            &ot,
            func,
            "origin_addr",
            "origin_count",
        )?
    };
    let (count, ty) = target_type(target_count, target_datatype, func)?;
    if target_disp < 0 && rank.is_some() {
        return Err(MpiError::new(
            ErrorClass::Disp,
            format!("{func}(target_disp={target_disp}): negative displacement"),
        ));
    }
    Ok(Move {
        w,
        rank,
        origin,
        count,
        ty,
        _origin_ty: ot,
    })
}

impl Move {
    fn target(&self, rank: u32, disp: MPI_Aint) -> Target<'_> {
        Target {
            rank,
            disp: disp as i64,
            count: self.count,
            ty: &self.ty,
        }
    }
}

/// `MPI_Put` and its `_c` twin.
///
/// # Safety
/// The standard's buffer contract for `origin_addr`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn put<C: Int>(
    origin_addr: *const c_void,
    origin_count: C,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: C,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded contract.
    let m = unsafe {
        moving(
            origin_addr as usize,
            origin_count.get(),
            origin_datatype,
            target_rank,
            target_disp,
            target_count.get(),
            target_datatype,
            win,
            func,
        )?
    };
    match m.rank {
        Some(r) => m.w.rma.put(&m.origin, &m.target(r, target_disp), func),
        None => Ok(()),
    }
}

/// `MPI_Rput` and its `_c` twin.
///
/// # Safety
/// As `put`; `request` null or writable.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn rput<C: Int>(
    origin_addr: *const c_void,
    origin_count: C,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: C,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    non_null(request, func, "request")?;
    // SAFETY: forwarded contract.
    unsafe {
        put(
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            win,
            func,
        )?;
        complete_request(win, request, func)
    }
}

/// `MPI_Get` and its `_c` twin.
///
/// # Safety
/// The standard's buffer contract for `origin_addr` (written).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn get<C: Int>(
    origin_addr: *mut c_void,
    origin_count: C,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: C,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded contract.
    let m = unsafe {
        moving(
            origin_addr as usize,
            origin_count.get(),
            origin_datatype,
            target_rank,
            target_disp,
            target_count.get(),
            target_datatype,
            win,
            func,
        )?
    };
    match m.rank {
        Some(r) => m.w.rma.get(&m.origin, &m.target(r, target_disp), func),
        None => Ok(()),
    }
}

/// `MPI_Rget` and its `_c` twin.
///
/// # Safety
/// As `get`; `request` null or writable.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn rget<C: Int>(
    origin_addr: *mut c_void,
    origin_count: C,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: C,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    non_null(request, func, "request")?;
    // SAFETY: forwarded contract.
    unsafe {
        get(
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            win,
            func,
        )?;
        complete_request(win, request, func)
    }
}

/// `MPI_Accumulate` and its `_c` twin.
///
/// # Safety
/// The standard's buffer contract for `origin_addr`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn accumulate<C: Int>(
    origin_addr: *const c_void,
    origin_count: C,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: C,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded contract.
    let m = unsafe {
        moving(
            origin_addr as usize,
            origin_count.get(),
            origin_datatype,
            target_rank,
            target_disp,
            target_count.get(),
            target_datatype,
            win,
            func,
        )?
    };
    let red = acc_op(op, target_datatype, &m.ty, m.count, func)?;
    match m.rank {
        Some(r) => {
            m.w.rma
                .accumulate(&m.origin, &m.target(r, target_disp), &red, func)
        }
        None => Ok(()),
    }
}

/// `MPI_Raccumulate` and its `_c` twin.
///
/// # Safety
/// As `accumulate`; `request` null or writable.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn raccumulate<C: Int>(
    origin_addr: *const c_void,
    origin_count: C,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: C,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    non_null(request, func, "request")?;
    // SAFETY: forwarded contract.
    unsafe {
        accumulate(
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            op,
            win,
            func,
        )?;
        complete_request(win, request, func)
    }
}

/// `MPI_Get_accumulate` and its `_c` twin.
///
/// # Safety
/// The standard's buffer contracts for `origin_addr` (unused with `MPI_NO_OP`) and
/// `result_addr` (written).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn get_accumulate<C: Int>(
    origin_addr: *const c_void,
    origin_count: C,
    origin_datatype: MPI_Datatype,
    result_addr: *mut c_void,
    result_count: C,
    result_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: C,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    func: &str,
) -> MpiResult<()> {
    let noop = op == MPI_NO_OP;
    // SAFETY: forwarded contract (no origin data is read with MPI_NO_OP).
    let m = unsafe {
        moving(
            if noop { 0 } else { origin_addr as usize },
            if noop { 0 } else { origin_count.get() },
            if noop { MPI_BYTE } else { origin_datatype },
            target_rank,
            target_disp,
            target_count.get(),
            target_datatype,
            win,
            func,
        )?
    };
    let rt = dtype(result_datatype, func, "result_datatype")?;
    // SAFETY: forwarded contract.
    let result = unsafe {
        buf_at(
            result_addr as usize,
            result_count.get(),
            &rt,
            func,
            "result_addr",
            "result_count",
        )?
    };
    let red = acc_op(op, target_datatype, &m.ty, m.count, func)?;
    match m.rank {
        Some(r) => {
            m.w.rma
                .get_accumulate(&m.origin, &result, &m.target(r, target_disp), &red, func)
        }
        None => Ok(()),
    }
}

/// `MPI_Rget_accumulate` and its `_c` twin.
///
/// # Safety
/// As `get_accumulate`; `request` null or writable.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn rget_accumulate<C: Int>(
    origin_addr: *const c_void,
    origin_count: C,
    origin_datatype: MPI_Datatype,
    result_addr: *mut c_void,
    result_count: C,
    result_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: C,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    non_null(request, func, "request")?;
    // SAFETY: forwarded contract.
    unsafe {
        get_accumulate(
            origin_addr,
            origin_count,
            origin_datatype,
            result_addr,
            result_count,
            result_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            op,
            win,
            func,
        )?;
        complete_request(win, request, func)
    }
}

/// `MPI_Fetch_and_op` (the general path of `rma_direct::mpi_fetch_and_op`): one element of a
/// predefined type.
///
/// # Safety
/// `origin_addr` (unless `MPI_NO_OP`) and `result_addr` hold one element.
pub(crate) unsafe fn fetch_and_op(
    origin_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    op: MPI_Op,
    win: MPI_Win,
) -> MpiResult<()> {
    let func = "MPI_Fetch_and_op";
    predefined_only(datatype, func)?;
    // SAFETY: forwarded contract.
    unsafe {
        get_accumulate(
            origin_addr,
            1i32,
            datatype,
            result_addr,
            1,
            datatype,
            target_rank,
            target_disp,
            1,
            datatype,
            op,
            win,
            func,
        )
    }
}

fn predefined_only(datatype: MPI_Datatype, func: &str) -> MpiResult<Arc<Type>> {
    let t = dtype(datatype, func, "datatype")?;
    if t.predefined.is_none() {
        return Err(MpiError::new(
            ErrorClass::Type,
            format!("{func}(datatype): a predefined datatype is required"),
        ));
    }
    Ok(t)
}

/// `MPI_Compare_and_swap` (the general path of `rma_direct::mpi_compare_and_swap`): one
/// element of a predefined integer, logical or byte type.
///
/// # Safety
/// `origin_addr`, `compare_addr` and `result_addr` hold one element each.
pub(crate) unsafe fn compare_and_swap(
    origin_addr: *const c_void,
    compare_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    win: MPI_Win,
) -> MpiResult<()> {
    let func = "MPI_Compare_and_swap";
    let t = predefined_only(datatype, func)?;
    // The standard allows C integer, Fortran integer, logical and byte types: those MPI_BAND
    // is defined on, plus the logical ones.
    let ok = t.element().is_some_and(|e| {
        Reduction::predefined(OpKind::Band, e).is_ok()
            || Reduction::predefined(OpKind::Land, e).is_ok()
    });
    if !ok {
        return Err(MpiError::new(
            ErrorClass::Type,
            format!("{func}(datatype): compare-and-swap needs an integer, logical or byte type"),
        ));
    }
    let (w, rank) = window_target(win, target_rank, func)?;
    let Some(rank) = rank else { return Ok(()) };
    if target_disp < 0 {
        return Err(MpiError::new(
            ErrorClass::Disp,
            format!("{func}(target_disp={target_disp}): negative displacement"),
        ));
    }
    // SAFETY: the caller's contract: one element at each address.
    let (o, c, r) = unsafe {
        (
            buf_at(origin_addr as usize, 1, &t, func, "origin_addr", "count")?,
            buf_at(compare_addr as usize, 1, &t, func, "compare_addr", "count")?,
            buf_at(result_addr as usize, 1, &t, func, "result_addr", "count")?,
        )
    };
    let target = Target {
        rank,
        disp: target_disp as i64,
        count: 1,
        ty: &t,
    };
    w.rma.compare_and_swap(&o, &c, &r, &target, func)
}
