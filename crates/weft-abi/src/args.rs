//! Reading and writing C arguments safely: null checks that name the argument, C strings in
//! and out, output arguments written only on success.

use std::ffi::{c_char, c_int, CStr};

use weft_core::error::{ErrorClass, MpiError, MpiResult};

/// Fail with `MPI_ERR_ARG` if `ptr` is null.
pub fn non_null<T>(ptr: *const T, func: &str, arg: &str) -> MpiResult<()> {
    if ptr.is_null() {
        Err(MpiError::new(
            ErrorClass::Arg,
            format!("{func}({arg}=NULL): a valid pointer is required"),
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

/// Borrow a NUL-terminated C string as UTF-8.
///
/// # Safety
/// `ptr` must be null or point to a NUL-terminated string that outlives the borrow.
pub unsafe fn c_str<'a>(ptr: *const c_char, func: &str, arg: &str) -> MpiResult<&'a str> {
    non_null(ptr, func, arg)?;
    // SAFETY: non-null and NUL-terminated per the caller's guarantee.
    let s = unsafe { CStr::from_ptr(ptr) };
    s.to_str()
        .map_err(|_| MpiError::new(ErrorClass::Arg, format!("{func}({arg}): not valid UTF-8")))
}

/// Copy `text` into a caller's buffer of `capacity` bytes (NUL included), truncating at a
/// character boundary, and store the copied length (without NUL) in `*len` when not null.
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
        return Err(MpiError::new(
            ErrorClass::Arg,
            format!("{func}({arg}): the buffer has no room"),
        ));
    }
    let mut n = text.len().min(capacity.saturating_sub(1));
    while !text.is_char_boundary(n) {
        n -= 1;
    }
    // SAFETY: buf is valid for `capacity` > n bytes per the caller's guarantee.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), n);
        *buf.add(n) = 0;
    }
    if !len.is_null() {
        // SAFETY: non-null and valid for one int per the caller's guarantee.
        unsafe { *len = n as c_int };
    }
    Ok(())
}
