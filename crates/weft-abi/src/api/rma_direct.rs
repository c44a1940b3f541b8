//! The direct entry points of `MPI_Put`, `MPI_Get`, `MPI_Accumulate`, `MPI_Get_accumulate`,
//! `MPI_Fetch_and_op` and `MPI_Compare_and_swap` (issue #16): when the arguments are plain
//! (the same byte-contiguous predefined type and count on both sides, a real target rank, a
//! predefined op the type allows), the window is borrowed without a reference count below
//! `MPI_THREAD_MULTIPLE`, the epoch is one flag load and the bytes move by the core's direct
//! path (`weft_core::rma::direct`): a copy, or CPU atomics element by element. Anything else, and every error, goes to
//! the general implementation in `rma.rs`, which checks and reports.

use std::ffi::{c_int, c_void};

use weft_core::datatype::Buf;
use weft_core::error::MpiResult;
use weft_core::instance::calls_may_overlap;
use weft_core::op::Reduction;
use weft_core::rma::atomic::AtomicOp;
use weft_core::rma::Target;

use crate::api::op as ops;
use crate::api::rma::{accumulate, compare_and_swap, fetch_and_op, get, get_accumulate, put};
use crate::constants::*;
use crate::ctypes::*;
use crate::datatypes::{
    committed_ref, contiguous_buf, contiguous_predefined_size, contiguous_reduction,
};
use crate::objects::WINS;
use crate::win_object::WinObject;

/// Run `f` on the window `win` names, borrowed without a count when no other thread can be
/// in the library; `None` for a bad handle (the general path reports it).
#[inline(always)]
pub(crate) fn with_win<R>(win: MPI_Win, f: impl FnOnce(&WinObject) -> R) -> Option<R> {
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

/// The atomic update an accumulate-type `op` makes with reduction `red`.
#[inline(always)]
fn atomic_op(op: MPI_Op, red: &Reduction) -> AtomicOp<'_> {
    match op {
        MPI_NO_OP => AtomicOp::NoOp,
        MPI_REPLACE => AtomicOp::Replace,
        _ => AtomicOp::Apply(red),
    }
}

/// Run an accumulate-type operation on `count` elements of `datatype` (predefined,
/// byte-contiguous) at target `target_rank` by CPU atomics (`WinRma::atomic_direct`), reading
/// `origin` (unless `op` is `NoOp`) and writing the previous values to `result` when given.
/// False: nothing done (bad or unusual arguments, or memory off the intrinsic path): the
/// general path checks, reports and runs it.
///
/// # Safety
/// `origin` holds `count` elements (unless `NoOp`), `result` room for `count` elements.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn atomic_plain(
    origin: *const c_void,
    result: Option<*mut c_void>,
    count: c_int,
    datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    op: AtomicOp,
    win: MPI_Win,
) -> bool {
    let size = contiguous_predefined_size(datatype);
    let noop = matches!(op, AtomicOp::NoOp);
    if size == 0
        || count <= 0
        || target_rank < 0
        || target_disp < 0
        || (!noop && origin.is_null())
        || result.is_some_and(|r| r.is_null())
    {
        return false;
    }
    let len = count as usize * size;
    // SAFETY: the caller's contract: `len` bytes of elements at each non-null address.
    let (input, old) = unsafe {
        (
            Buf::new(origin as usize, if noop { 0 } else { len }),
            result.map(|r| Buf::new(r as usize, len)),
        )
    };
    let run = |i: &[u8], o: Option<&mut [u8]>| {
        with_win(win, |w| {
            w.rma
                .atomic_direct(target_rank as u32, target_disp as i64, size, op, i, o)
        }) == Some(true)
    };
    input.with_bytes(|i| match &old {
        Some(o) => o.with_bytes_mut(|o| run(i, Some(o))),
        None => run(i, None),
    })
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
    if let Some(red) = (origin_count == target_count && origin_datatype == target_datatype)
        .then(|| contiguous_reduction(op, target_datatype))
        .flatten()
    {
        // SAFETY: the caller's buffer contract (the standard's rule).
        let done = unsafe {
            atomic_plain(
                origin_addr,
                None,
                origin_count,
                origin_datatype,
                target_rank,
                target_disp,
                atomic_op(op, &red),
                win,
            )
        };
        if done {
            return Ok(());
        }
    }
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

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn mpi_get_accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    result_addr: *mut c_void,
    result_count: c_int,
    result_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
) -> MpiResult<()> {
    let same = result_count == target_count
        && result_datatype == target_datatype
        && (op == MPI_NO_OP
            || (origin_count == target_count && origin_datatype == target_datatype));
    if let Some(red) = same
        .then(|| contiguous_reduction(op, target_datatype))
        .flatten()
    {
        // SAFETY: the caller's buffer contracts (the standard's rule).
        let done = unsafe {
            atomic_plain(
                origin_addr,
                Some(result_addr),
                target_count,
                target_datatype,
                target_rank,
                target_disp,
                atomic_op(op, &red),
                win,
            )
        };
        if done {
            return Ok(());
        }
    }
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
            "MPI_Get_accumulate",
        )
    }
}

/// `MPI_Fetch_and_op`: by CPU atomics when plain, else `rma::fetch_and_op`.
///
/// # Safety
/// `origin_addr` (unless `MPI_NO_OP`) and `result_addr` hold one element.
pub(crate) unsafe fn mpi_fetch_and_op(
    origin_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    op: MPI_Op,
    win: MPI_Win,
) -> MpiResult<()> {
    if let Some(red) = contiguous_reduction(op, datatype) {
        // SAFETY: the caller's contract: one element at each address.
        let done = unsafe {
            atomic_plain(
                origin_addr,
                Some(result_addr),
                1,
                datatype,
                target_rank,
                target_disp,
                atomic_op(op, &red),
                win,
            )
        };
        if done {
            return Ok(());
        }
    }
    // SAFETY: forwarded contract.
    unsafe {
        fetch_and_op(
            origin_addr,
            result_addr,
            datatype,
            target_rank,
            target_disp,
            op,
            win,
        )
    }
}

/// `MPI_Compare_and_swap`: by a CPU compare-and-swap when plain, else
/// `rma::compare_and_swap`.
///
/// # Safety
/// `origin_addr`, `compare_addr` and `result_addr` hold one element each.
pub(crate) unsafe fn mpi_compare_and_swap(
    origin_addr: *const c_void,
    compare_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    win: MPI_Win,
) -> MpiResult<()> {
    // The types compare-and-swap takes: integer, logical and byte ones.
    let cas_type = contiguous_reduction(MPI_BAND, datatype)
        .or_else(|| contiguous_reduction(MPI_LAND, datatype))
        .is_some();
    let size = contiguous_predefined_size(datatype);
    if cas_type && !compare_addr.is_null() {
        // SAFETY: the caller's contract: one element at `compare_addr`.
        let compare = unsafe { Buf::new(compare_addr as usize, size) };
        let done = compare.with_bytes(|c| {
            // SAFETY: the caller's contract: one element at each address.
            unsafe {
                atomic_plain(
                    origin_addr,
                    Some(result_addr),
                    1,
                    datatype,
                    target_rank,
                    target_disp,
                    AtomicOp::Cas(c),
                    win,
                )
            }
        });
        if done {
            return Ok(());
        }
    }
    // SAFETY: forwarded contract.
    unsafe {
        compare_and_swap(
            origin_addr,
            compare_addr,
            result_addr,
            datatype,
            target_rank,
            target_disp,
            win,
        )
    }
}
