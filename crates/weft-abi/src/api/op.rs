//! Reduction operations: `MPI_Op_create(_c)`, `MPI_Op_free`, `MPI_Op_commutative`, and the
//! resolution of an op handle and a datatype into the core's `Reduction`.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use weft_core::datatype::Datatype;
use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::op::{OpKind, Reduction, UserFn};

use crate::args::{non_null, write};
use crate::constants::*;
use crate::ctypes::*;
use crate::handles::{BadHandle, Kind, Table};

/// A user function as registered.
#[derive(Clone, Copy, Debug)]
pub enum UserFunction {
    Int(MPI_User_function),
    Count(MPI_User_function_c),
}

/// A user-defined op object.
#[derive(Debug)]
pub struct UserOp {
    pub function: UserFunction,
    pub commutative: bool,
}

pub static OPS: Table<UserOp> = Table::new(Kind::Op);

/// The predefined op a handle names, if it is one.
pub fn predefined(op: MPI_Op) -> Option<OpKind> {
    Some(match op {
        MPI_SUM => OpKind::Sum,
        MPI_MIN => OpKind::Min,
        MPI_MAX => OpKind::Max,
        MPI_PROD => OpKind::Prod,
        MPI_BAND => OpKind::Band,
        MPI_BOR => OpKind::Bor,
        MPI_BXOR => OpKind::Bxor,
        MPI_LAND => OpKind::Land,
        MPI_LOR => OpKind::Lor,
        MPI_LXOR => OpKind::Lxor,
        MPI_MINLOC => OpKind::Minloc,
        MPI_MAXLOC => OpKind::Maxloc,
        MPI_REPLACE => OpKind::Replace,
        MPI_NO_OP => OpKind::NoOp,
        _ => return None,
    })
}

fn bad_op(func: &str, op: MPI_Op, why: BadHandle) -> MpiError {
    MpiError::new(
        ErrorClass::Op,
        format!("{func}(op={op:#x}): not a valid op ({})", why.describe()),
    )
}

/// The user op a handle names.
pub fn user_op(op: MPI_Op, func: &str) -> MpiResult<Arc<UserOp>> {
    if op == MPI_OP_NULL {
        return Err(MpiError::new(
            ErrorClass::Op,
            format!("{func}(op=MPI_OP_NULL): a valid op is required"),
        ));
    }
    OPS.get(op).map_err(|why| bad_op(func, op, why))
}

/// Bind op handle `op` to the elements of `datatype` (`dt` is its description).
pub fn reduction(
    op: MPI_Op,
    datatype: MPI_Datatype,
    dt: &Datatype,
    func: &str,
) -> MpiResult<Reduction> {
    if let Some(kind) = predefined(op) {
        return Reduction::predefined(kind, dt).map_err(|e| MpiError {
            message: format!("{func}(op={}): {}", kind.name(), e.message),
            ..e
        });
    }
    let user = user_op(op, func)?;
    let function = user.function;
    let f: UserFn = Arc::new(move |input: &[u8], inout: &mut [u8], count: usize| {
        let mut dtype = datatype;
        let (inp, out) = (
            input.as_ptr() as *mut c_void,
            inout.as_mut_ptr() as *mut c_void,
        );
        match function {
            UserFunction::Count(f) => {
                let mut len = count as MPI_Count;
                // SAFETY: the buffers hold `count` elements of the datatype, as the user
                // function expects; the pointers are valid for the call.
                unsafe { f(inp, out, &mut len, &mut dtype) }
            }
            UserFunction::Int(f) => {
                // An int count: call in pieces of at most INT_MAX elements.
                let elem = if count == 0 { 0 } else { input.len() / count };
                let mut done = 0;
                while done < count {
                    let n = (count - done).min(c_int::MAX as usize);
                    let mut len = n as c_int;
                    let off = done * elem;
                    // SAFETY: as above, for elements done..done+n.
                    unsafe {
                        f(
                            (inp as *mut u8).add(off) as *mut c_void,
                            (out as *mut u8).add(off) as *mut c_void,
                            &mut len,
                            &mut dtype,
                        )
                    }
                    done += n;
                }
            }
        }
    });
    Ok(Reduction::user(f, user.commutative, dt.extent))
}

fn create(function: UserFunction, commute: c_int, op: *mut MPI_Op, func: &str) -> MpiResult<()> {
    non_null(op, func, "op")?;
    let handle = OPS.insert(Arc::new(UserOp {
        function,
        commutative: commute != 0,
    }));
    // SAFETY: checked non-null by `write`; the caller passes a writable MPI_Op.
    unsafe { write(op, handle, func, "op") }
}

pub(crate) fn mpi_op_create(
    user_fn: Option<MPI_User_function>,
    commute: c_int,
    op: *mut MPI_Op,
) -> MpiResult<()> {
    let f = user_fn.ok_or_else(|| {
        MpiError::new(
            ErrorClass::Arg,
            "MPI_Op_create(user_fn=NULL): a function is required",
        )
    })?;
    create(UserFunction::Int(f), commute, op, "MPI_Op_create")
}

pub(crate) fn mpi_op_create_c(
    user_fn: Option<MPI_User_function_c>,
    commute: c_int,
    op: *mut MPI_Op,
) -> MpiResult<()> {
    let f = user_fn.ok_or_else(|| {
        MpiError::new(
            ErrorClass::Arg,
            "MPI_Op_create_c(user_fn=NULL): a function is required",
        )
    })?;
    create(UserFunction::Count(f), commute, op, "MPI_Op_create_c")
}

pub(crate) unsafe fn mpi_op_free(op: *mut MPI_Op) -> MpiResult<()> {
    non_null(op, "MPI_Op_free", "op")?;
    // SAFETY: checked non-null.
    let handle = unsafe { *op };
    if let Some(kind) = predefined(handle) {
        return Err(MpiError::new(
            ErrorClass::Op,
            format!(
                "MPI_Op_free(op={}): predefined ops cannot be freed",
                kind.name()
            ),
        ));
    }
    if handle == MPI_OP_NULL {
        return Err(MpiError::new(
            ErrorClass::Op,
            "MPI_Op_free(op=MPI_OP_NULL): a valid op is required",
        ));
    }
    OPS.remove(handle)
        .map_err(|why| bad_op("MPI_Op_free", handle, why))?;
    // SAFETY: checked non-null.
    unsafe { op.write(MPI_OP_NULL) };
    Ok(())
}

pub(crate) unsafe fn mpi_op_commutative(op: MPI_Op, commute: *mut c_int) -> MpiResult<()> {
    non_null(commute, "MPI_Op_commutative", "commute")?;
    let value = match predefined(op) {
        Some(_) => true,
        None => user_op(op, "MPI_Op_commutative")?.commutative,
    };
    // SAFETY: checked non-null.
    unsafe { write(commute, value as c_int, "MPI_Op_commutative", "commute") }
}
