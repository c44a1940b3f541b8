//! Error classes, codes and strings; errhandler objects and their use on communicators and
//! windows.

use std::ffi::{c_char, c_int};
use std::sync::Arc;

use weft_core::error::{self, ErrorClass, MpiError, MpiResult};
use weft_core::object::{Errhandler, ErrhandlerKind};

use crate::args::{c_str, copy_out_str, non_null, write};
use crate::boundary::{raise, Scope};
use crate::constants::*;
use crate::ctypes::*;
use crate::{error_codes, objects};

pub(crate) unsafe fn mpi_error_string(
    errorcode: c_int,
    string: *mut c_char,
    resultlen: *mut c_int,
) -> MpiResult<()> {
    non_null(resultlen, "MPI_Error_string", "resultlen")?;
    let text = error_codes::string_of(errorcode).ok_or_else(|| {
        MpiError::new(
            ErrorClass::Arg,
            format!("MPI_Error_string(errorcode={errorcode}): not a valid error code"),
        )
    })?;
    // A user-defined class or code has the empty string until MPI_Add_error_string gives it
    // one (MPI 5.0 §9.5); a code does not borrow its class's string.
    let text = if errorcode > error::ERR_LASTCODE && errorcode <= error::LAST_USER_VALUE {
        error::user_string(errorcode).unwrap_or_default()
    } else {
        text
    };
    // SAFETY: the standard requires a buffer of MPI_MAX_ERROR_STRING bytes.
    unsafe {
        copy_out_str(
            &text,
            string,
            MPI_MAX_ERROR_STRING as usize,
            resultlen,
            "MPI_Error_string",
            "string",
        )
    }
}

pub(crate) unsafe fn mpi_error_class(errorcode: c_int, errorclass: *mut c_int) -> MpiResult<()> {
    let class = error_codes::class_of(errorcode).ok_or_else(|| {
        MpiError::new(
            ErrorClass::Arg,
            format!("MPI_Error_class(errorcode={errorcode}): not a valid error code"),
        )
    })?;
    // SAFETY: the caller passes a valid int pointer (checked for null).
    unsafe { write(errorclass, class, "MPI_Error_class", "errorclass") }
}

pub(crate) unsafe fn mpi_add_error_class(errorclass: *mut c_int) -> MpiResult<()> {
    non_null(errorclass, "MPI_Add_error_class", "errorclass")?;
    // SAFETY: as above.
    unsafe {
        write(
            errorclass,
            error::add_error_class()?,
            "MPI_Add_error_class",
            "errorclass",
        )
    }
}

pub(crate) unsafe fn mpi_add_error_code(errorclass: c_int, errorcode: *mut c_int) -> MpiResult<()> {
    non_null(errorcode, "MPI_Add_error_code", "errorcode")?;
    let code = error::add_error_code(errorclass)?;
    // SAFETY: as above.
    unsafe { write(errorcode, code, "MPI_Add_error_code", "errorcode") }
}

pub(crate) unsafe fn mpi_add_error_string(
    errorcode: c_int,
    string: *const c_char,
) -> MpiResult<()> {
    // SAFETY: the caller passes a NUL-terminated string (checked for null).
    let text = unsafe { c_str(string, "MPI_Add_error_string", "string")? };
    if text.len() >= MPI_MAX_ERROR_STRING as usize {
        return Err(MpiError::new(
            ErrorClass::Arg,
            "MPI_Add_error_string(string): longer than MPI_MAX_ERROR_STRING",
        ));
    }
    error::add_error_string(errorcode, &text)
}

pub(crate) fn mpi_remove_error_class(errorclass: c_int) -> MpiResult<()> {
    error::remove_error(errorclass, true, "MPI_Remove_error_class")
}

pub(crate) fn mpi_remove_error_code(errorcode: c_int) -> MpiResult<()> {
    error::remove_error(errorcode, false, "MPI_Remove_error_code")
}

