//! Windows: creation (`MPI_Win_create[_c]`, `MPI_Win_allocate[_c]`,
//! `MPI_Win_create_dynamic`), `MPI_Win_free`, group, name, info, and the memory regions of
//! dynamic windows, `MPI_Win_allocate_shared` and `MPI_Win_shared_query`. Window attributes
//! are in `attr.rs`, window errhandlers in `errors.rs`, the RMA operations in `rma.rs` and
//! the synchronisation calls in `rma_sync.rs`.

use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use weft_core::error::MpiResult;
use weft_core::mpi_err;
use weft_core::object::win::{self as core_win, Flavor, Memory};
use weft_core::object::{Comm, Info};
use weft_core::rma::WinRma;

use crate::api::attr::free_win_attrs;
use crate::api::mem::info_alignment;
use crate::args::{c_str, copy_out_str, non_null, write, Int};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;
use crate::objects::info_object;
use crate::win_object::WinObject;

/// The (key, value) pairs of an info argument; `MPI_INFO_NULL` has none.
pub(crate) fn info_pairs(info: MPI_Info, func: &str) -> MpiResult<Vec<(String, String)>> {
    if info == MPI_INFO_NULL {
        return Ok(Vec::new());
    }
    Ok(info_object(info, func)?.pairs())
}

/// Apply the hints the core's RMA view acts on (`mpi_assert_accumulate_intrinsic`,
/// `mpi_win_scope`) from window `w`'s hints.
pub(crate) fn apply_rma_hints(w: &weft_core::object::Win, rma: &WinRma) {
    rma.set_strict(w.hint("mpi_assert_accumulate_intrinsic").as_deref() == Some("true"));
    rma.set_thread_scope(w.hint("mpi_win_scope").as_deref() == Some("thread"));
}

/// Create a window of `flavor` over `comm` and store its handle in `*win` (checked); the
/// memory of the allocated flavors comes from the window's shared segment (`own_pages`: see
/// `WinRma::setup`). Returns the handle and this process's base address.
fn finish_create(
    c: &Comm,
    memory: Memory,
    flavor: Flavor,
    hints: &[(String, String)],
    own_pages: bool,
    win: *mut MPI_Win,
    func: &str,
) -> MpiResult<(MPI_Win, usize)> {
    let mut w = core_win::create(c, memory, flavor, hints, func)?;
    let rma = WinRma::setup(&w, own_pages, func)?;
    apply_rma_hints(&w, &rma);
    if matches!(flavor, Flavor::Allocate | Flavor::Shared) {
        w.memory.base = rma.local_base();
    }
    let base = w.memory.base;
    let h = objects::WINS.insert(Arc::new(WinObject::new(w, rma)));
    // The callers checked `win` for null.
    // SAFETY: the caller of the MPI function passes a valid MPI_Win pointer.
    unsafe { win.write(h) };
    Ok((h, base))
}

unsafe fn create_impl(
    base: *mut c_void,
    size: MPI_Aint,
    disp_unit: i64,
    info: MPI_Info,
    comm: MPI_Comm,
    win: *mut MPI_Win,
    func: &str,
) -> MpiResult<()> {
    let c = objects::comm(comm, func, "comm")?;
    non_null(win, func, "win")?;
    let size = core_win::check_size(size as i64, func, "size")?;
    let disp_unit = core_win::check_disp_unit(disp_unit, func)?;
    if base.is_null() && size > 0 {
        return Err(mpi_err!(
            Arg,
            "{func}(base=NULL, size={size}): the memory of a window needs an address"
        ));
    }
    let hints = info_pairs(info, func)?;
    let memory = Memory {
        base: base as usize,
        size,
        disp_unit,
    };
    finish_create(&c, memory, Flavor::Create, &hints, false, win, func).map(|_| ())
}

/// `MPI_Win_create` and its `_c` twin (a wider `disp_unit`).
///
/// # Safety
/// `win` null or writable.
pub(crate) unsafe fn win_create<D: Int>(
    base: *mut c_void,
    size: MPI_Aint,
    disp_unit: D,
    info: MPI_Info,
    comm: MPI_Comm,
    win: *mut MPI_Win,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: pointers checked inside.
    unsafe { create_impl(base, size, disp_unit.get(), info, comm, win, func) }
}

