//! The standard ABI's Fortran queries: `MPI_Abi_get_fortran_info`/`_booleans` and their
//! setters. Weft's Fortran datatypes have fixed sizes (`datatypes.rs`: LOGICAL, INTEGER and
//! REAL 4 bytes, DOUBLE PRECISION 8) and a LOGICAL is 1 for .TRUE. and 0 for .FALSE. (what
//! logical reductions write, and gfortran's representation, which libmpifort passes through),
//! so the getters answer those and the setters accept only values that agree with them.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use weft_core::error::{ErrorClass, MpiError, MpiResult};

use crate::args::{non_null, write};
use crate::constants::*;
use crate::ctypes::*;
use crate::{datatypes, objects};

/// Bytes in a Fortran LOGICAL, and its .TRUE. and .FALSE.
const LOGICAL_SIZE: c_int = 4;
const LOGICAL_TRUE: i32 = 1;
const LOGICAL_FALSE: i32 = 0;

/// The sized types whose sizes the info reports, and the optional types it says are supported.
const SIZES: [(MPI_Datatype, &str); 4] = [
    (MPI_LOGICAL, "mpi_logical_size"),
    (MPI_INTEGER, "mpi_integer_size"),
    (MPI_REAL, "mpi_real_size"),
    (MPI_DOUBLE_PRECISION, "mpi_double_precision_size"),
];
const OPTIONAL: [(MPI_Datatype, &str); 19] = [
    (MPI_LOGICAL1, "mpi_logical1_supported"),
    (MPI_LOGICAL2, "mpi_logical2_supported"),
    (MPI_LOGICAL4, "mpi_logical4_supported"),
    (MPI_LOGICAL8, "mpi_logical8_supported"),
    (MPI_LOGICAL16, "mpi_logical16_supported"),
    (MPI_INTEGER1, "mpi_integer1_supported"),
    (MPI_INTEGER2, "mpi_integer2_supported"),
    (MPI_INTEGER4, "mpi_integer4_supported"),
    (MPI_INTEGER8, "mpi_integer8_supported"),
    (MPI_INTEGER16, "mpi_integer16_supported"),
    (MPI_REAL2, "mpi_real2_supported"),
    (MPI_REAL4, "mpi_real4_supported"),
    (MPI_REAL8, "mpi_real8_supported"),
    (MPI_REAL16, "mpi_real16_supported"),
    (MPI_COMPLEX4, "mpi_complex4_supported"),
    (MPI_COMPLEX8, "mpi_complex8_supported"),
    (MPI_COMPLEX16, "mpi_complex16_supported"),
    (MPI_COMPLEX32, "mpi_complex32_supported"),
    (MPI_DOUBLE_COMPLEX, "mpi_double_complex_supported"),
];

/// Weft's Fortran facts as info key/value pairs.
fn fortran_pairs(func: &str) -> MpiResult<Vec<(String, String)>> {
    let mut pairs = Vec::new();
    for (handle, key) in SIZES {
        let size = datatypes::datatype(handle, func, key)?.size;
        pairs.push((key.to_string(), size.to_string()));
    }
    for (handle, key) in OPTIONAL {
        let supported = datatypes::datatype(handle, func, key).is_ok();
        pairs.push((key.to_string(), supported.to_string()));
    }
    Ok(pairs)
}

fn abi_error(message: String) -> MpiError {
    MpiError::new(ErrorClass::Abi, message)
}

pub(crate) unsafe fn mpi_abi_get_fortran_info(info: *mut MPI_Info) -> MpiResult<()> {
    const FUNC: &str = "MPI_Abi_get_fortran_info";
    non_null(info, FUNC, "info")?;
    let made = weft_core::object::Info::from_pairs(fortran_pairs(FUNC)?);
    let handle = objects::INFOS.insert(Arc::new(made));
    // SAFETY: checked non-null; the caller passes a valid MPI_Info pointer.
    unsafe { write(info, handle, FUNC, "info") }
}

/// Accepts an info whose sizes (all four required) and supported types agree with Weft's.
pub(crate) fn mpi_abi_set_fortran_info(info: MPI_Info) -> MpiResult<()> {
    const FUNC: &str = "MPI_Abi_set_fortran_info";
    let given = objects::info_object(info, FUNC)?;
    for (key, ours) in fortran_pairs(FUNC)? {
        match given.get(&key) {
            None if key.ends_with("_size") => {
                return Err(abi_error(format!(
                    "{FUNC}(info): the key {key} is required"
                )))
            }
            Some(value) if value.trim() != ours => {
                return Err(abi_error(format!(
                    "{FUNC}(info): {key}={value}, but Weft's Fortran bindings use {ours}"
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

fn check_logical_size(func: &str, logical_size: c_int) -> MpiResult<()> {
    if logical_size != LOGICAL_SIZE {
        return Err(abi_error(format!(
            "{func}(logical_size={logical_size}): Weft's Fortran LOGICAL is {LOGICAL_SIZE} bytes"
        )));
    }
    Ok(())
}

pub(crate) unsafe fn mpi_abi_get_fortran_booleans(
    logical_size: c_int,
    logical_true: *mut c_void,
    logical_false: *mut c_void,
    is_set: *mut c_int,
) -> MpiResult<()> {
    const FUNC: &str = "MPI_Abi_get_fortran_booleans";
    non_null(logical_true, FUNC, "logical_true")?;
    non_null(logical_false, FUNC, "logical_false")?;
    non_null(is_set, FUNC, "is_set")?;
    check_logical_size(FUNC, logical_size)?;
    // Unaligned writes: a Fortran LOGICAL need not be aligned for C.
    // SAFETY: checked non-null; the caller passes logical_size (4) bytes at each value and an int.
    unsafe {
        logical_true.cast::<i32>().write_unaligned(LOGICAL_TRUE);
        logical_false.cast::<i32>().write_unaligned(LOGICAL_FALSE);
        write(is_set, 1, FUNC, "is_set")
    }
}

pub(crate) unsafe fn mpi_abi_set_fortran_booleans(
    logical_size: c_int,
    logical_true: *mut c_void,
    logical_false: *mut c_void,
) -> MpiResult<()> {
    const FUNC: &str = "MPI_Abi_set_fortran_booleans";
    non_null(logical_true, FUNC, "logical_true")?;
    non_null(logical_false, FUNC, "logical_false")?;
    check_logical_size(FUNC, logical_size)?;
    // SAFETY: checked non-null; the caller passes logical_size (4) readable bytes at each.
    let (t, f) = unsafe {
        (
            logical_true.cast::<i32>().read_unaligned(),
            logical_false.cast::<i32>().read_unaligned(),
        )
    };
    if t != LOGICAL_TRUE || f != LOGICAL_FALSE {
        return Err(abi_error(format!(
            "{FUNC}: .TRUE.={t} and .FALSE.={f}, but Weft's Fortran LOGICALs are {LOGICAL_TRUE} and {LOGICAL_FALSE}"
        )));
    }
    Ok(())
}
