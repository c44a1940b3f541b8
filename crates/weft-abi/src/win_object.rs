//! What a window handle names: the core window plus what only the C boundary needs.

use std::ffi::c_int;

use weft_core::object::win::{Flavor, Model};
use weft_core::object::Win;
use weft_core::rma::WinRma;

use crate::constants::*;
use crate::ctypes::*;

/// The values the predefined attributes point to (`MPI_WIN_SIZE` is an `MPI_Aint*`, the
/// others `int*`): fixed at creation, alive as long as the window.
#[derive(Debug)]
struct Cells {
    size: MPI_Aint,
    disp_unit: c_int,
    flavor: c_int,
    model: c_int,
}

/// What a window handle names: the window, the C-shaped values of its predefined
/// attributes, and its RMA state (which maps the memory of allocated windows).
#[derive(Debug)]
pub struct WinObject {
    pub win: Win,
    cells: Cells,
    pub rma: WinRma,
    /// Made by a local call (`MPIX_Win_dup_with_info`, `MPIX_Win_from_memhandle`): freed
    /// without the closing barrier.
    pub local: bool,
}

impl std::ops::Deref for WinObject {
    type Target = Win;
    fn deref(&self) -> &Win {
        &self.win
    }
}

impl WinObject {
    pub(crate) fn new(win: Win, rma: WinRma) -> WinObject {
        let cells = Cells {
            size: win.memory.size as MPI_Aint,
            disp_unit: win.memory.disp_unit as c_int,
            flavor: match win.flavor {
                Flavor::Create => MPI_WIN_FLAVOR_CREATE,
                Flavor::Allocate => MPI_WIN_FLAVOR_ALLOCATE,
                Flavor::Dynamic => MPI_WIN_FLAVOR_DYNAMIC,
                Flavor::Shared => MPI_WIN_FLAVOR_SHARED,
            },
            model: match win.model {
                Model::Unified => MPI_WIN_UNIFIED,
                Model::Separate => MPI_WIN_SEPARATE,
            },
        };
        WinObject {
            win,
            cells,
            rma,
            local: false,
        }
    }

    /// A window made by a local call (see `local`).
    pub(crate) fn new_local(win: Win, rma: WinRma) -> WinObject {
        WinObject {
            local: true,
            ..WinObject::new(win, rma)
        }
    }

    /// The value `MPI_Win_get_attr` returns for a predefined window keyval: the base address
    /// itself for `MPI_WIN_BASE`, a pointer to the value for the others.
    pub(crate) fn predefined_attr(&self, keyval: c_int) -> Option<usize> {
        let c = &self.cells;
        Some(match keyval {
            MPI_WIN_BASE => self.win.memory.base,
            MPI_WIN_SIZE => &c.size as *const MPI_Aint as usize,
            MPI_WIN_DISP_UNIT => &c.disp_unit as *const c_int as usize,
            MPI_WIN_CREATE_FLAVOR => &c.flavor as *const c_int as usize,
            MPI_WIN_MODEL => &c.model as *const c_int as usize,
            _ => return None,
        })
    }
}