/// `MPI_Win_allocate` (`flavor` `Allocate`) and `MPI_Win_allocate_shared` (`Shared`: every
/// rank's memory in one shared segment, contiguous unless the info says
/// `alloc_shared_noncontig`), with their `_c` twins (a wider `disp_unit`).
///
/// # Safety
/// `baseptr` (a `void**`) and `win` null or writable.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn win_allocate<D: Int>(
    size: MPI_Aint,
    disp_unit: D,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
    flavor: Flavor,
    func: &str,
) -> MpiResult<()> {
    let c = objects::comm(comm, func, "comm")?;
    non_null(baseptr, func, "baseptr")?;
    non_null(win, func, "win")?;
    let size = core_win::check_size(size as i64, func, "size")?;
    let disp_unit = core_win::check_disp_unit(disp_unit.get(), func)?;
    let hints = info_pairs(info, func)?;
    // Checked for its errors; the segment's pages satisfy alignments up to a page.
    info_alignment(info, func)?;
    let memory = Memory {
        base: 0,
        size,
        disp_unit,
    };
    // MPI_Win_allocate_shared's memory is contiguous across ranks unless asked otherwise.
    let own_pages = flavor == Flavor::Allocate
        || hints
            .iter()
            .any(|(k, v)| k == "alloc_shared_noncontig" && v == "true");
    let (_, base) = finish_create(&c, memory, flavor, &hints, own_pages, win, func)?;
    // SAFETY: checked non-null; the standard makes baseptr the address of a pointer.
    unsafe { baseptr.cast::<*mut c_void>().write(base as *mut c_void) };
    Ok(())
}

/// `MPI_Win_shared_query` and its `_c` twin: where rank `rank`'s memory is in this process.
///
/// # Safety
/// `size`, `disp_unit` and `baseptr` (a `void**`) null or writable.
pub(crate) unsafe fn win_shared_query<D: Int>(
    win: MPI_Win,
    rank: c_int,
    size: *mut MPI_Aint,
    disp_unit: *mut D,
    baseptr: *mut c_void,
    func: &str,
) -> MpiResult<()> {
    let w = objects::win(win, func, "win")?;
    non_null(size, func, "size")?;
    non_null(disp_unit, func, "disp_unit")?;
    non_null(baseptr, func, "baseptr")?;
    let r = if rank == MPI_PROC_NULL {
        None
    } else if rank < 0 || rank as u32 >= w.comm.size() {
        return Err(mpi_err!(
            Rank,
            "{func}(rank={rank}): not a rank of the window's group"
        ));
    } else {
        Some(rank as u32)
    };
    let (addr, bytes, unit) = w.rma.shared_query(r);
    // SAFETY: all three checked non-null; the caller passes writable pointers.
    unsafe {
        size.write(bytes as MPI_Aint);
        disp_unit.write(D::of(unit as i64).expect("a positive int fits"));
        baseptr.cast::<*mut c_void>().write(addr as *mut c_void);
    }
    Ok(())
}

pub(crate) unsafe fn mpi_win_create_dynamic(
    info: MPI_Info,
    comm: MPI_Comm,
    win: *mut MPI_Win,
) -> MpiResult<()> {
    let func = "MPI_Win_create_dynamic";
    let c = objects::comm(comm, func, "comm")?;
    non_null(win, func, "win")?;
    let hints = info_pairs(info, func)?;
    // MPI_BOTTOM, no bytes, unit 1: addresses in a dynamic window are absolute.
    let memory = Memory {
        base: 0,
        size: 0,
        disp_unit: 1,
    };
    finish_create(&c, memory, Flavor::Dynamic, &hints, false, win, func).map(|_| ())
}

