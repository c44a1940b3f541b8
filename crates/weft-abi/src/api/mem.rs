//! Memory the library allocates for the program: `MPI_Alloc_mem`/`MPI_Free_mem`, and the
//! memory of `MPI_Win_allocate` windows. Blocks are aligned to at least a cache line (more
//! with the `mpi_minimum_memory_alignment` hint); `MPI_Free_mem` accepts only the address of a
//! live block from `MPI_Alloc_mem` (anything else is `MPI_ERR_BASE`). Blocks of at least
//! `SHAREABLE_MIN` bytes (or any size with info `mpix_shareable=true`; none with `false`) are
//! shareable: memory handles over them let peers map them (`transport::shm::shareable`).

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{LazyLock, Mutex};

use weft_core::error::MpiResult;
use weft_core::mpi_err;
use weft_core::object::win::alignment_hint;

use crate::args::non_null;
use crate::constants::*;
use crate::ctypes::*;
use crate::memory::{Allocation, MIN_ALIGN};
use crate::objects::info_object;

/// The alignment an info argument asks for (`MPI_INFO_NULL`: the default).
pub(crate) fn info_alignment(info: MPI_Info, func: &str) -> MpiResult<usize> {
    if info == MPI_INFO_NULL {
        return Ok(MIN_ALIGN);
    }
    let pairs = info_object(info, func)?.pairs();
    Ok(alignment_hint(&pairs).unwrap_or(MIN_ALIGN).max(MIN_ALIGN))
}

/// `MPI_Alloc_mem` blocks from this size on are shareable by default.
const SHAREABLE_MIN: i64 = 64 * 1024;

/// Whether an `MPI_Alloc_mem` block of `size` bytes aligned to `align` is shareable: the
/// `mpix_shareable` info key decides, else the size; alignments above a page are not.
fn shareable(info: MPI_Info, size: i64, align: usize, func: &str) -> MpiResult<bool> {
    let mut want = size >= SHAREABLE_MIN;
    if info != MPI_INFO_NULL {
        if let Some((_, v)) = info_object(info, func)?
            .pairs()
            .into_iter()
            .find(|(k, _)| k == "mpix_shareable")
        {
            want = v.trim() == "true";
        }
    }
    Ok(want && align <= 4096)
}

/// Blocks from `MPI_Alloc_mem`, by address.
static BLOCKS: LazyLock<Mutex<HashMap<usize, Allocation>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn blocks() -> std::sync::MutexGuard<'static, HashMap<usize, Allocation>> {
    BLOCKS.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) unsafe fn mpi_alloc_mem(
    size: MPI_Aint,
    info: MPI_Info,
    baseptr: *mut c_void,
) -> MpiResult<()> {
    let func = "MPI_Alloc_mem";
    if size < 0 {
        return Err(mpi_err!(
            Arg,
            "{func}(size={size}): the size must not be negative"
        ));
    }
    non_null(baseptr, func, "baseptr")?;
    let align = info_alignment(info, func)?;
    let block = if shareable(info, size as i64, align, func)? {
        Allocation::shareable(size as u64, func)
            .or_else(|_| Allocation::new(size as u64, align, func))?
    } else {
        Allocation::new(size as u64, align, func)?
    };
    let addr = block.addr();
    blocks().insert(addr, block);
    // SAFETY: checked non-null; the standard makes baseptr the address of a pointer.
    unsafe { baseptr.cast::<*mut c_void>().write(addr as *mut c_void) };
    Ok(())
}

pub(crate) fn mpi_free_mem(base: *mut c_void) -> MpiResult<()> {
    if base.is_null() {
        return Ok(());
    }
    let removed = blocks().remove(&(base as usize));
    match removed {
        Some(block) => {
            drop(block);
            Ok(())
        }
        None => Err(mpi_err!(
            Base,
            "MPI_Free_mem(base={base:p}): not memory from MPI_Alloc_mem (or already freed)"
        )),
    }
}
