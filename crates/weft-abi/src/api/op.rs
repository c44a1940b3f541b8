//! Reduction operations: `MPI_Op_create(_c)`, `MPI_Op_free`, `MPI_Op_commutative`, and the
//! resolution of an op handle and a datatype into the core's `Reduction`.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use weft_core::datatype::{Buf, Type};
use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::mpi_err;
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
    /// `MPIX_Op_create_x`: the length and datatype by value, then the extra state.
    State(MPIX_User_function_x, usize),
}

impl From<MPI_User_function> for UserFunction {
    fn from(f: MPI_User_function) -> UserFunction {
        UserFunction::Int(f)
    }
}

impl From<MPI_User_function_c> for UserFunction {
    fn from(f: MPI_User_function_c) -> UserFunction {
        UserFunction::Count(f)
    }
}

/// A user-defined op object.
#[derive(Debug)]
pub struct UserOp {
    pub function: UserFunction,
    pub commutative: bool,
    /// `MPIX_Op_create_x`'s destructor: runs when the op object goes.
    pub _destructor: Option<crate::destructor::Destructor>,
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
    mpi_err!(
        Op,
        "{func}(op={op:#x}): not a valid op ({})",
        why.describe()
    )
}

/// The user op a handle names.
pub fn user_op(op: MPI_Op, func: &str) -> MpiResult<Arc<UserOp>> {
    if op == MPI_OP_NULL {
        return Err(mpi_err!(
            Op,
            "{func}(op=MPI_OP_NULL): a valid op is required"
        ));
    }
    OPS.get(op).map_err(|why| bad_op(func, op, why))
}

/// Bind op handle `op` to datatype `t` (handle `datatype`). Buffers reach the reduction
/// packed: a predefined op works on the type's one element type (`Type::element`), a user
/// op on whole instances of the type, laid out again as the user function expects them
/// when the type is not contiguous.
pub fn reduction(
    op: MPI_Op,
    datatype: MPI_Datatype,
    t: &Arc<Type>,
    func: &str,
) -> MpiResult<Reduction> {
    if let Some(kind) = predefined(op) {
        let dt = t.element().ok_or_else(|| {
            mpi_err!(Op, "{func}(op={}, datatype): the datatype mixes element types; predefined ops need one",
                    kind.name())
        })?;
        return Reduction::predefined(kind, dt).map_err(|e| MpiError {
            message: format!("{func}(op={}): {}", kind.name(), e.message),
            ..e
        });
    }
    let user = user_op(op, func)?;
    let function = user.function;
    let size = t.size;
    let t = t.clone();
    let contiguous = t.is_contiguous();
    let f: UserFn = Arc::new(move |input: &[u8], inout: &mut [u8], count: usize| {
        if contiguous {
            // Instance i's bytes are at true_lb + i * size from the buffer address.
            let lb = t.true_lb;
            call_user(
                function,
                (input.as_ptr() as usize).wrapping_add_signed(-lb),
                (inout.as_mut_ptr() as usize).wrapping_add_signed(-lb),
                count,
                t.extent,
                datatype,
            );
        } else {
            in_layout(&t, function, datatype, input, inout, count);
        }
    });
    Ok(Reduction::user(f, user.commutative, size))
}

/// Run a user function on packed `input`/`inout` of a non-contiguous type: unpack both into
/// memory laid out as the type describes, call, pack the result back.
fn in_layout(
    t: &Arc<Type>,
    function: UserFunction,
    datatype: MPI_Datatype,
    input: &[u8],
    inout: &mut [u8],
    count: usize,
) {
    if count == 0 {
        return;
    }
    // The bytes `count` instances touch, relative to the buffer address.
    let last = (count as isize - 1) * t.extent;
    let lo = t.true_lb.min(t.true_lb + last);
    let hi = (t.true_lb + t.true_extent).max(t.true_lb + t.true_extent + last);
    let span = (hi - lo).max(0) as usize;
    let mut a = vec![0u8; span];
    let mut b = vec![0u8; span];
    let base_a = (a.as_mut_ptr() as usize).wrapping_add_signed(-lo);
    let base_b = (b.as_mut_ptr() as usize).wrapping_add_signed(-lo);
    // `count` instances at base_a/base_b touch exactly `lo..hi` relative to the base, which is the
    // vectors' memory.
    // SAFETY: the vectors outlive the Bufs; `t` is alive.
    let (ba, bb) = unsafe { (Buf::typed(base_a, count, t), Buf::typed(base_b, count, t)) };
    ba.unpack(0, &input[..ba.len()]);
    bb.unpack(0, &inout[..bb.len()]);
    call_user(function, base_a, base_b, count, t.extent, datatype);
    bb.pack(0, &mut inout[..bb.len()]);
}

