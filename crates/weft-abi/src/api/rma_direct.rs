//! The direct entry points of `MPI_Put`, `MPI_Get`, `MPI_Accumulate`, `MPI_Get_accumulate`,
//! `MPI_Fetch_and_op` and `MPI_Compare_and_swap` (issue #16): when the arguments are plain
//! (the same byte-contiguous predefined type and count on both sides, a real target rank, a
//! predefined op the type allows), the window is borrowed without a reference count below
//! `MPI_THREAD_MULTIPLE` (`rma_args::with_win`), the epoch is one flag load and the bytes
//! move by the core's direct path (`weft_core::rma::direct`): a copy, or CPU atomics element
//! by element. Anything else, and every error, goes to the general implementation in
//! `rma.rs`, which checks and reports.

use std::ffi::{c_int, c_void};

use weft_core::datatype::Buf;
use weft_core::error::MpiResult;
use weft_core::op::Reduction;
use weft_core::rma::atomic::AtomicOp;

use crate::api::rma::{accumulate, compare_and_swap, fetch_and_op, transfer};
use crate::api::rma_args::{with_win, Dir, Origin, TargetArgs, Then};
use crate::constants::*;
use crate::ctypes::*;
use crate::datatypes::{contiguous_buf, contiguous_predefined_size, contiguous_reduction};

/// Plain arguments for a put or get: the same type and count on both sides, byte-contiguous
/// and predefined, and a real, non-negative target and displacement. The origin's bytes and
/// the target rank and displacement; `None` otherwise.
///
/// # Safety
/// The origin holds what it names.
#[inline(always)]
unsafe fn plain(o: &Origin, t: &TargetArgs) -> Option<(Buf, u32, i64)> {
    if o.datatype != t.datatype || o.count != t.count || t.rank < 0 || t.disp < 0 {
        return None;
    }
    // SAFETY: the caller's contract.
    let data = unsafe { contiguous_buf(o.addr as *const c_void, o.count, o.datatype) }?;
    Some((data, t.rank as u32, t.disp as i64))
}

/// `MPI_Put` and `MPI_Get` (`dir`): by the direct path when plain, else `rma::transfer`.
///
/// # Safety
/// The standard's buffer contract for the origin (written by a get).
#[inline(always)]
pub(crate) unsafe fn transfer_plain(
    o: Origin,
    t: TargetArgs,
    win: MPI_Win,
    dir: Dir,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: the caller's buffer contract (the standard's rule).
    if let Some((data, r, d)) = unsafe { plain(&o, &t) } {
        let done = with_win(win, |w| match dir {
            Dir::Put => data.with_bytes(|b| w.rma.put_direct(r, d, b)),
            Dir::Get => data.with_bytes_mut(|b| w.rma.get_direct(r, d, b)),
        });
        if done == Some(true) {
            return Ok(());
        }
    }
    // SAFETY: forwarded contract.
    unsafe { transfer(o, t, win, dir, Then::Done, func) }
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

/// Run an accumulate-type operation on target `t` (its count of its predefined,
/// byte-contiguous datatype) by CPU atomics (`WinRma::atomic_direct`), reading `origin`
/// (unless `op` is `NoOp`) and writing the previous values to `result` when given. False:
/// nothing done (bad or unusual arguments, or memory off the intrinsic path): the general
/// path checks, reports and runs it.
///
/// # Safety
/// `origin` holds the target's count of elements (unless `NoOp`), `result` room for them.
#[inline(always)]
unsafe fn atomic_plain(
    origin: *const c_void,
    result: Option<*mut c_void>,
    t: &TargetArgs,
    op: AtomicOp,
    win: MPI_Win,
) -> bool {
    let size = contiguous_predefined_size(t.datatype);
    let noop = matches!(op, AtomicOp::NoOp);
    if size == 0
        || t.count <= 0
        || t.rank < 0
        || t.disp < 0
        || (!noop && origin.is_null())
        || result.is_some_and(|r| r.is_null())
    {
        return false;
    }
    let len = t.count as usize * size;
    // SAFETY: the caller's contract: `len` bytes of elements at each non-null address.
    let (input, old) = unsafe {
        (
            Buf::new(origin as usize, if noop { 0 } else { len }),
            result.map(|r| Buf::new(r as usize, len)),
        )
    };
    let (r, d) = (t.rank as u32, t.disp as i64);
    let run = |i: &[u8], o: Option<&mut [u8]>| {
        with_win(win, |w| w.rma.atomic_direct(r, d, size, op, i, o)) == Some(true)
    };
    input.with_bytes(|i| match &old {
        Some(o) => o.with_bytes_mut(|o| run(i, Some(o))),
        None => run(i, None),
    })
}

/// `MPI_Accumulate` (`res` `None`) and `MPI_Get_accumulate`: by CPU atomics when plain,
/// else `rma::accumulate`.
///
/// # Safety
/// The standard's buffer contracts for the origin and the result.
#[inline(always)]
pub(crate) unsafe fn accumulate_plain(
    o: Origin,
    res: Option<Origin>,
    t: TargetArgs,
    op: MPI_Op,
    win: MPI_Win,
    func: &str,
) -> MpiResult<()> {
    let same = |s: &Origin| s.count == t.count && s.datatype == t.datatype;
    let fetch_only = res.is_some() && op == MPI_NO_OP;
    let plain = res.as_ref().is_none_or(same) && (fetch_only || same(&o));
    if let Some(red) = plain
        .then(|| contiguous_reduction(op, t.datatype))
        .flatten()
    {
        let (input, out) = (o.addr as *const c_void, res.map(|r| r.addr as *mut c_void));
        // SAFETY: the caller's buffer contracts (the standard's rule).
        if unsafe { atomic_plain(input, out, &t, atomic_op(op, &red), win) } {
            return Ok(());
        }
    }
    // SAFETY: forwarded contract.
    unsafe { accumulate(o, res, t, op, win, Then::Done, func) }
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
    let t = TargetArgs::new(target_rank, target_disp, 1, datatype);
    if let Some(red) = contiguous_reduction(op, datatype) {
        let out = Some(result_addr);
        // SAFETY: the caller's contract: one element at each address.
        if unsafe { atomic_plain(origin_addr, out, &t, atomic_op(op, &red), win) } {
            return Ok(());
        }
    }
    // SAFETY: forwarded contract.
    unsafe { fetch_and_op(origin_addr, result_addr, t, op, win) }
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
    let t = TargetArgs::new(target_rank, target_disp, 1, datatype);
    // The types compare-and-swap takes: integer, logical and byte ones.
    let cas_type = contiguous_reduction(MPI_BAND, datatype)
        .or_else(|| contiguous_reduction(MPI_LAND, datatype))
        .is_some();
    if cas_type && !compare_addr.is_null() {
        let size = contiguous_predefined_size(datatype);
        // SAFETY: the caller's contract: one element at `compare_addr`.
        let compare = unsafe { Buf::new(compare_addr as usize, size) };
        let out = Some(result_addr);
        let done = compare.with_bytes(|c| {
            // SAFETY: the caller's contract: one element at each address.
            unsafe { atomic_plain(origin_addr, out, &t, AtomicOp::Cas(c), win) }
        });
        if done {
            return Ok(());
        }
    }
    // SAFETY: forwarded contract.
    unsafe { compare_and_swap(origin_addr, compare_addr, result_addr, t, win) }
}
