//! Datatype handles: the standard's predefined types (derived types arrive with the
//! datatype issue) resolved to the core's description.

use std::sync::OnceLock;

use weft_core::datatype::{Datatype, TypeClass};
use weft_core::error::{ErrorClass, MpiError, MpiResult};

use crate::constants::*;
use crate::ctypes::*;

use TypeClass::*;

/// (handle, name, size in bytes, extent, class) of every predefined datatype, for LP64 C.
const PREDEFINED: &[(MPI_Datatype, &str, usize, usize, TypeClass)] = &[
    (MPI_AINT, "MPI_AINT", 8, 8, SignedInt),
    (MPI_COUNT, "MPI_COUNT", 8, 8, SignedInt),
    (MPI_OFFSET, "MPI_OFFSET", 8, 8, SignedInt),
    (MPI_PACKED, "MPI_PACKED", 1, 1, Packed),
    (MPI_SHORT, "MPI_SHORT", 2, 2, SignedInt),
    (MPI_INT, "MPI_INT", 4, 4, SignedInt),
    (MPI_LONG, "MPI_LONG", 8, 8, SignedInt),
    (MPI_LONG_LONG, "MPI_LONG_LONG", 8, 8, SignedInt),
    (MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", 2, 2, UnsignedInt),
    (MPI_UNSIGNED, "MPI_UNSIGNED", 4, 4, UnsignedInt),
    (MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 8, 8, UnsignedInt),
    (
        MPI_UNSIGNED_LONG_LONG,
        "MPI_UNSIGNED_LONG_LONG",
        8,
        8,
        UnsignedInt,
    ),
    (MPI_FLOAT, "MPI_FLOAT", 4, 4, Float),
    (MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", 8, 8, Complex),
    (
        MPI_CXX_FLOAT_COMPLEX,
        "MPI_CXX_FLOAT_COMPLEX",
        8,
        8,
        Complex,
    ),
    (MPI_DOUBLE, "MPI_DOUBLE", 8, 8, Float),
    (
        MPI_C_DOUBLE_COMPLEX,
        "MPI_C_DOUBLE_COMPLEX",
        16,
        16,
        Complex,
    ),
    (
        MPI_CXX_DOUBLE_COMPLEX,
        "MPI_CXX_DOUBLE_COMPLEX",
        16,
        16,
        Complex,
    ),
    (MPI_LOGICAL, "MPI_LOGICAL", 4, 4, Logical),
    (MPI_INTEGER, "MPI_INTEGER", 4, 4, SignedInt),
    (MPI_REAL, "MPI_REAL", 4, 4, Float),
    (MPI_COMPLEX, "MPI_COMPLEX", 8, 8, Complex),
    (MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8, 8, Float),
    (MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16, 16, Complex),
    (MPI_CHARACTER, "MPI_CHARACTER", 1, 1, Char),
    (MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 16, 16, Float),
    (
        MPI_C_LONG_DOUBLE_COMPLEX,
        "MPI_C_LONG_DOUBLE_COMPLEX",
        32,
        32,
        Complex,
    ),
    (
        MPI_CXX_LONG_DOUBLE_COMPLEX,
        "MPI_CXX_LONG_DOUBLE_COMPLEX",
        32,
        32,
        Complex,
    ),
    (MPI_FLOAT_INT, "MPI_FLOAT_INT", 8, 8, Pair),
    (MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 12, 16, Pair),
    (MPI_LONG_INT, "MPI_LONG_INT", 12, 16, Pair),
    (MPI_2INT, "MPI_2INT", 8, 8, Pair),
    (MPI_SHORT_INT, "MPI_SHORT_INT", 6, 8, Pair),
    (MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", 20, 32, Pair),
    (MPI_2REAL, "MPI_2REAL", 8, 8, Pair),
    (MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 16, 16, Pair),
    (MPI_2INTEGER, "MPI_2INTEGER", 8, 8, Pair),
    (MPI_C_BOOL, "MPI_C_BOOL", 1, 1, Logical),
    (MPI_CXX_BOOL, "MPI_CXX_BOOL", 1, 1, Logical),
    (MPI_WCHAR, "MPI_WCHAR", 4, 4, Char),
    (MPI_INT8_T, "MPI_INT8_T", 1, 1, SignedInt),
    (MPI_UINT8_T, "MPI_UINT8_T", 1, 1, UnsignedInt),
    (MPI_CHAR, "MPI_CHAR", 1, 1, Char),
    (MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1, 1, SignedInt),
    (MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1, 1, UnsignedInt),
    (MPI_BYTE, "MPI_BYTE", 1, 1, Byte),
    (MPI_INT16_T, "MPI_INT16_T", 2, 2, SignedInt),
    (MPI_UINT16_T, "MPI_UINT16_T", 2, 2, UnsignedInt),
    (MPI_INT32_T, "MPI_INT32_T", 4, 4, SignedInt),
    (MPI_UINT32_T, "MPI_UINT32_T", 4, 4, UnsignedInt),
    (MPI_INT64_T, "MPI_INT64_T", 8, 8, SignedInt),
    (MPI_UINT64_T, "MPI_UINT64_T", 8, 8, UnsignedInt),
    (MPI_LOGICAL1, "MPI_LOGICAL1", 1, 1, Logical),
    (MPI_INTEGER1, "MPI_INTEGER1", 1, 1, SignedInt),
    (MPI_LOGICAL2, "MPI_LOGICAL2", 2, 2, Logical),
    (MPI_INTEGER2, "MPI_INTEGER2", 2, 2, SignedInt),
    (MPI_REAL2, "MPI_REAL2", 2, 2, Float),
    (MPI_LOGICAL4, "MPI_LOGICAL4", 4, 4, Logical),
    (MPI_INTEGER4, "MPI_INTEGER4", 4, 4, SignedInt),
    (MPI_REAL4, "MPI_REAL4", 4, 4, Float),
    (MPI_COMPLEX4, "MPI_COMPLEX4", 4, 4, Complex),
    (MPI_LOGICAL8, "MPI_LOGICAL8", 8, 8, Logical),
    (MPI_INTEGER8, "MPI_INTEGER8", 8, 8, SignedInt),
    (MPI_REAL8, "MPI_REAL8", 8, 8, Float),
    (MPI_COMPLEX8, "MPI_COMPLEX8", 8, 8, Complex),
    (MPI_LOGICAL16, "MPI_LOGICAL16", 16, 16, Logical),
    (MPI_INTEGER16, "MPI_INTEGER16", 16, 16, SignedInt),
    (MPI_REAL16, "MPI_REAL16", 16, 16, Float),
    (MPI_COMPLEX16, "MPI_COMPLEX16", 16, 16, Complex),
    (MPI_COMPLEX32, "MPI_COMPLEX32", 32, 32, Complex),
];

/// Predefined types indexed by `handle - 0x200` (the standard's datatype range).
fn table() -> &'static [Option<Datatype>; 256] {
    static TABLE: OnceLock<[Option<Datatype>; 256]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = [const { None }; 256];
        for &(handle, name, size, extent, class) in PREDEFINED {
            t[handle - 0x200] = Some(Datatype {
                name,
                size,
                extent,
                class,
            });
        }
        t
    })
}

