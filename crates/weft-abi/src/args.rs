//! Reading and writing C arguments safely: null checks that name the argument, C strings in
//! and out, output arguments written only on success.

use std::borrow::Cow;
use std::ffi::{c_char, c_int, CStr};

use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::mpi_err;

/// An integer type of counts and displacements: `int` (and `MPI_Aint` displacements) in the
/// standard forms, `MPI_Count` in the large-count `_c` forms. One implementation generic
/// over it serves both forms of a function (api/gen.py wires them).
pub trait Int: Copy {
    /// Whether this is the large-count forms' type (`MPI_Count`).
    const LARGE: bool;
    fn get(self) -> i64;
    /// `v` in this type, if it fits.
    fn of(v: i64) -> Option<Self>;
    /// `v`, or `MPI_UNDEFINED` when it does not fit (what count queries answer then).
    fn or_undefined(v: i64) -> Self {
        Self::of(v)
            .unwrap_or_else(|| Self::of(crate::constants::MPI_UNDEFINED.into()).expect("fits"))
    }
}

impl Int for i32 {
    const LARGE: bool = false;
    fn get(self) -> i64 {
        self.into()
    }
    fn of(v: i64) -> Option<i32> {
        v.try_into().ok()
    }
}

impl Int for i64 {
    const LARGE: bool = true;
    fn get(self) -> i64 {
        self
    }
    fn of(v: i64) -> Option<i64> {
        Some(v)
    }
}

impl Int for isize {
    const LARGE: bool = false;
    fn get(self) -> i64 {
        self as i64
    }
    fn of(v: i64) -> Option<isize> {
        v.try_into().ok()
    }
}

/// An index argument: `value` in `0..bound`, else an error of `class` naming the argument and
/// saying what it must be (`what`, such as "a rank of the communicator").
pub fn index_below(
    value: c_int,
    bound: usize,
    (class, what): (ErrorClass, &str),
    func: &str,
    arg: &str,
) -> MpiResult<usize> {
    match usize::try_from(value) {
        Ok(i) if i < bound => Ok(i),
        _ => Err(MpiError::new(
            class,
            format!("{func}({arg}={value}): not {what} (size {bound})"),
        )),
    }
}

/// A peer rank argument: `None` for `MPI_PROC_NULL`, else a rank below `size`
/// (`MPI_ERR_RANK` naming `what` the group is).
pub fn peer_rank(
    value: c_int,
    size: u32,
    what: &str,
    func: &str,
    arg: &str,
) -> MpiResult<Option<u32>> {
    if value == crate::constants::MPI_PROC_NULL {
        return Ok(None);
    }
    let what = (ErrorClass::Rank, what);
    index_below(value, size as usize, what, func, arg).map(|r| Some(r as u32))
}

/// Fail with `MPI_ERR_ARG` if `ptr` is null.
pub fn non_null<T>(ptr: *const T, func: &str, arg: &str) -> MpiResult<()> {
    if ptr.is_null() {
        Err(mpi_err!(
            Arg,
            "{func}({arg}=NULL): a valid pointer is required"
        ))
    } else {
        Ok(())
    }
}

/// Write an output argument after checking it is not null.
///
/// # Safety
/// `ptr` must be null or valid for writing a `T`.
pub unsafe fn write<T>(ptr: *mut T, value: T, func: &str, arg: &str) -> MpiResult<()> {
    non_null(ptr, func, arg)?;
    // SAFETY: non-null, and the caller guarantees it is valid for writes.
    unsafe { ptr.write(value) };
    Ok(())
}

/// First of the private-use characters that stand for bytes which are not valid UTF-8, so
/// that any C string round-trips exactly through Rust's UTF-8 strings (names and info values
/// are byte strings in C).
const ESCAPE_BASE: u32 = 0x10_FF00;

/// A NUL-terminated C string as text: borrowed when it is valid UTF-8, otherwise with each
/// invalid byte escaped as a private-use character (`copy_out_str` turns it back).
///
/// # Safety
/// `ptr` must be null or point to a NUL-terminated string that outlives the borrow.
pub unsafe fn c_str<'a>(ptr: *const c_char, func: &str, arg: &str) -> MpiResult<Cow<'a, str>> {
    non_null(ptr, func, arg)?;
    // SAFETY: non-null and NUL-terminated per the caller's guarantee.
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    Ok(match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(escape_bytes(bytes)),
    })
}

fn escape_bytes(mut bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    while !bytes.is_empty() {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let (good, rest) = bytes.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).expect("valid prefix"));
                let bad = e.error_len().unwrap_or(rest.len());
                for &b in &rest[..bad] {
                    out.push(
                        char::from_u32(ESCAPE_BASE + b as u32).expect("a valid private-use char"),
                    );
                }
                bytes = &rest[bad..];
            }
        }
    }
    out
}

/// The C bytes of a text: escaped bytes back to themselves, everything else as UTF-8.
pub fn text_bytes(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        let v = c as u32;
        if (ESCAPE_BASE..ESCAPE_BASE + 256).contains(&v) {
            out.push((v - ESCAPE_BASE) as u8);
        } else {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    out
}

/// Copy `text` (as C bytes, see `text_bytes`) into a caller's buffer of `capacity` bytes (NUL
/// included), truncating, and store the copied length (without NUL) in `*len` when not null.
///
/// # Safety
/// `buf` must be valid for `capacity` bytes; `len` null or valid for one int.
pub unsafe fn copy_out_str(
    text: &str,
    buf: *mut c_char,
    capacity: usize,
    len: *mut c_int,
    func: &str,
    arg: &str,
) -> MpiResult<()> {
    non_null(buf, func, arg)?;
    if capacity == 0 {
        return Err(mpi_err!(Arg, "{func}({arg}): the buffer has no room"));
    }
    let bytes = text_bytes(text);
    let n = bytes.len().min(capacity - 1);
    // SAFETY: buf is valid for `capacity` > n bytes per the caller's guarantee.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), n);
        *buf.add(n) = 0;
    }
    if !len.is_null() {
        // SAFETY: non-null and valid for one int per the caller's guarantee.
        unsafe { *len = n as c_int };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_c_string_round_trips() {
        let raw: &[u8] = b"caf\xe9 \xc3\xa9 \xff\xfe ok\0";
        // SAFETY: a NUL-terminated byte string that outlives the call.
        let text = unsafe { c_str(raw.as_ptr().cast(), "f", "a") }.unwrap();
        assert_eq!(text_bytes(&text), &raw[..raw.len() - 1]);
        assert!(text.contains("é"), "valid UTF-8 stays as it is");
        let plain = b"plain\0";
        // SAFETY: as above.
        let text = unsafe { c_str(plain.as_ptr().cast(), "f", "a") }.unwrap();
        assert!(matches!(text, Cow::Borrowed("plain")));
    }
}