/// `MPI_Win_free`: the attributes' delete callbacks run (in reverse order of setting; an
/// error stops the free), then every process of the group waits for the others, then the
/// handle goes (with the memory of an allocated window).
pub(crate) unsafe fn mpi_win_free(win: *mut MPI_Win) -> MpiResult<()> {
    let func = "MPI_Win_free";
    non_null(win, func, "win")?;
    // SAFETY: checked non-null; the caller passes a valid MPI_Win pointer.
    let h = unsafe { *win };
    let w = objects::win(h, func, "win")?;
    if w.rma.busy() {
        return Err(mpi_err!(
            RmaSync,
            "{func}(win): an access or exposure epoch is still open on the window"
        ));
    }
    free_win_attrs(h, &w.attrs, func)?;
    // MPI 4.1 §12.2.5: no process returns before every process of the group called it, so
    // none accesses a window already freed. A window made by a local call (a duplicate, a
    // memory-handle window) is freed locally.
    if !w.local {
        weft_core::coll::barrier(&w.comm)?;
    }
    objects::WINS
        .remove(h)
        .map_err(|why| mpi_err!(Win, "{func}(win={h:#x}): {}", why.describe()))?;
    // SAFETY: as above.
    unsafe { win.write(MPI_WIN_NULL) };
    Ok(())
}

pub(crate) unsafe fn mpi_win_get_group(win: MPI_Win, group: *mut MPI_Group) -> MpiResult<()> {
    let func = "MPI_Win_get_group";
    let w = objects::win(win, func, "win")?;
    non_null(group, func, "group")?;
    let h = objects::group_handle(w.group().clone());
    // SAFETY: checked non-null.
    unsafe { group.write(h) };
    Ok(())
}

pub(crate) unsafe fn mpi_win_set_name(win: MPI_Win, win_name: *const c_char) -> MpiResult<()> {
    let func = "MPI_Win_set_name";
    let w = objects::win(win, func, "win")?;
    // SAFETY: the caller passes a NUL-terminated string (checked for null).
    let name = unsafe { c_str(win_name, func, "win_name")? };
    if name.len() >= MPI_MAX_OBJECT_NAME as usize {
        return Err(mpi_err!(
            Arg,
            "{func}(win_name): longer than MPI_MAX_OBJECT_NAME"
        ));
    }
    w.set_name(&name);
    Ok(())
}

pub(crate) unsafe fn mpi_win_get_name(
    win: MPI_Win,
    win_name: *mut c_char,
    resultlen: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Win_get_name";
    non_null(resultlen, func, "resultlen")?;
    // The null handle is named too, as for communicators (MPICH does the same).
    let name = if win == MPI_WIN_NULL {
        "MPI_WIN_NULL".to_owned()
    } else {
        objects::win(win, func, "win")?.name()
    };
    // SAFETY: the standard requires a buffer of MPI_MAX_OBJECT_NAME bytes.
    unsafe {
        copy_out_str(
            &name,
            win_name,
            MPI_MAX_OBJECT_NAME as usize,
            resultlen,
            func,
            "win_name",
        )
    }
}

pub(crate) fn mpi_win_set_info(win: MPI_Win, info: MPI_Info) -> MpiResult<()> {
    let func = "MPI_Win_set_info";
    let w = objects::win(win, func, "win")?;
    let hints = info_pairs(info, func)?;
    w.set_hints(&hints);
    apply_rma_hints(&w, &w.rma);
    Ok(())
}

pub(crate) unsafe fn mpi_win_get_info(win: MPI_Win, info_used: *mut MPI_Info) -> MpiResult<()> {
    let func = "MPI_Win_get_info";
    let w = objects::win(win, func, "win")?;
    non_null(info_used, func, "info_used")?;
    let h = objects::INFOS.insert(Arc::new(Info::from_pairs(w.hints())));
    // SAFETY: checked non-null.
    unsafe { write(info_used, h, func, "info_used") }
}

pub(crate) fn mpi_win_attach(win: MPI_Win, base: *mut c_void, size: MPI_Aint) -> MpiResult<()> {
    let func = "MPI_Win_attach";
    let w = objects::win(win, func, "win")?;
    let size = core_win::check_size(size as i64, func, "size")?;
    if base.is_null() && size > 0 {
        return Err(mpi_err!(
            Arg,
            "{func}(base=NULL, size={size}): attached memory needs an address"
        ));
    }
    w.attach(base as usize, size, func)?;
    w.rma.publish_attached(|| w.regions());
    Ok(())
}

pub(crate) fn mpi_win_detach(win: MPI_Win, base: *const c_void) -> MpiResult<()> {
    let func = "MPI_Win_detach";
    let w = objects::win(win, func, "win")?;
    w.detach(base as usize, func)?;
    w.rma.publish_attached(|| w.regions());
    Ok(())
}
