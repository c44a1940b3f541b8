//! The direct entry points of `MPI_Put`, `MPI_Get`, `MPI_Accumulate`, `MPI_Get_accumulate`,
//! `MPI_Fetch_and_op` and `MPI_Compare_and_swap` (issue #16), and of the notifying
//! `MPIX_Put_notify` and `MPIX_Accumulate_notify` (issue #18: the notification follows the
//! direct operation): when the arguments are plain
//! (the same byte-contiguous predefined type and count on both sides, a real target rank, a
//! predefined op the type allows), the window is borrowed without a reference count below
//! `MPI_THREAD_MULTIPLE` (`rma_args::with_win`), the epoch is one flag load and the bytes
//! move by the core's direct path (`weft_core::rma::direct`): a copy, or CPU atomics element
//! by element. Single elements whose op is one CPU instruction (a fetch-and-op or one-element
//! accumulate with `MPI_SUM` on integers, a bitwise op, `MPI_REPLACE` or `MPI_NO_OP`; a
//! compare-and-swap) travel in registers (`word_plain`), with no buffer descriptions or
//! reduction built. Anything else, and every error, goes to the general implementation in
//! `rma.rs`, which checks and reports.

use std::ffi::{c_int, c_void};
use std::ptr::null_mut;

use weft_core::datatype::{Buf, TypeClass};
use weft_core::error::MpiResult;
use weft_core::op::Reduction;
use weft_core::rma::atomic::{AtomicOp, WordOp};

use crate::api::rma::{accumulate, compare_and_swap, fetch_and_op, transfer};
use crate::api::rma_args::{with_win, Dir, Origin, TargetArgs, Then};
use crate::constants::*;
use crate::ctypes::*;
use crate::datatypes::{
    contiguous_buf, contiguous_predefined_size, contiguous_reduction, word_type,
};
use crate::win_object::WinObject;

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

/// Whether the direct path may run an operation followed by `then` (`Done`, or `Notify` on
/// a valid index: a bad one goes to the general path, which reports it before anything
/// moves).
#[inline(always)]
fn direct_then(then: Then, func: &str) -> bool {
    match then {
        Then::Done => true,
        Then::Notify(_) => then.check(func).is_ok(),
        Then::Request(_) => false,
    }
}

/// After an operation the direct path ran on target `rank`: the notification `then` asks
/// for (a second window look-up, only for the notifying forms).
#[inline(always)]
fn then_direct(then: Then, win: MPI_Win, rank: c_int, func: &str) -> MpiResult<()> {
    match then {
        Then::Notify(_) => {
            with_win(win, |w| then.notify(w, Some(rank as u32), func)).unwrap_or(Ok(()))
        }
        _ => Ok(()),
    }
}

/// `MPI_Put` and `MPI_Get` (`dir`), and `MPIX_Put_notify` (`then`): by the direct path when
/// plain, else `rma::transfer`.
///
/// # Safety
/// The standard's buffer contract for the origin (written by a get).
#[inline(always)]
pub(crate) unsafe fn transfer_plain(
    o: Origin,
    t: TargetArgs,
    win: MPI_Win,
    dir: Dir,
    then: Then,
    func: &str,
) -> MpiResult<()> {
    let args = if direct_then(then, func) {
        // SAFETY: the caller's buffer contract (the standard's rule).
        unsafe { plain(&o, &t) }
    } else {
        None
    };
    if let Some((data, r, d)) = args {
        let moved = |w: &WinObject| match dir {
            Dir::Put => data.with_bytes(|b| w.rma.put_direct(r, d, b)),
            Dir::Get => data.with_bytes_mut(|b| w.rma.get_direct(r, d, b)),
        };
        if let Then::Notify(_) = then {
            // The notification in the same borrow of the window as the put.
            let done = with_win(win, |w| moved(w).then(|| then.notify(w, Some(r), func)));
            if let Some(Some(notified)) = done {
                return notified;
            }
        } else if with_win(win, moved) == Some(true) {
            // `then` is `Done` (`direct_then` sends requests to the general path).
            return Ok(());
        }
    }
    // SAFETY: forwarded contract.
    unsafe { transfer(o, t, win, dir, then, func) }
}

/// The one CPU instruction `op` is on elements of `datatype`, where it is one and the standard
/// defines the op on the type (MPI 4.1 §6.9.2): the element size and the instruction.
#[inline(always)]
fn word_op(op: MPI_Op, datatype: MPI_Datatype) -> Option<(usize, WordOp)> {
    use TypeClass::*;
    let (size, class) = word_type(datatype)?;
    let int = matches!(class, SignedInt | UnsignedInt | Char);
    let bits = int || class == Byte;
    let w = match op {
        MPI_REPLACE if class != Packed => WordOp::Swap,
        MPI_NO_OP if class != Packed => WordOp::Load,
        MPI_SUM if int => WordOp::Add,
        MPI_BAND if bits => WordOp::And,
        MPI_BOR if bits => WordOp::Or,
        MPI_BXOR if bits => WordOp::Xor,
        _ => return None,
    };
    Some((size, w))
}