/// Call a user function on `count` instances at `inp`/`out` (`stride` bytes apart), in
/// pieces of at most `INT_MAX` for int-count functions.
fn call_user(
    function: UserFunction,
    inp: usize,
    out: usize,
    count: usize,
    stride: isize,
    datatype: MPI_Datatype,
) {
    let mut dtype = datatype;
    match function {
        UserFunction::State(f, state) => {
            // SAFETY: as below; the function receives its own extra state.
            unsafe {
                f(
                    inp as *mut c_void,
                    out as *mut c_void,
                    count as MPI_Count,
                    dtype,
                    state as *mut c_void,
                )
            }
        }
        UserFunction::Count(f) => {
            let mut len = count as MPI_Count;
            // The buffers hold `count` instances of the datatype as the user function expects them.
            // SAFETY: the addresses are valid for the call.
            unsafe { f(inp as *mut c_void, out as *mut c_void, &mut len, &mut dtype) }
        }
        UserFunction::Int(f) => {
            let mut done = 0;
            while done < count {
                let n = (count - done).min(c_int::MAX as usize);
                let mut len = n as c_int;
                let off = done as isize * stride;
                // SAFETY: as above, for instances done..done+n.
                unsafe {
                    f(
                        inp.wrapping_add_signed(off) as *mut c_void,
                        out.wrapping_add_signed(off) as *mut c_void,
                        &mut len,
                        &mut dtype,
                    )
                }
                done += n;
            }
        }
    }
}

fn create(
    function: UserFunction,
    commute: c_int,
    op: *mut MPI_Op,
    destructor: Option<crate::destructor::Destructor>,
    func: &str,
) -> MpiResult<()> {
    non_null(op, func, "op")?;
    let handle = OPS.insert(Arc::new(UserOp {
        function,
        commutative: commute != 0,
        _destructor: destructor,
    }));
    // SAFETY: checked non-null by `write`; the caller passes a writable MPI_Op.
    unsafe { write(op, handle, func, "op") }
}

/// `MPI_Op_create` and its `_c` twin (whose function takes an `MPI_Count` length).
pub(crate) fn op_create<F: Into<UserFunction>>(
    user_fn: Option<F>,
    commute: c_int,
    op: *mut MPI_Op,
    func: &str,
) -> MpiResult<()> {
    op_create_with(user_fn, commute, op, None, func)
}

/// `op_create` with a destructor (`MPIX_Op_create_x`).
pub(super) fn op_create_with<F: Into<UserFunction>>(
    user_fn: Option<F>,
    commute: c_int,
    op: *mut MPI_Op,
    destructor: Option<crate::destructor::Destructor>,
    func: &str,
) -> MpiResult<()> {
    let f = user_fn.ok_or_else(|| mpi_err!(Arg, "{func}(user_fn=NULL): a function is required"))?;
    create(f.into(), commute, op, destructor, func)
}

pub(crate) unsafe fn mpi_op_free(op: *mut MPI_Op) -> MpiResult<()> {
    non_null(op, "MPI_Op_free", "op")?;
    // SAFETY: checked non-null.
    let handle = unsafe { *op };
    if let Some(kind) = predefined(handle) {
        return Err(mpi_err!(
            Op,
            "MPI_Op_free(op={}): predefined ops cannot be freed",
            kind.name()
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
