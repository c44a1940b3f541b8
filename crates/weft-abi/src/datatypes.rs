//! Datatype handles: the standard's predefined types and derived types (a handle table of
//! the core's `Type`), resolved with the error class and message the standard asks for.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use weft_core::datatype::{Buf, Datatype, Type, TypeClass};
use weft_core::error::{MpiError, MpiResult};
use weft_core::mpi_err;
use weft_core::op::{Elem, Reduction};

use crate::constants::*;
use crate::ctypes::*;
use crate::handles::{BadHandle, Kind, Table, FIRST_USER_HANDLE};

/// Derived datatypes (and the f90 types, which are permanent).
pub static TYPES: Table<Type> = Table::new(Kind::Datatype);

use TypeClass::*;

/// (handle, name, size in bytes, extent, class) of every predefined datatype, for LP64 C.
#[rustfmt::skip]
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
    (MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 8, 8, UnsignedInt),
    (MPI_FLOAT, "MPI_FLOAT", 4, 4, Float),
    (MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX", 8, 8, Complex),
    (MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", 8, 8, Complex),
    (MPI_DOUBLE, "MPI_DOUBLE", 8, 8, Float),
    (MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16, 16, Complex),
    (MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", 16, 16, Complex),
    (MPI_LOGICAL, "MPI_LOGICAL", 4, 4, Logical),
    (MPI_INTEGER, "MPI_INTEGER", 4, 4, SignedInt),
    (MPI_REAL, "MPI_REAL", 4, 4, Float),
    (MPI_COMPLEX, "MPI_COMPLEX", 8, 8, Complex),
    (MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8, 8, Float),
    (MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16, 16, Complex),
    (MPI_CHARACTER, "MPI_CHARACTER", 1, 1, Char),
    (MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 16, 16, Float),
    (MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", 32, 32, Complex),
    (MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", 32, 32, Complex),
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
    // MPICH's half-precision extensions: IEEE binary16 (C `_Float16`) and bfloat16.
    (MPIX_C_FLOAT16, "MPIX_C_FLOAT16", 2, 2, Float),
    (MPIX_BFLOAT16, "MPIX_BFLOAT16", 2, 2, Float),
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

/// The members of the predefined pair types: (pair, first, second, offset of second).
const PAIRS: &[(MPI_Datatype, MPI_Datatype, MPI_Datatype, isize)] = &[
    (MPI_FLOAT_INT, MPI_FLOAT, MPI_INT, 4),
    (MPI_DOUBLE_INT, MPI_DOUBLE, MPI_INT, 8),
    (MPI_LONG_INT, MPI_LONG, MPI_INT, 8),
    (MPI_2INT, MPI_INT, MPI_INT, 4),
    (MPI_SHORT_INT, MPI_SHORT, MPI_INT, 4),
    (MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE, MPI_INT, 16),
    (MPI_2REAL, MPI_REAL, MPI_REAL, 4),
    (
        MPI_2DOUBLE_PRECISION,
        MPI_DOUBLE_PRECISION,
        MPI_DOUBLE_PRECISION,
        8,
    ),
    (MPI_2INTEGER, MPI_INTEGER, MPI_INTEGER, 4),
];

/// The full `Type` of every predefined handle, indexed like `table()`.
fn types() -> &'static [Option<Arc<Type>>; 256] {
    static TYPES: OnceLock<[Option<Arc<Type>>; 256]> = OnceLock::new();
    TYPES.get_or_init(|| {
        let mut t = [const { None }; 256];
        for (i, d) in table().iter().enumerate() {
            if let Some(d) = d {
                if d.class != TypeClass::Pair {
                    t[i] = Some(Type::basic(d));
                }
            }
        }
        for &(pair, a, b, disp) in PAIRS {
            let d = table()[pair - 0x200]
                .as_ref()
                .expect("pairs are predefined");
            let (a, b) = (
                t[a - 0x200].clone().expect("pair members are predefined"),
                t[b - 0x200].clone().expect("pair members are predefined"),
            );
            t[pair - 0x200] = Some(Type::pair(d, &a, &b, disp));
        }
        t
    })
}

fn null_type(func: &str, arg: &str) -> MpiError {
    mpi_err!(
        Type,
        "{func}({arg}=MPI_DATATYPE_NULL): a valid datatype is required"
    )
}

/// The datatype object a handle names (predefined or derived, committed or not).
pub fn type_of(handle: MPI_Datatype, func: &str, arg: &str) -> MpiResult<Arc<Type>> {
    if handle == MPI_DATATYPE_NULL {
        return Err(null_type(func, arg));
    }
    if handle < FIRST_USER_HANDLE {
        return handle
            .checked_sub(0x200)
            .and_then(|i| types().get(i))
            .and_then(Option::clone)
            .ok_or_else(|| mpi_err!(Type, "{func}({arg}={handle:#x}): not a valid datatype"));
    }
    TYPES.get(handle).map_err(|why| {
        mpi_err!(
            Type,
            "{func}({arg}={handle:#x}): datatype: {}",
            match why {
                BadHandle::Invalid => "not a valid handle",
                BadHandle::Freed => "the datatype was already freed",
            }
        )
    })
}

/// A datatype usable for communication and packing: it must be committed.
pub fn committed(handle: MPI_Datatype, func: &str, arg: &str) -> MpiResult<Arc<Type>> {
    let t = type_of(handle, func, arg)?;
    if !t.is_committed() {
        return Err(mpi_err!(
            Type,
            "{func}({arg}={handle:#x}): the datatype is not committed (call MPI_Type_commit)"
        ));
    }
    Ok(t)
}

/// A datatype borrowed for one call: predefined types without touching a reference count.
pub enum TypeRef {
    Static(&'static Arc<Type>),
    Owned(Arc<Type>),
}

impl std::ops::Deref for TypeRef {
    type Target = Arc<Type>;
    fn deref(&self) -> &Arc<Type> {
        match self {
            TypeRef::Static(t) => t,
            TypeRef::Owned(t) => t,
        }
    }
}

/// Bytes per element of each predefined handle (`handle - 0x200`) whose elements are plain
/// contiguous bytes (size equals extent, not a pair type); 0 for the others. Built at compile
/// time, so the send/receive fast path reads one array element.
const CONTIGUOUS_SIZES: [u8; 256] = {
    let mut sizes = [0u8; 256];
    let mut i = 0;
    while i < PREDEFINED.len() {
        let (handle, _, size, extent, class) = PREDEFINED[i];
        if size == extent && size < 256 && !matches!(class, TypeClass::Pair) {
            sizes[handle - 0x200] = size as u8;
        }
        i += 1;
    }
    sizes
};

/// Bytes per element of a predefined type whose elements are plain contiguous bytes (size
/// equals extent), for the send/receive fast path; 0 for any other handle.
pub fn contiguous_predefined_size(handle: MPI_Datatype) -> usize {
    match handle.checked_sub(0x200) {
        Some(i) if i < 256 => CONTIGUOUS_SIZES[i] as usize,
        _ => 0,
    }
}

/// The class of each predefined handle (`handle - 0x200`) whose elements are plain
/// contiguous bytes of 1, 2, 4 or 8 bytes, the sizes one CPU atomic instruction updates;
/// `None` for the others. Built at compile time, for the RMA atomics' fast path.
const WORD_CLASSES: [Option<TypeClass>; 256] = {
    let mut classes = [None; 256];
    let mut i = 0;
    while i < 256 {
        if matches!(CONTIGUOUS_SIZES[i], 1 | 2 | 4 | 8) {
            let mut j = 0;
            while j < PREDEFINED.len() {
                if PREDEFINED[j].0 - 0x200 == i {
                    classes[i] = Some(PREDEFINED[j].4);
                }
                j += 1;
            }
        }
        i += 1;
    }
    classes
};

/// The element size and class of a predefined byte-contiguous type of 1, 2, 4 or 8 bytes;
/// `None` for any other handle.
#[inline(always)]
pub fn word_type(handle: MPI_Datatype) -> Option<(usize, TypeClass)> {
    let i = handle.checked_sub(0x200).filter(|&i| i < 256)?;
    Some((CONTIGUOUS_SIZES[i] as usize, WORD_CLASSES[i]?))
}

/// The message memory of `count` elements of a predefined byte-contiguous type at `buf`, as
/// plain bytes; `None` for any other type or a count that is negative or overflows (the
/// caller then takes its general path, which reports errors).
///
/// # Safety
/// `buf` holds `count` elements of `datatype` (the standard's rule for a message buffer),
/// left alone until the operation using the `Buf` completes.
#[inline(always)]
pub unsafe fn contiguous_buf(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
) -> Option<Buf> {
    let size = contiguous_predefined_size(datatype);
    if size == 0 || count < 0 || (buf.is_null() && count > 0) {
        return None;
    }
    let bytes = (count as usize)
        .checked_mul(size)
        .filter(|&b| b <= isize::MAX as usize)?;
    // SAFETY: the caller's contract; these bytes are the elements.
    Some(unsafe { Buf::new(buf as usize, bytes) })
}

/// The element layout predefined reductions see in each byte-contiguous predefined type
/// (indexed like `CONTIGUOUS_SIZES`), for the reductions' fast paths.
static CONTIGUOUS_ELEMS: LazyLock<[Option<Elem>; 256]> = LazyLock::new(|| {
    let mut elems = [None; 256];
    for (i, e) in elems.iter_mut().enumerate() {
        if CONTIGUOUS_SIZES[i] != 0 {
            *e = types()[i]
                .as_ref()
                .and_then(|t| t.element())
                .and_then(Elem::of);
        }
    }
    elems
});

/// The reduction `op` performs on a byte-contiguous predefined `datatype`, when both are
/// predefined and the standard defines the op on the type; `None` otherwise (the general
/// path then decides, and reports what is wrong).
// Inlined: returned through memory, the reduction costs a store-forwarding stall per call.
#[inline(always)]
pub fn contiguous_reduction(op: MPI_Op, datatype: MPI_Datatype) -> Option<Reduction> {
    let kind = crate::api::op::predefined(op)?;
    let i = datatype.checked_sub(0x200).filter(|&i| i < 256)?;
    let elem = CONTIGUOUS_ELEMS[i]?;
    Reduction::of_elem(kind, elem, CONTIGUOUS_SIZES[i] as usize)
}

/// `committed` for the hot paths (send, receive): predefined types are borrowed.
pub fn committed_ref(handle: MPI_Datatype, func: &str, arg: &str) -> MpiResult<TypeRef> {
    if (0x200..0x300).contains(&handle) {
        if let Some(t) = types()[handle - 0x200].as_ref() {
            return Ok(TypeRef::Static(t));
        }
    }
    committed(handle, func, arg).map(TypeRef::Owned)
}

/// The handle of a predefined type's description, by name.
pub fn predefined_handle(d: &Datatype) -> Option<MPI_Datatype> {
    PREDEFINED.iter().find(|p| p.1 == d.name).map(|p| p.0)
}

/// A handle for a type returned to the user (`MPI_Type_get_contents`): the predefined
/// value for predefined types, the cached handle for f90 types, else a new handle.
pub fn handle_for(t: &Arc<Type>) -> MPI_Datatype {
    use weft_core::datatype::Combiner;
    if t.combiner() == Combiner::Named {
        if let Some(h) = t.predefined.and_then(predefined_handle) {
            return h;
        }
    }
    if t.is_permanent() {
        let cache = F90.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, h)) = cache
            .iter()
            .find(|(_, (ty, _))| Arc::ptr_eq(ty, t))
            .map(|(k, v)| (k, v.1))
        {
            return h;
        }
    }
    TYPES.insert(t.clone())
}

/// The f90 parameterized types made so far, by (combiner, p, r): each is made once and keeps
/// its handle (the standard treats them as predefined).
pub static F90: std::sync::LazyLock<Mutex<HashMap<(u8, i32, i32), (Arc<Type>, MPI_Datatype)>>> =
    std::sync::LazyLock::new(|| Mutex::new(HashMap::new()));

/// The predefined description of a handle: predefined types, and the f90 types (which stand
/// for one). Derived types have none; see `type_of`.
pub fn datatype(handle: MPI_Datatype, func: &str, arg: &str) -> MpiResult<&'static Datatype> {
    if handle >= FIRST_USER_HANDLE {
        let t = type_of(handle, func, arg)?;
        return t.predefined.filter(|_| t.is_permanent()).ok_or_else(|| {
            mpi_err!(
                Type,
                "{func}({arg}={handle:#x}): a predefined datatype is required here"
            )
        });
    }
    if handle == MPI_DATATYPE_NULL {
        return Err(mpi_err!(
            Type,
            "{func}({arg}=MPI_DATATYPE_NULL): a valid datatype is required"
        ));
    }
    handle
        .checked_sub(0x200)
        .and_then(|i| table().get(i))
        .and_then(Option::as_ref)
        .ok_or_else(|| mpi_err!(Type, "{func}({arg}={handle:#x}): not a valid datatype"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_sizes_agree_with_the_type_table() {
        assert_eq!(contiguous_predefined_size(MPI_INT), 4);
        assert_eq!(contiguous_predefined_size(MPI_DOUBLE), 8);
        assert_eq!(contiguous_predefined_size(MPI_BYTE), 1);
        assert_eq!(
            contiguous_predefined_size(MPI_DOUBLE_INT),
            0,
            "pairs have gaps"
        );
        assert_eq!(contiguous_predefined_size(MPI_DATATYPE_NULL), 0);
        assert_eq!(
            contiguous_predefined_size(crate::handles::FIRST_USER_HANDLE),
            0
        );
        for (i, d) in table().iter().enumerate() {
            let size = contiguous_predefined_size(0x200 + i);
            match d {
                Some(d) if d.class != TypeClass::Pair && d.size == d.extent => {
                    assert_eq!(size, d.size, "{}", d.name)
                }
                _ => assert_eq!(size, 0),
            }
        }
    }

    #[test]
    fn predefined_types_resolve() {
        assert_eq!(datatype(MPI_INT, "f", "t").unwrap().size, 4);
        assert_eq!(datatype(MPI_DOUBLE_INT, "f", "t").unwrap().extent, 16);
        assert_eq!(
            datatype(MPI_DATATYPE_NULL, "f", "t").unwrap_err().code,
            weft_core::error::ErrorClass::Type as i32
        );
        assert!(datatype(0x1ff, "f", "t").is_err());
        assert!(datatype(0x2ff, "f", "t").is_err());
        assert!(datatype(usize::MAX, "f", "t").is_err());
        for &(h, _, size, extent, _) in PREDEFINED {
            let t = type_of(h, "f", "t").unwrap();
            assert_eq!((t.size, t.extent), (size, extent as isize), "{h:#x}");
            assert!(t.is_committed());
        }
        let names: std::collections::HashSet<_> = PREDEFINED.iter().map(|p| p.0).collect();
        assert_eq!(names.len(), PREDEFINED.len(), "no handle listed twice");
    }
}
