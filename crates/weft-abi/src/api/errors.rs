//! Error classes, codes and strings; errhandler objects and their use on communicators and
//! windows.

use std::ffi::{c_char, c_int};
use std::sync::Arc;

use weft_core::error::{self, ErrorClass, MpiError, MpiResult};
use weft_core::mpi_err;
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
        mpi_err!(
            Arg,
            "MPI_Error_string(errorcode={errorcode}): not a valid error code"
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
        mpi_err!(
            Arg,
            "MPI_Error_class(errorcode={errorcode}): not a valid error code"
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
        mpi_err!(
            Arg,
            "{func}({}_errhandler_fn=NULL): a function is required",
            kind.name()
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

/// `MPI_<Kind>_create_errhandler` (`api/gen.py` passes the callback as an address, the kind
/// and the function's name).
///
/// # Safety
/// `errhandler` null or valid for a write.
pub(crate) unsafe fn errhandler_create(
    callback: Option<usize>,
    errhandler: *mut MPI_Errhandler,
    kind: ErrhandlerKind,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: the caller's contract (`errhandler` is checked inside).
    unsafe { create_errhandler(kind, callback, None, errhandler, func) }
}

/// The errhandler `errhandler` names, which must have been created for `kind`'s objects
/// (`MPI_<Kind>_create_errhandler`).
pub(super) fn errhandler_for(
    errhandler: MPI_Errhandler,
    kind: ErrhandlerKind,
    func: &str,
) -> MpiResult<Arc<Errhandler>> {
    let e = objects::errhandler(errhandler, func, "errhandler")?;
    if !e.fits(kind) {
        let (objects, creator) = match kind {
            ErrhandlerKind::Comm => ("communicators", "MPI_Comm_create_errhandler"),
            ErrhandlerKind::Win => ("windows", "MPI_Win_create_errhandler"),
            ErrhandlerKind::File => ("files", "MPI_File_create_errhandler"),
            ErrhandlerKind::Session => ("sessions", "MPI_Session_create_errhandler"),
        };
        return Err(mpi_err!(
            Arg,
            "{func}(errhandler): not created for {objects} ({creator})"
        ));
    }
    Ok(e)
}

/// `MPI_<Kind>_get_errhandler`'s output: the handle of `e` in `out` (checked non-null).
///
/// # Safety
/// `out` null or valid for a write.
pub(super) unsafe fn out_errhandler(
    out: *mut MPI_Errhandler,
    e: &Arc<Errhandler>,
    func: &str,
) -> MpiResult<()> {
    non_null(out, func, "errhandler")?;
    let handle = objects::errhandler_handle(e);
    // SAFETY: checked non-null; the caller passes a valid MPI_Errhandler pointer.
    unsafe { write(out, handle, func, "errhandler") }
}

/// `MPI_<Kind>_call_errhandler` once its object is checked: the errhandler of `scope` runs
/// with the user's `errorcode`, and the call succeeds once it returns (a fatal handler does
/// not return).
pub(super) fn call_errhandler(scope: Scope, errorcode: c_int, func: &str) -> MpiResult<()> {
    if error_codes::class_of(errorcode).is_none() {
        return Err(mpi_err!(
            Arg,
            "{func}(errorcode={errorcode}): not a valid error code"
        ));
    }
    raise(scope, MpiError::with_code(errorcode, String::new()));
    Ok(())
}

pub(crate) unsafe fn mpi_errhandler_free(errhandler: *mut MPI_Errhandler) -> MpiResult<()> {
    non_null(errhandler, "MPI_Errhandler_free", "errhandler")?;
    // SAFETY: checked non-null; the caller passes a valid MPI_Errhandler pointer.
    let handle = unsafe { *errhandler };
    if !objects::is_predefined_errhandler(handle) {
        // Objects that use the errhandler keep their own reference; only the handle goes.
        crate::errhandler_handles::free(handle).map_err(|why| {
            mpi_err!(
                Arg,
                "MPI_Errhandler_free(errhandler={handle:#x}): {}",
                why.describe()
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
    let func = "MPI_Comm_set_errhandler";
    let c = objects::comm_local_or_thread(comm, func, "comm")?;
    c.set_errhandler(errhandler_for(errhandler, ErrhandlerKind::Comm, func)?);
    Ok(())
}

pub(crate) unsafe fn mpi_comm_get_errhandler(
    comm: MPI_Comm,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let func = "MPI_Comm_get_errhandler";
    let c = objects::comm_local_or_thread(comm, func, "comm")?;
    // SAFETY: the caller passes a valid MPI_Errhandler pointer (checked for null).
    unsafe { out_errhandler(errhandler, &c.errhandler(), func) }
}

pub(crate) fn mpi_comm_call_errhandler(comm: MPI_Comm, errorcode: c_int) -> MpiResult<()> {
    let func = "MPI_Comm_call_errhandler";
    objects::comm_local_or_thread(comm, func, "comm")?;
    call_errhandler(Scope::Comm(comm), errorcode, func)
}

// ------------------------------------------------------------------------------ windows

pub(crate) fn mpi_win_set_errhandler(win: MPI_Win, errhandler: MPI_Errhandler) -> MpiResult<()> {
    let func = "MPI_Win_set_errhandler";
    let w = objects::win(win, func, "win")?;
    w.set_errhandler(errhandler_for(errhandler, ErrhandlerKind::Win, func)?);
    Ok(())
}

pub(crate) unsafe fn mpi_win_get_errhandler(
    win: MPI_Win,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let func = "MPI_Win_get_errhandler";
    let w = objects::win(win, func, "win")?;
    // SAFETY: the caller passes a valid MPI_Errhandler pointer (checked for null).
    unsafe { out_errhandler(errhandler, &w.errhandler(), func) }
}

pub(crate) fn mpi_win_call_errhandler(win: MPI_Win, errorcode: c_int) -> MpiResult<()> {
    let func = "MPI_Win_call_errhandler";
    objects::win(win, func, "win")?;
    call_errhandler(Scope::Win(win), errorcode, func)
}
