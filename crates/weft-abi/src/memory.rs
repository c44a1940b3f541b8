//! Blocks of memory the library allocates for the program (`MPI_Alloc_mem`, the memory of
//! `MPI_Win_allocate` windows): aligned to at least a cache line, released when dropped.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

use weft_core::error::MpiResult;
use weft_core::mpi_err;
use weft_core::transport::shm::shareable::SharedBlock;

/// The alignment of every block unless a hint asks for more.
pub(crate) const MIN_ALIGN: usize = 64;

/// A block of memory owned by the library, released when dropped.
#[derive(Debug)]
pub(crate) struct Allocation {
    ptr: NonNull<u8>,
    layout: Layout,
    /// A shareable block (page aligned) instead of the Rust allocator's.
    shared: Option<SharedBlock>,
}

// SAFETY: the block is plain memory owned by this value; the program accesses it through the
// address, never through this value, so moving or sharing it between threads is harmless.
unsafe impl Send for Allocation {}
// SAFETY: as above; `&Allocation` only reads the address.
unsafe impl Sync for Allocation {}

impl Allocation {
    /// `size` bytes (at least one, so every block has its own address) aligned to `align`.
    pub(crate) fn new(size: u64, align: usize, func: &str) -> MpiResult<Allocation> {
        let no_mem = || {
            mpi_err!(
                NoMem,
                "{func}(size={size}): cannot allocate that much memory"
            )
        };
        let bytes = usize::try_from(size.max(1)).map_err(|_| no_mem())?;
        let layout = Layout::from_size_align(bytes, align.max(MIN_ALIGN)).map_err(|_| no_mem())?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc::alloc(layout) };
        let ptr = NonNull::new(ptr).ok_or_else(no_mem)?;
        Ok(Allocation {
            ptr,
            layout,
            shared: None,
        })
    }

    /// `size` bytes of shareable memory (`transport::shm::shareable`), page aligned.
    pub(crate) fn shareable(size: u64, func: &str) -> MpiResult<Allocation> {
        let no_mem = |why: String| {
            mpi_err!(
                NoMem,
                "{func}(size={size}): cannot allocate shareable memory: {why}"
            )
        };
        let bytes = usize::try_from(size.max(1)).map_err(|e| no_mem(e.to_string()))?;
        let block = SharedBlock::new(bytes).map_err(|e| no_mem(e.to_string()))?;
        let ptr = NonNull::new(block.addr() as *mut u8).ok_or_else(|| no_mem("null".into()))?;
        Ok(Allocation {
            ptr,
            layout: Layout::new::<u8>(),
            shared: Some(block),
        })
    }

    pub(crate) fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        if self.shared.take().is_some() {
            return;
        }
        // SAFETY: allocated in `new` with this layout and not freed before.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}
