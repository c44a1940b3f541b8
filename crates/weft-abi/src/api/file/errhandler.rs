//! File errhandlers. Errors of a call on an open file go to that file's errhandler; errors
//! of calls without one (`MPI_File_open`, `MPI_File_delete`) to `MPI_FILE_NULL`'s, which is
//! `MPI_ERRORS_RETURN` until the program sets another, and which new files start with.

use std::ffi::c_int;

use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::io::file::{default_errhandler, set_default_errhandler};
use weft_core::object::ErrhandlerKind;

use crate::args::non_null;
use crate::boundary::{raise, Scope};
use crate::constants::*;
use crate::ctypes::*;
use crate::file_object::file;
use crate::{error_codes, objects};

pub(crate) fn mpi_file_set_errhandler(fh: MPI_File, errhandler: MPI_Errhandler) -> MpiResult<()> {
    let func = "MPI_File_set_errhandler";
    let e = objects::errhandler(errhandler, func, "errhandler")?;
    if !e.fits(ErrhandlerKind::File) {
        return Err(MpiError::new(
            ErrorClass::Arg,
            format!("{func}(errhandler): not created for files (MPI_File_create_errhandler)"),
        ));
    }
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
    non_null(errhandler, func, "errhandler")?;
    let h = objects::errhandler_handle(&e);
    // SAFETY: checked non-null; the caller passes a writable MPI_Errhandler.
    unsafe { errhandler.write(h) };
    Ok(())
}

pub(crate) fn mpi_file_call_errhandler(fh: MPI_File, errorcode: c_int) -> MpiResult<()> {
    let func = "MPI_File_call_errhandler";
    if fh != MPI_FILE_NULL {
        file(fh, func)?;
    }
    if error_codes::class_of(errorcode).is_none() {
        return Err(MpiError::new(
            ErrorClass::Arg,
            format!("{func}(errorcode={errorcode}): not a valid error code"),
        ));
    }
    raise(
        Scope::File(fh),
        MpiError::with_code(errorcode, String::new()),
    );
    Ok(())
}
