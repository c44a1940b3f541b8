//! MPICH's `_x` extensions for language bindings: objects whose user functions receive an
//! extra state, with a destructor that receives it once when the object goes
//! (`MPIX_Op_create_x`, `MPIX_*_create_errhandler_x`, `MPIX_*_create_keyval_x`). Weft's
//! Fortran library passes Fortran callbacks through them.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use weft_core::error::MpiResult;
use weft_core::object::attr::AttrKind;
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

/// `MPIX_<Kind>_create_errhandler_x` (`api/gen.py` passes the callback as an address, the
/// kind and the function's name).
///
/// # Safety
/// `errhandler` null or valid for a write.
pub(crate) unsafe fn errhandler_create_x(
    callback: Option<usize>,
    destructor_fn: Option<MPIX_Destructor_function>,
    extra_state: *mut c_void,
    errhandler: *mut MPI_Errhandler,
    kind: ErrhandlerKind,
    func: &str,
) -> MpiResult<()> {
    let guard = Destructor::new(destructor_fn, extra_state)
        .map(|d| Arc::new(d) as Arc<dyn std::any::Any + Send + Sync>);
    let state = Some((extra_state as usize, guard));
    // SAFETY: errhandler is checked inside.
    unsafe { crate::api::errors::create_errhandler(kind, callback, state, errhandler, func) }
}

/// `MPIX_<Kind>_create_keyval_x` (`api/gen.py` passes the callbacks as addresses, the kind
/// and the function's name).
///
/// # Safety
/// `keyval` null or valid for a write.
pub(crate) unsafe fn keyval_create_x(
    copy: Option<usize>,
    delete: Option<usize>,
    destructor_fn: Option<MPIX_Destructor_function>,
    keyval: *mut c_int,
    extra_state: *mut c_void,
    kind: AttrKind,
    func: &str,
) -> MpiResult<()> {
    let guard = Destructor::new(destructor_fn, extra_state)
        .map(|d| Box::new(d) as Box<dyn std::any::Any + Send + Sync>);
    // SAFETY: keyval is checked inside.
    unsafe { crate::api::attr::create_keyval(kind, copy, delete, keyval, extra_state, guard, func) }
}
