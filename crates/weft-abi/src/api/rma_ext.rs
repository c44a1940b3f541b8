//! Seed 004's RMA proposals (EXTENSIONS.md §G, docs/rma-extensions.md): window duplication
//! with its own info, `MPIX_Win_op_intrinsic`, memory handles, the remote-completing
//! request-based operations, and Weft's request-based completion notification.

use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use weft_core::error::MpiResult;
use weft_core::mpi_err;
use weft_core::object::win::{check_disp_unit, check_size, Flavor};
use weft_core::op::{OpKind, Reduction};
use weft_core::rma::memhandle::HANDLE_BYTES;
use weft_core::rma::notify::check_index;

use crate::api::coll_args::dtype;
use crate::api::rma_args::with_win;
use crate::api::win::{apply_rma_hints, info_pairs};
use crate::args::{c_str, non_null, write};
use crate::ctypes::*;
use crate::objects;
use crate::requests::request_handle;
use crate::win_object::WinObject;

/// Store a new window made by a local call in `*newwin`.
///
/// # Safety
/// `newwin` checked non-null by the caller; writable.
unsafe fn store_local(
    win: weft_core::object::Win,
    rma: weft_core::rma::WinRma,
    newwin: *mut MPI_Win,
    func: &str,
) -> MpiResult<()> {
    apply_rma_hints(&win, &rma);
    let h = objects::WINS.insert(Arc::new(WinObject::new_local(win, rma)));
    // SAFETY: the caller's contract.
    unsafe { write(newwin, h, func, "newwin") }
}

/// `MPIX_Win_dup_with_info`: a second handle to the same memory and synchronisation state
/// (locks, epochs, PSCW counters) with the parent's info overridden by `info`. Local.
pub(crate) unsafe fn mpix_win_dup_with_info(
    win: MPI_Win,
    info: MPI_Info,
    newwin: *mut MPI_Win,
) -> MpiResult<()> {
    let func = "MPIX_Win_dup_with_info";
    let w = objects::win(win, func, "win")?;
    non_null(newwin, func, "newwin")?;
    let hints = info_pairs(info, func)?;
    let dup = w.win.dup_with(&hints);
    // SAFETY: checked non-null.
    unsafe { store_local(dup, w.rma.view(), newwin, func) }
}

/// The op a name of `MPIX_Win_op_intrinsic`'s list stands for (`None`: compare-and-swap).
fn op_named(name: &str, func: &str) -> MpiResult<Option<OpKind>> {
    use OpKind::*;
    Ok(Some(match name {
        "max" => Max,
        "min" => Min,
        "sum" => Sum,
        "prod" => Prod,
        "land" => Land,
        "band" => Band,
        "lor" => Lor,
        "bor" => Bor,
        "lxor" => Lxor,
        "bxor" => Bxor,
        "maxloc" => Maxloc,
        "minloc" => Minloc,
        "replace" => Replace,
        "no_op" => NoOp,
        "cas" => return Ok(None),
        _ => {
            return Err(mpi_err!(Arg, "{func}(ops): \"{name}\" is not an operation name (max, min, sum, prod, land, band, lor, bor, lxor, bxor, maxloc, minloc, replace, no_op, cas)"))
        }
    }))
}

/// `MPIX_Win_op_intrinsic`: whether accumulates with each of `ops` on up to `max_count`
/// elements of `datatype` run by CPU atomics on this window (no lock, no target CPU): on
/// allocated windows, for elements of 1, 2, 4 or 8 bytes on which the op is defined (at
/// aligned displacements), whatever the count (atomicity is element-wise).
pub(crate) unsafe fn mpix_win_op_intrinsic(
    ops: *const c_char,
    max_count: MPI_Aint,
    datatype: MPI_Datatype,
    win: MPI_Win,
    flag: *mut c_int,
) -> MpiResult<()> {
    let func = "MPIX_Win_op_intrinsic";
    let w = objects::win(win, func, "win")?;
    // SAFETY: a NUL-terminated string per the caller's contract (null is refused).
    let list = unsafe { c_str(ops, func, "ops")? };
    non_null(flag, func, "flag")?;
    if max_count < 0 {
        return Err(mpi_err!(
            Count,
            "{func}(max_count={max_count}): negative count"
        ));
    }
    let t = dtype(datatype, func, "datatype")?;
    let mut kinds = Vec::new();
    for name in list.split(',').map(str::trim) {
        kinds.push(op_named(&name.to_ascii_lowercase(), func)?);
    }
    let intrinsic = match t.element() {
        Some(e) => {
            let size = e.size;
            w.rma.intrinsic(size)
                && kinds.iter().all(|k| match k {
                    Some(kind) => Reduction::predefined(*kind, e).is_ok(),
                    None => Reduction::predefined(OpKind::Replace, e).is_ok(),
                })
        }
        None => false,
    };
    // SAFETY: checked non-null.
    unsafe { write(flag, intrinsic as c_int, func, "flag") }
}

/// The dynamic window a memory-handle call names.
fn dynamic_window(win: MPI_Win, func: &str) -> MpiResult<Arc<WinObject>> {
    let w = objects::win(win, func, "dynwin")?;
    if w.flavor != Flavor::Dynamic || w.rma.is_handle_window() {
        return Err(mpi_err!(
            RmaFlavor,
            "{func}(dynwin): not a window from MPI_Win_create_dynamic"
        ));
    }
    Ok(w)
}

