//! The direct entry points of `MPI_Put`, `MPI_Get` and `MPI_Accumulate` (issue #16): when the
//! arguments are plain (the same byte-contiguous predefined type and count on both sides, a
//! real target rank), the window is borrowed without a reference count below
//! `MPI_THREAD_MULTIPLE`, the epoch is one flag load and the bytes move by the core's direct
//! path (`weft_core::rma::direct`) or its atomics. Anything else, and every error, goes to
//! the general implementation in `rma.rs`, which checks and reports.

use std::ffi::{c_int, c_void};

use weft_core::error::MpiResult;
use weft_core::instance::calls_may_overlap;
use weft_core::op::Reduction;
use weft_core::rma::Target;

use crate::api::op as ops;
use crate::api::rma::{accumulate, get, put};
use crate::constants::*;
use crate::ctypes::*;
use crate::datatypes::{committed_ref, contiguous_buf};
use crate::objects::WINS;
use crate::win_object::WinObject;

/// Run `f` on the window `win` names, borrowed without a count when no other thread can be
/// in the library; `None` for a bad handle (the general path reports it).
#[inline(always)]
fn with_win<R>(win: MPI_Win, f: impl FnOnce(&WinObject) -> R) -> Option<R> {
    if !calls_may_overlap() {
        // SAFETY: no other thread is in MPI (thread level below MULTIPLE), and nothing on
        // this thread frees the window while `f` runs (no user code, no waiting).
        let w = unsafe { WINS.borrow(win) }.ok()?;
        Some(f(w))
    } else {
        let w = WINS.get(win).ok()?;
        Some(f(&w))
    }
}

/// Plain arguments: the same type and count on both sides and a real, non-negative target
/// and displacement (the type's byte-contiguity is checked by `contiguous_buf`).
#[inline(always)]
fn plain(
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
) -> bool {
    origin_datatype == target_datatype
        && origin_count == target_count
        && target_rank >= 0
        && target_disp >= 0
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn mpi_put(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
) -> MpiResult<()> {
    if plain(
        origin_count,
        origin_datatype,
        target_rank,
        target_disp,
        target_count,
        target_datatype,
    ) {
        let data =
            // SAFETY: the caller's buffer contract (the standard's rule).
            unsafe { contiguous_buf(origin_addr, origin_count as MPI_Count, origin_datatype) };
        if let Some(data) = data {
            let done = with_win(win, |w| {
                data.with_bytes(|b| w.rma.put_direct(target_rank as u32, target_disp as i64, b))
            });
            if done == Some(true) {
                return Ok(());
            }
        }
    }
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
            "MPI_Put",
        )
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn mpi_get(
    origin_addr: *mut c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
) -> MpiResult<()> {
    if plain(
        origin_count,
        origin_datatype,
        target_rank,
        target_disp,
        target_count,
        target_datatype,
    ) {
        let data =
            // SAFETY: the caller's buffer contract (the standard's rule).
            unsafe { contiguous_buf(origin_addr, origin_count as MPI_Count, origin_datatype) };
        if let Some(data) = data {
            let done = with_win(win, |w| {
                data.with_bytes_mut(|b| w.rma.get_direct(target_rank as u32, target_disp as i64, b))
            });
            if done == Some(true) {
                return Ok(());
            }
        }
    }
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
            "MPI_Get",
        )
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn mpi_accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
) -> MpiResult<()> {
    let func = "MPI_Accumulate";
    if plain(
        origin_count,
        origin_datatype,
        target_rank,
        target_disp,
        target_count,
        target_datatype,
    ) && origin_count > 0
        && op != MPI_NO_OP
    {
        // SAFETY: the caller's buffer contract (the standard's rule).
        let data =
            unsafe { contiguous_buf(origin_addr, origin_count as MPI_Count, origin_datatype) };
        let ty = committed_ref(target_datatype, func, "target_datatype").ok();
        let kind = ops::predefined(op);
        if let (Some(data), Some(ty), Some(kind)) = (data, ty, kind) {
            let red = ty
                .element()
                .and_then(|e| Reduction::predefined(kind, e).ok());
            if let Some(red) = red {
                let t = target_rank as u32;
                let done = with_win(win, |w| {
                    if t >= w.comm.size() || w.rma.check_access(t, func).is_err() {
                        return None;
                    }
                    let target = Target {
                        rank: t,
                        disp: target_disp as i64,
                        count: origin_count as usize,
                        ty: &ty,
                    };
                    Some(w.rma.accumulate(&data, &target, &red, func))
                });
                if let Some(Some(r)) = done {
                    return r;
                }
            }
        }
    }
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
        )
    }
}
