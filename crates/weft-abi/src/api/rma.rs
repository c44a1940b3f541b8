//! The RMA operations' general paths: `MPI_Put`, `MPI_Get`, `MPI_Accumulate`,
//! `MPI_Get_accumulate` in every form (`_c` twins, request-based `MPI_R*` and `MPIX_Rr*`,
//! notifying `MPIX_*_notify`: `rma_args::Then`), `MPI_Fetch_and_op` and
//! `MPI_Compare_and_swap`. The plain C forms enter by `rma_direct.rs`, which comes here for
//! anything but the plainest arguments. Arguments are checked here (`rma_args`); the core
//! (`weft_core::rma`) moves the data, completing at the call, so a request-based form returns
//! a request that is already complete.

use std::ffi::c_void;

use weft_core::error::MpiResult;
use weft_core::mpi_err;
use weft_core::op::{OpKind, Reduction};
use weft_core::rma::Target;

use crate::api::coll_args::{buf_at, dtype};
use crate::api::rma_args::{
    acc_op, check_disp, predefined_only, window_target, Dir, Move, Origin, TargetArgs, Then,
};
use crate::constants::*;
use crate::ctypes::*;

/// Run a put, get or accumulate: check `then`'s argument and the operation's, run `op`, then
/// `then`.
///
/// # Safety
/// The origin holds what it names; `then`'s request, if any, is writable.
unsafe fn run(
    origin: Origin,
    target: TargetArgs,
    win: MPI_Win,
    then: Then,
    func: &str,
    op: impl FnOnce(&Move) -> MpiResult<()>,
) -> MpiResult<()> {
    then.check(func)?;
    // SAFETY: forwarded contract.
    let m = unsafe { Move::new(origin, target, win, func)? };
    op(&m)?;
    // SAFETY: forwarded contract.
    unsafe { then.finish(&m.w, m.rank, func) }
}

/// `MPI_Put` and `MPI_Get` (`dir`) in all their forms.
///
/// # Safety
/// The standard's buffer contract for the origin (written by a get); `then`'s request
/// writable.
pub(crate) unsafe fn transfer(
    origin: Origin,
    target: TargetArgs,
    win: MPI_Win,
    dir: Dir,
    then: Then,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded contract.
    unsafe {
        run(origin, target, win, then, func, |m| match (m.rank, dir) {
            (Some(r), Dir::Put) => m.w.rma.put(&m.origin, &m.target(r), func),
            (Some(r), Dir::Get) => m.w.rma.get(&m.origin, &m.target(r), func),
            (None, _) => Ok(()),
        })
    }
}

/// `MPI_Accumulate` (`result` `None`) and `MPI_Get_accumulate` in all their forms (and
/// `MPI_Fetch_and_op`'s general path).
///
/// # Safety
/// The standard's buffer contracts for the origin (unused by a get-accumulate with
/// `MPI_NO_OP`) and the result (written); `then`'s request writable.
pub(crate) unsafe fn accumulate(
    origin: Origin,
    result: Option<Origin>,
    target: TargetArgs,
    op: MPI_Op,
    win: MPI_Win,
    then: Then,
    func: &str,
) -> MpiResult<()> {
    // No origin data is read by a get-accumulate with MPI_NO_OP.
    let origin = match (op, result) {
        (MPI_NO_OP, Some(_)) => Origin::new(std::ptr::null::<c_void>(), 0, MPI_BYTE),
        _ => origin,
    };
    // SAFETY: forwarded contract.
    unsafe {
        run(origin, target, win, then, func, |m| {
            let result = match result {
                Some(res) => {
                    let rt = dtype(res.datatype, func, "result_datatype")?;
                    // SAFETY: forwarded contract.
                    let b = buf_at(
                        res.addr,
                        res.count,
                        &rt,
                        func,
                        "result_addr",
                        "result_count",
                    )?;
                    Some((b, rt))
                }
                None => None,
            };
            let red = acc_op(op, target.datatype, &m.ty, m.count(), func)?;
            match (m.rank, result) {
                (Some(r), Some((res, _ty))) => {
                    m.w.rma
                        .get_accumulate(&m.origin, &res, &m.target(r), &red, func)
                }
                (Some(r), None) => m.w.rma.accumulate(&m.origin, &m.target(r), &red, func),
                (None, _) => Ok(()),
            }
        })
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
    target: TargetArgs,
    op: MPI_Op,
    win: MPI_Win,
) -> MpiResult<()> {
    let func = "MPI_Fetch_and_op";
    predefined_only(target.datatype, func)?;
    let origin = Origin::new(origin_addr, 1, target.datatype);
    let result = Origin::new(result_addr, 1, target.datatype);
    // SAFETY: forwarded contract.
    unsafe { accumulate(origin, Some(result), target, op, win, Then::Done, func) }
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
    target: TargetArgs,
    win: MPI_Win,
) -> MpiResult<()> {
    let func = "MPI_Compare_and_swap";
    let t = predefined_only(target.datatype, func)?;
    // The standard allows C integer, Fortran integer, logical and byte types: those MPI_BAND
    // is defined on, plus the logical ones.
    let ok = t.element().is_some_and(|e| {
        Reduction::predefined(OpKind::Band, e).is_ok()
            || Reduction::predefined(OpKind::Land, e).is_ok()
    });
    if !ok {
        return Err(mpi_err!(
            Type,
            "{func}(datatype): compare-and-swap needs an integer, logical or byte type"
        ));
    }
    let (w, rank) = window_target(win, target.rank, func)?;
    let Some(rank) = rank else { return Ok(()) };
    check_disp(target.disp, func)?;
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
        disp: target.disp as i64,
        count: 1,
        ty: &t,
    };
    w.rma.compare_and_swap(&o, &c, &r, &target, func)
}