/// The datatype a handle names.
pub fn datatype(handle: MPI_Datatype, func: &str, arg: &str) -> MpiResult<&'static Datatype> {
    if handle == MPI_DATATYPE_NULL {
        return Err(MpiError::new(
            ErrorClass::Type,
            format!("{func}({arg}=MPI_DATATYPE_NULL): a valid datatype is required"),
        ));
    }
    handle
        .checked_sub(0x200)
        .and_then(|i| table().get(i))
        .and_then(Option::as_ref)
        .ok_or_else(|| {
            MpiError::new(
                ErrorClass::Type,
                format!("{func}({arg}={handle:#x}): not a valid datatype"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_types_resolve() {
        assert_eq!(datatype(MPI_INT, "f", "t").unwrap().size, 4);
        assert_eq!(datatype(MPI_DOUBLE_INT, "f", "t").unwrap().extent, 16);
        assert_eq!(
            datatype(MPI_DATATYPE_NULL, "f", "t").unwrap_err().code,
            ErrorClass::Type as i32
        );
        assert!(datatype(0x1ff, "f", "t").is_err());
        assert!(datatype(0x2ff, "f", "t").is_err());
        assert!(datatype(usize::MAX, "f", "t").is_err());
        let names: std::collections::HashSet<_> = PREDEFINED.iter().map(|p| p.0).collect();
        assert_eq!(names.len(), PREDEFINED.len(), "no handle listed twice");
    }
}