pub(crate) fn mpi_remove_error_string(errorcode: c_int) -> MpiResult<()> {
    error::remove_error_string(errorcode)
}

// ------------------------------------------------------------------ errhandler objects

/// The extra state of an errhandler created by an `_x` extension, and what to drop with it.
pub(super) type ErrhandlerState = (usize, Option<Arc<dyn std::any::Any + Send + Sync>>);

pub(super) unsafe fn create_errhandler(
    kind: ErrhandlerKind,
    callback: Option<usize>,
    state: Option<ErrhandlerState>,
    errhandler: *mut MPI_Errhandler,
    func: &str,
) -> MpiResult<()> {
    non_null(errhandler, func, "errhandler")?;
    let callback = callback.ok_or_else(|| {
        MpiError::new(
            ErrorClass::Arg,
            format!(
                "{func}({}_errhandler_fn=NULL): a function is required",
                kind.name()
            ),
        )
    })?;
    let object = match state {
        None => Errhandler::user(kind, callback),
        Some((extra_state, guard)) => {
            Errhandler::user_with_state(kind, callback, extra_state, guard)
        }
    };
    let handle = crate::errhandler_handles::create(Arc::new(object));
    // SAFETY: checked non-null; the caller passes a valid MPI_Errhandler pointer.
    unsafe { write(errhandler, handle, func, "errhandler") }
}

pub(crate) unsafe fn mpi_comm_create_errhandler(
    comm_errhandler_fn: Option<MPI_Comm_errhandler_function>,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let f = comm_errhandler_fn.map(|f| f as usize);
    // SAFETY: errhandler is checked inside.
    unsafe {
        create_errhandler(
            ErrhandlerKind::Comm,
            f,
            None,
            errhandler,
            "MPI_Comm_create_errhandler",
        )
    }
}

pub(crate) unsafe fn mpi_win_create_errhandler(
    win_errhandler_fn: Option<MPI_Win_errhandler_function>,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let f = win_errhandler_fn.map(|f| f as usize);
    // SAFETY: errhandler is checked inside.
    unsafe {
        create_errhandler(
            ErrhandlerKind::Win,
            f,
            None,
            errhandler,
            "MPI_Win_create_errhandler",
        )
    }
}

pub(crate) unsafe fn mpi_file_create_errhandler(
    file_errhandler_fn: Option<MPI_File_errhandler_function>,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let f = file_errhandler_fn.map(|f| f as usize);
    // SAFETY: errhandler is checked inside.
    unsafe {
        create_errhandler(
            ErrhandlerKind::File,
            f,
            None,
            errhandler,
            "MPI_File_create_errhandler",
        )
    }
}

pub(crate) unsafe fn mpi_session_create_errhandler(
    session_errhandler_fn: Option<MPI_Session_errhandler_function>,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let f = session_errhandler_fn.map(|f| f as usize);
    // SAFETY: errhandler is checked inside.
    unsafe {
        create_errhandler(
            ErrhandlerKind::Session,
            f,
            None,
            errhandler,
            "MPI_Session_create_errhandler",
        )
    }
}

pub(crate) unsafe fn mpi_errhandler_free(errhandler: *mut MPI_Errhandler) -> MpiResult<()> {
    non_null(errhandler, "MPI_Errhandler_free", "errhandler")?;
    // SAFETY: checked non-null; the caller passes a valid MPI_Errhandler pointer.
    let handle = unsafe { *errhandler };
    if !objects::is_predefined_errhandler(handle) {
        // Objects that use the errhandler keep their own reference; only the handle goes.
        crate::errhandler_handles::free(handle).map_err(|why| {
            MpiError::new(
                ErrorClass::Arg,
                format!(
                    "MPI_Errhandler_free(errhandler={handle:#x}): {}",
                    why.describe()
                ),
            )
        })?;
    } else {
        objects::errhandler(handle, "MPI_Errhandler_free", "errhandler")?;
    }
    // SAFETY: as above.
    unsafe {
        write(
            errhandler,
            MPI_ERRHANDLER_NULL,
            "MPI_Errhandler_free",
            "errhandler",
        )
    }
}

