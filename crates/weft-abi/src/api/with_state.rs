//! MPICH's `_x` extensions for language bindings: objects whose user functions receive an
//! extra state, with a destructor that receives it once when the object goes
//! (`MPIX_Op_create_x`, `MPIX_*_create_errhandler_x`, `MPIX_*_create_keyval_x`). Weft's
//! Fortran library passes Fortran callbacks through them.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use weft_core::error::MpiResult;
use weft_core::object::attr::{AttrKind, NULL_COPY, NULL_DELETE};
use weft_core::object::errhandler::ErrhandlerKind;

use crate::api::op::UserFunction;
use crate::ctypes::*;
use crate::destructor::Destructor;

pub(crate) unsafe fn mpix_op_create_x(
    user_fn_x: Option<MPIX_User_function_x>,
    destructor_fn: Option<MPIX_Destructor_function>,
    commute: c_int,
    extra_state: *mut c_void,
    op: *mut MPI_Op,
) -> MpiResult<()> {
    let f = user_fn_x.map(|f| UserFunction::State(f, extra_state as usize));
    let destructor = Destructor::new(destructor_fn, extra_state);
    crate::api::op::op_create_with(f, commute, op, destructor, "MPIX_Op_create_x")
}

unsafe fn errhandler_x(
    kind: ErrhandlerKind,
    callback: Option<usize>,
    destructor_fn: Option<MPIX_Destructor_function>,
    extra_state: *mut c_void,
    errhandler: *mut MPI_Errhandler,
    func: &str,
) -> MpiResult<()> {
    let guard = Destructor::new(destructor_fn, extra_state)
        .map(|d| Arc::new(d) as Arc<dyn std::any::Any + Send + Sync>);
    // SAFETY: errhandler is checked inside.
    unsafe {
        crate::api::errors::create_errhandler(
            kind,
            callback,
            Some((extra_state as usize, guard)),
            errhandler,
            func,
        )
    }
}

pub(crate) unsafe fn mpix_comm_create_errhandler_x(
    comm_errhandler_fn_x: Option<MPIX_Comm_errhandler_function_x>,
    destructor_fn: Option<MPIX_Destructor_function>,
    extra_state: *mut c_void,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let f = comm_errhandler_fn_x.map(|f| f as usize);
    let func = "MPIX_Comm_create_errhandler_x";
    // SAFETY: errhandler is checked inside.
    unsafe {
        errhandler_x(
            ErrhandlerKind::Comm,
            f,
            destructor_fn,
            extra_state,
            errhandler,
            func,
        )
    }
}

pub(crate) unsafe fn mpix_win_create_errhandler_x(
    comm_errhandler_fn_x: Option<MPIX_Win_errhandler_function_x>,
    destructor_fn: Option<MPIX_Destructor_function>,
    extra_state: *mut c_void,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let f = comm_errhandler_fn_x.map(|f| f as usize);
    let func = "MPIX_Win_create_errhandler_x";
    // SAFETY: errhandler is checked inside.
    unsafe {
        errhandler_x(
            ErrhandlerKind::Win,
            f,
            destructor_fn,
            extra_state,
            errhandler,
            func,
        )
    }
}

pub(crate) unsafe fn mpix_file_create_errhandler_x(
    comm_errhandler_fn_x: Option<MPIX_File_errhandler_function_x>,
    destructor_fn: Option<MPIX_Destructor_function>,
    extra_state: *mut c_void,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let f = comm_errhandler_fn_x.map(|f| f as usize);
    let func = "MPIX_File_create_errhandler_x";
    // SAFETY: errhandler is checked inside.
    unsafe {
        errhandler_x(
            ErrhandlerKind::File,
            f,
            destructor_fn,
            extra_state,
            errhandler,
            func,
        )
    }
}

pub(crate) unsafe fn mpix_session_create_errhandler_x(
    comm_errhandler_fn_x: Option<MPIX_Session_errhandler_function_x>,
    destructor_fn: Option<MPIX_Destructor_function>,
    extra_state: *mut c_void,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let f = comm_errhandler_fn_x.map(|f| f as usize);
    let func = "MPIX_Session_create_errhandler_x";
    // SAFETY: errhandler is checked inside.
    unsafe {
        errhandler_x(
            ErrhandlerKind::Session,
            f,
            destructor_fn,
            extra_state,
            errhandler,
            func,
        )
    }
}

unsafe fn keyval_x(
    kind: AttrKind,
    copy: usize,
    delete: usize,
    destructor_fn: Option<MPIX_Destructor_function>,
    keyval: *mut c_int,
    extra_state: *mut c_void,
    func: &str,
) -> MpiResult<()> {
    let guard = Destructor::new(destructor_fn, extra_state)
        .map(|d| Box::new(d) as Box<dyn std::any::Any + Send + Sync>);
    // SAFETY: keyval is checked inside.
    unsafe { crate::api::attr::create_keyval(kind, copy, delete, keyval, extra_state, guard, func) }
}

pub(crate) unsafe fn mpix_comm_create_keyval_x(
    comm_copy_attr_fn: Option<MPI_Comm_copy_attr_function>,
    comm_delete_attr_fn: Option<MPI_Comm_delete_attr_function>,
    destructor_fn: Option<MPIX_Destructor_function>,
    comm_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> MpiResult<()> {
    let copy = comm_copy_attr_fn.map_or(NULL_COPY, |f| f as usize);
    let delete = comm_delete_attr_fn.map_or(NULL_DELETE, |f| f as usize);
    let func = "MPIX_Comm_create_keyval_x";
    // SAFETY: keyval is checked inside.
    unsafe {
        keyval_x(
            AttrKind::Comm,
            copy,
            delete,
            destructor_fn,
            comm_keyval,
            extra_state,
            func,
        )
    }
}

pub(crate) unsafe fn mpix_type_create_keyval_x(
    type_copy_attr_fn: Option<MPI_Type_copy_attr_function>,
    type_delete_attr_fn: Option<MPI_Type_delete_attr_function>,
    destructor_fn: Option<MPIX_Destructor_function>,
    type_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> MpiResult<()> {
    let copy = type_copy_attr_fn.map_or(NULL_COPY, |f| f as usize);
    let delete = type_delete_attr_fn.map_or(NULL_DELETE, |f| f as usize);
    let func = "MPIX_Type_create_keyval_x";
    // SAFETY: keyval is checked inside.
    unsafe {
        keyval_x(
            AttrKind::Type,
            copy,
            delete,
            destructor_fn,
            type_keyval,
            extra_state,
            func,
        )
    }
}

pub(crate) unsafe fn mpix_win_create_keyval_x(
    win_copy_attr_fn: Option<MPI_Win_copy_attr_function>,
    win_delete_attr_fn: Option<MPI_Win_delete_attr_function>,
    destructor_fn: Option<MPIX_Destructor_function>,
    win_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> MpiResult<()> {
    let copy = win_copy_attr_fn.map_or(NULL_COPY, |f| f as usize);
    let delete = win_delete_attr_fn.map_or(NULL_DELETE, |f| f as usize);
    let func = "MPIX_Win_create_keyval_x";
    // SAFETY: keyval is checked inside.
    unsafe {
        keyval_x(
            AttrKind::Win,
            copy,
            delete,
            destructor_fn,
            win_keyval,
            extra_state,
            func,
        )
    }
}
