//! File errhandlers. Errors of a call on an open file go to that file's errhandler; errors
//! of calls without one (`MPI_File_open`, `MPI_File_delete`) to `MPI_FILE_NULL`'s, which is
//! `MPI_ERRORS_RETURN` until the program sets another, and which new files start with.

use std::ffi::c_int;

use weft_core::error::MpiResult;
use weft_core::io::file::{default_errhandler, set_default_errhandler};
use weft_core::object::ErrhandlerKind;

use crate::api::errors::{call_errhandler, errhandler_for, out_errhandler};
use crate::boundary::Scope;
use crate::constants::*;
use crate::ctypes::*;
use crate::file_object::file;

pub(crate) fn mpi_file_set_errhandler(fh: MPI_File, errhandler: MPI_Errhandler) -> MpiResult<()> {
    let func = "MPI_File_set_errhandler";
    let e = errhandler_for(errhandler, ErrhandlerKind::File, func)?;
    if fh == MPI_FILE_NULL {
        set_default_errhandler(e);
    } else {
        file(fh, func)?.set_errhandler(e);
    }
    Ok(())
}

pub(crate) unsafe fn mpi_file_get_errhandler(
    fh: MPI_File,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let func = "MPI_File_get_errhandler";
    let e = if fh == MPI_FILE_NULL {
        default_errhandler()
    } else {
        file(fh, func)?.errhandler()
    };
    // SAFETY: the caller passes a writable MPI_Errhandler (checked for null).
    unsafe { out_errhandler(errhandler, &e, func) }
}

pub(crate) fn mpi_file_call_errhandler(fh: MPI_File, errorcode: c_int) -> MpiResult<()> {
    let func = "MPI_File_call_errhandler";
    if fh != MPI_FILE_NULL {
        file(fh, func)?;
    }
    call_errhandler(Scope::File(fh), errorcode, func)
}