pub(crate) fn mpi_comm_set_errhandler(comm: MPI_Comm, errhandler: MPI_Errhandler) -> MpiResult<()> {
    let c = objects::comm_local_or_thread(comm, "MPI_Comm_set_errhandler", "comm")?;
    let e = objects::errhandler(errhandler, "MPI_Comm_set_errhandler", "errhandler")?;
    if !e.fits(ErrhandlerKind::Comm) {
        return Err(MpiError::new(
            ErrorClass::Arg,
            "MPI_Comm_set_errhandler(errhandler): not created for communicators (MPI_Comm_create_errhandler)",
        ));
    }
    c.set_errhandler(e);
    Ok(())
}

pub(crate) unsafe fn mpi_comm_get_errhandler(
    comm: MPI_Comm,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let c = objects::comm_local_or_thread(comm, "MPI_Comm_get_errhandler", "comm")?;
    non_null(errhandler, "MPI_Comm_get_errhandler", "errhandler")?;
    let handle = objects::errhandler_handle(&c.errhandler());
    // SAFETY: checked non-null; the caller passes a valid MPI_Errhandler pointer.
    unsafe { write(errhandler, handle, "MPI_Comm_get_errhandler", "errhandler") }
}

pub(crate) fn mpi_comm_call_errhandler(comm: MPI_Comm, errorcode: c_int) -> MpiResult<()> {
    objects::comm_local_or_thread(comm, "MPI_Comm_call_errhandler", "comm")?;
    if error_codes::class_of(errorcode).is_none() {
        return Err(MpiError::new(
            ErrorClass::Arg,
            format!("MPI_Comm_call_errhandler(errorcode={errorcode}): not a valid error code"),
        ));
    }
    // The errhandler runs with the user's code; MPI_Comm_call_errhandler itself succeeds
    // once the handler returns (a fatal handler does not return).
    raise(
        Scope::Comm(comm),
        MpiError::with_code(errorcode, String::new()),
    );
    Ok(())
}

// ------------------------------------------------------------------------------ windows

pub(crate) fn mpi_win_set_errhandler(win: MPI_Win, errhandler: MPI_Errhandler) -> MpiResult<()> {
    let func = "MPI_Win_set_errhandler";
    let w = objects::win(win, func, "win")?;
    let e = objects::errhandler(errhandler, func, "errhandler")?;
    if !e.fits(ErrhandlerKind::Win) {
        return Err(MpiError::new(
            ErrorClass::Arg,
            format!("{func}(errhandler): not created for windows (MPI_Win_create_errhandler)"),
        ));
    }
    w.set_errhandler(e);
    Ok(())
}

pub(crate) unsafe fn mpi_win_get_errhandler(
    win: MPI_Win,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let func = "MPI_Win_get_errhandler";
    let w = objects::win(win, func, "win")?;
    non_null(errhandler, func, "errhandler")?;
    let handle = objects::errhandler_handle(&w.errhandler());
    // SAFETY: checked non-null; the caller passes a valid MPI_Errhandler pointer.
    unsafe { write(errhandler, handle, func, "errhandler") }
}

pub(crate) fn mpi_win_call_errhandler(win: MPI_Win, errorcode: c_int) -> MpiResult<()> {
    let func = "MPI_Win_call_errhandler";
    objects::win(win, func, "win")?;
    if error_codes::class_of(errorcode).is_none() {
        return Err(MpiError::new(
            ErrorClass::Arg,
            format!("{func}(errorcode={errorcode}): not a valid error code"),
        ));
    }
    // As for communicators: the handler runs with the user's code, and the call succeeds once
    // it returns.
    raise(
        Scope::Win(win),
        MpiError::with_code(errorcode, String::new()),
    );
    Ok(())
}
