//! Error classes, codes and strings; errhandler objects and their use on communicators,
//! windows, files and sessions (one implementation of each call for the four, `Holder`).

use std::ffi::{c_char, c_int};
use std::sync::Arc;

use weft_core::error::{self, ErrorClass, MpiError, MpiResult};
use weft_core::io::file::{default_errhandler, set_default_errhandler, File};
use weft_core::mpi_err;
use weft_core::object::{Comm, Errhandler, ErrhandlerKind, Session};

use crate::args::{c_str, copy_out_str, non_null, write};
use crate::boundary::{raise, Scope};
use crate::constants::*;
use crate::ctypes::*;
use crate::file_object::file;
use crate::win_object::WinObject;
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
unsafe fn out_errhandler(
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
fn call_errhandler(scope: Scope, errorcode: c_int, func: &str) -> MpiResult<()> {
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

/// The objects that hold an errhandler, as `MPI_<Kind>_set_errhandler`, `_get_errhandler`
/// and `_call_errhandler` name them: `api/gen.py` passes the kind, so that one
/// implementation of each call serves all four.
#[derive(Clone, Copy)]
pub(crate) enum Holder {
    Comm,
    Win,
    File,
    Session,
}

/// The object an errhandler call names, looked up (`File(None)`: `MPI_FILE_NULL`, whose
/// errhandler is the one new files start with).
enum Held {
    Comm(Arc<Comm>),
    Win(Arc<WinObject>),
    File(Option<Arc<File>>),
    Session(Arc<Session>),
}

impl Holder {
    fn kind(self) -> ErrhandlerKind {
        match self {
            Holder::Comm => ErrhandlerKind::Comm,
            Holder::Win => ErrhandlerKind::Win,
            Holder::File => ErrhandlerKind::File,
            Holder::Session => ErrhandlerKind::Session,
        }
    }

    fn scope(self, handle: usize) -> Scope {
        match self {
            Holder::Comm => Scope::Comm(handle),
            Holder::Win => Scope::Win(handle),
            Holder::File => Scope::File(handle),
            Holder::Session => Scope::Session(handle),
        }
    }

    fn held(self, handle: usize, func: &str) -> MpiResult<Held> {
        Ok(match self {
            Holder::Comm => Held::Comm(objects::comm_local_or_thread(handle, func, "comm")?),
            Holder::Win => Held::Win(objects::win(handle, func, "win")?),
            Holder::File if handle == MPI_FILE_NULL => Held::File(None),
            Holder::File => Held::File(Some(file(handle, func)?)),
            Holder::Session => Held::Session(objects::session(handle, func, "session")?),
        })
    }
}

impl Held {
    fn errhandler(&self) -> Arc<Errhandler> {
        match self {
            Held::Comm(c) => c.errhandler(),
            Held::Win(w) => w.errhandler(),
            Held::File(Some(f)) => f.errhandler(),
            Held::File(None) => default_errhandler(),
            Held::Session(s) => s.errhandler(),
        }
    }

    fn set_errhandler(&self, e: Arc<Errhandler>) {
        match self {
            Held::Comm(c) => c.set_errhandler(e),
            Held::Win(w) => w.set_errhandler(e),
            Held::File(Some(f)) => f.set_errhandler(e),
            Held::File(None) => set_default_errhandler(e),
            Held::Session(s) => s.set_errhandler(e),
        }
    }
}

/// `MPI_Comm_set_errhandler`, `MPI_Win_set_errhandler`, `MPI_File_set_errhandler` and
/// `MPI_Session_set_errhandler`.
pub(crate) fn set_errhandler(
    handle: usize,
    errhandler: MPI_Errhandler,
    holder: Holder,
    func: &str,
) -> MpiResult<()> {
    // A file call checks the errhandler first, the others the object first.
    let (held, e) = if let Holder::File = holder {
        let e = errhandler_for(errhandler, holder.kind(), func)?;
        (holder.held(handle, func)?, e)
    } else {
        let held = holder.held(handle, func)?;
        (held, errhandler_for(errhandler, holder.kind(), func)?)
    };
    held.set_errhandler(e);
    Ok(())
}

/// `MPI_<Kind>_get_errhandler` for the kinds of `Holder`.
///
/// # Safety
/// `errhandler` null or writable.
pub(crate) unsafe fn get_errhandler(
    handle: usize,
    errhandler: *mut MPI_Errhandler,
    holder: Holder,
    func: &str,
) -> MpiResult<()> {
    let e = holder.held(handle, func)?.errhandler();
    // SAFETY: forwarded caller contract (checked for null).
    unsafe { out_errhandler(errhandler, &e, func) }
}

/// `MPI_<Kind>_call_errhandler` for the kinds of `Holder`.
pub(crate) fn holder_call_errhandler(
    handle: usize,
    errorcode: c_int,
    holder: Holder,
    func: &str,
) -> MpiResult<()> {
    holder.held(handle, func)?;
    call_errhandler(holder.scope(handle), errorcode, func)
}