/// `MPIX_Memhandle_create`: expose `size` bytes at `base` (inside memory attached to
/// `dynwin`) through a memory handle of `HANDLE_BYTES` bytes.
pub(crate) unsafe fn mpix_memhandle_create(
    base: *mut c_void,
    size: MPI_Aint,
    info: MPI_Info,
    dynwin: MPI_Win,
    memhandle: *mut c_void,
    memhandle_size: *mut c_int,
) -> MpiResult<()> {
    let func = "MPIX_Memhandle_create";
    let w = dynamic_window(dynwin, func)?;
    let size = check_size(size as i64, func, "size")?;
    info_pairs(info, func)?;
    non_null(memhandle, func, "memhandle")?;
    non_null(memhandle_size, func, "memhandle_size")?;
    let (b, end) = (base as u128, base as u128 + size as u128);
    if !w
        .regions()
        .iter()
        .any(|&(rb, rs)| rb as u128 <= b && end <= rb as u128 + rs as u128)
    {
        return Err(mpi_err!(RmaAttach, "{func}(base={base:p}, size={size}): not inside memory attached to the window (MPI_Win_attach it first)"));
    }
    let bytes = w.rma.memhandle_create(base as usize, size, func)?;
    // Both checked non-null.
    // SAFETY: the caller passes MPIX_MAX_MEMHANDLE_SIZE >= HANDLE_BYTES bytes and a writable int.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), memhandle.cast::<u8>(), HANDLE_BYTES);
        write(
            memhandle_size,
            HANDLE_BYTES as c_int,
            func,
            "memhandle_size",
        )
    }
}

/// The `HANDLE_BYTES` bytes of a handle argument.
///
/// # Safety
/// `memhandle` non-null and readable for `MPIX_MAX_MEMHANDLE_SIZE` bytes.
unsafe fn handle_bytes(memhandle: *const c_void) -> [u8; HANDLE_BYTES] {
    let mut b = [0u8; HANDLE_BYTES];
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(memhandle.cast::<u8>(), b.as_mut_ptr(), HANDLE_BYTES) };
    b
}

/// `MPIX_Win_from_memhandle`: a window whose one target is the handle's region. Local; only
/// put, get, the accumulates and flushes apply to it; lock and unlock go to `dynwin`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn mpix_win_from_memhandle(
    memhandle: *const c_void,
    size: MPI_Aint,
    disp_unit: c_int,
    info: MPI_Info,
    target: c_int,
    dynwin: MPI_Win,
    newwin: *mut MPI_Win,
) -> MpiResult<()> {
    let func = "MPIX_Win_from_memhandle";
    let w = dynamic_window(dynwin, func)?;
    non_null(memhandle, func, "memhandle")?;
    non_null(newwin, func, "newwin")?;
    let size = check_size(size as i64, func, "size")?;
    let unit = check_disp_unit(disp_unit as i64, func)?;
    if target < 0 || target as u32 >= w.comm.size() {
        return Err(mpi_err!(
            Rank,
            "{func}(target={target}): not a rank of the window's group"
        ));
    }
    let hints = info_pairs(info, func)?;
    // SAFETY: checked non-null; readable per the caller's contract.
    let bytes = unsafe { handle_bytes(memhandle) };
    let rma = w
        .rma
        .from_memhandle(&bytes, size, unit, target as u32, func)?;
    let mut win = w.win.dup_with(&hints);
    win.memory.base = 0;
    win.memory.size = size;
    win.memory.disp_unit = unit;
    // SAFETY: checked non-null.
    unsafe { store_local(win, rma, newwin, func) }
}

/// `MPIX_Memhandle_release`: end the exposure of a handle this process made.
pub(crate) unsafe fn mpix_memhandle_release(
    memhandle: *mut c_void,
    dynwin: MPI_Win,
) -> MpiResult<()> {
    let func = "MPIX_Memhandle_release";
    let w = dynamic_window(dynwin, func)?;
    non_null(memhandle, func, "memhandle")?;
    // SAFETY: checked non-null; readable per the caller's contract.
    let bytes = unsafe { handle_bytes(memhandle) };
    w.rma.memhandle_release(&bytes, func)
}

/// `MPIX_Win_notify_request`: a request completing once this process has received `count`
/// notifications on `notification_idx` beyond those earlier requests on it claimed.
pub(crate) unsafe fn mpix_win_notify_request(
    win: MPI_Win,
    notification_idx: c_int,
    count: MPI_Count,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let func = "MPIX_Win_notify_request";
    let make = |w: &WinObject| {
        let idx = check_index(notification_idx, func)?;
        non_null(request, func, "request")?;
        if count < 0 {
            return Err(mpi_err!(Count, "{func}(count={count}): negative count"));
        }
        Ok(w.rma.notify_request(idx, count as u64, 0))
    };
    // The window borrowed as the direct RMA paths do; a bad handle is reported by `objects`.
    let id = match with_win(win, make) {
        Some(id) => id?,
        None => make(&*objects::win(win, func, "win")?)?,
    };
    // SAFETY: checked non-null.
    unsafe { write(request, request_handle(id), func, "request") }
}

/// `MPIX_Win_notify_get_value`: the notifications received on `notification_idx` so far.
pub(crate) unsafe fn mpix_win_notify_get_value(
    win: MPI_Win,
    notification_idx: c_int,
    value: *mut MPI_Count,
) -> MpiResult<()> {
    let func = "MPIX_Win_notify_get_value";
    let w = objects::win(win, func, "win")?;
    let idx = check_index(notification_idx, func)?;
    non_null(value, func, "value")?;
    // SAFETY: checked non-null.
    unsafe { write(value, w.rma.notify_count(idx) as MPI_Count, func, "value") }
}