/// The element of `size` bytes (1, 2, 4 or 8) at `p`, zero-extended.
///
/// # Safety
/// `p` holds one element of `size` bytes.
#[inline(always)]
unsafe fn load_word(p: *const c_void, size: usize) -> u64 {
    // SAFETY: the caller's contract; unaligned reads are allowed.
    unsafe {
        match size {
            1 => (p as *const u8).read() as u64,
            2 => (p as *const u16).read_unaligned() as u64,
            4 => (p as *const u32).read_unaligned() as u64,
            _ => (p as *const u64).read_unaligned(),
        }
    }
}

/// Store the low `size` bytes of `v` at `p` as one element.
///
/// # Safety
/// `p` has room for one element of `size` bytes.
#[inline(always)]
unsafe fn store_word(p: *mut c_void, size: usize, v: u64) {
    // SAFETY: the caller's contract; unaligned writes are allowed.
    unsafe {
        match size {
            1 => (p as *mut u8).write(v as u8),
            2 => (p as *mut u16).write_unaligned(v as u16),
            4 => (p as *mut u32).write_unaligned(v as u32),
            _ => (p as *mut u64).write_unaligned(v),
        }
    }
}

/// Run instruction `op` with the element at `origin` (unless `Load`) on the one element of
/// target `t` by a CPU atomic (`WinRma::word_direct`), writing the previous value to
/// `result` when given; false: nothing done, take the general path.
///
/// # Safety
/// `origin` (unless `Load`) and `result` (when given) hold one element of `size` bytes.
#[inline(always)]
unsafe fn word_plain(
    origin: *const c_void,
    result: Option<*mut c_void>,
    t: &TargetArgs,
    size: usize,
    op: WordOp,
    win: MPI_Win,
) -> bool {
    let load = op == WordOp::Load;
    if t.rank < 0 || t.disp < 0 || (!load && origin.is_null()) || result == Some(null_mut()) {
        return false;
    }
    let val = if load {
        0
    } else {
        // SAFETY: the caller's contract.
        unsafe { load_word(origin, size) }
    };
    let (r, d) = (t.rank as u32, t.disp as i64);
    match with_win(win, |w| w.rma.word_direct(r, d, size, op, val)).flatten() {
        Some(old) => {
            if let Some(res) = result {
                // SAFETY: the caller's contract.
                unsafe { store_word(res, size, old) };
            }
            true
        }
        None => false,
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

/// `MPI_Accumulate` (`res` `None`) and `MPI_Get_accumulate`, and `MPIX_Accumulate_notify`
/// (`then`): by CPU atomics when plain, else `rma::accumulate`.
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
    then: Then,
    func: &str,
) -> MpiResult<()> {
    if !direct_then(then, func) {
        // SAFETY: forwarded contract.
        return unsafe { accumulate(o, res, t, op, win, then, func) };
    }
    let same = |s: &Origin| s.count == t.count && s.datatype == t.datatype;
    if t.count == 1 && res.as_ref().is_none_or(same) {
        let word = word_op(op, t.datatype).filter(|&(_, w)| match w {
            // `MPI_NO_OP` fetches only: a get-accumulate's, whatever the origin holds.
            WordOp::Load => res.is_some(),
            _ => same(&o),
        });
        if let Some((size, w)) = word {
            let (input, out) = (o.addr as *const c_void, res.map(|r| r.addr as *mut c_void));
            // SAFETY: the caller's buffer contracts: one element at each address used.
            if unsafe { word_plain(input, out, &t, size, w, win) } {
                return then_direct(then, win, t.rank, func);
            }
        }
    }
    let fetch_only = res.is_some() && op == MPI_NO_OP;
    let plain = res.as_ref().is_none_or(same) && (fetch_only || same(&o));
    if let Some(red) = plain
        .then(|| contiguous_reduction(op, t.datatype))
        .flatten()
    {
        let (input, out) = (o.addr as *const c_void, res.map(|r| r.addr as *mut c_void));
        // SAFETY: the caller's buffer contracts (the standard's rule).
        if unsafe { atomic_plain(input, out, &t, atomic_op(op, &red), win) } {
            return then_direct(then, win, t.rank, func);
        }
    }
    // SAFETY: forwarded contract.
    unsafe { accumulate(o, res, t, op, win, then, func) }
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
    if let Some((size, w)) = word_op(op, datatype) {
        let out = Some(result_addr);
        // SAFETY: the caller's contract: one element at each address.
        if unsafe { word_plain(origin_addr, out, &t, size, w, win) } {
            return Ok(());
        }
    }
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
    if let Some((size, class)) = word_type(datatype) {
        use TypeClass::*;
        if matches!(class, SignedInt | UnsignedInt | Char | Byte | Logical)
            && !compare_addr.is_null()
        {
            // SAFETY: the caller's contract: one element at each address.
            let done = unsafe {
                let cmp = load_word(compare_addr, size);
                word_plain(
                    origin_addr,
                    Some(result_addr),
                    &t,
                    size,
                    WordOp::Cas(cmp),
                    win,
                )
            };
            if done {
                return Ok(());
            }
        }
    }
    // SAFETY: forwarded contract.
    unsafe { compare_and_swap(origin_addr, compare_addr, result_addr, t, win) }
}
