//! `MPI_Pack`, `MPI_Unpack`, `MPI_Pack_size` (native representation: the packed stream is
//! the type's data bytes in typemap order, no header) and the "external32" forms.

use std::ffi::{c_char, c_void};

use weft_core::datatype::{external32, Buf, Type};
use weft_core::error::{ErrorClass, MpiError, MpiResult};

use crate::api::datatype::{committed_type, count_arg};
use crate::args::{c_str, non_null, write, Int};
use crate::ctypes::*;
use crate::objects;

fn err(class: ErrorClass, msg: String) -> MpiError {
    MpiError::new(class, msg)
}

fn overflow(func: &str, count: i64) -> MpiError {
    err(
        ErrorClass::Count,
        format!("{func}(count={count}): the packed size overflows"),
    )
}

/// Read `*position` (non-negative).
///
/// # Safety
/// `position` null or readable.
unsafe fn read_position<T: Int>(position: *const T, func: &str) -> MpiResult<usize> {
    non_null(position, func, "position")?;
    // SAFETY: checked non-null; readable per the caller.
    let p = unsafe { *position }.get();
    usize::try_from(p).map_err(|_| {
        err(
            ErrorClass::Arg,
            format!("{func}(*position={p}): must not be negative"),
        )
    })
}

/// The typed side of a pack or unpack: a derived type may address absolute memory, so
/// `MPI_BOTTOM` (null) is a valid buffer for it; a predefined type needs a real pointer.
fn typed_buf(buf: *const c_void, t: &Type, func: &str, arg: &str) -> MpiResult<()> {
    if t.predefined.is_some() {
        non_null(buf, func, arg)?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
unsafe fn pack_bytes(
    inbuf: *const c_void,
    incount: i64,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: i64,
    position: usize,
    comm: Option<MPI_Comm>,
    func: &str,
) -> MpiResult<usize> {
    if let Some(c) = comm {
        objects::comm(c, func, "comm")?;
    }
    let n = count_arg(incount, func, "incount")?;
    let t = committed_type(datatype, func)?;
    let bytes = t.bytes_for(n).ok_or_else(|| overflow(func, incount))?;
    let outsize = usize::try_from(outsize).map_err(|_| {
        err(
            ErrorClass::Arg,
            format!("{func}(outsize={outsize}): must not be negative"),
        )
    })?;
    let end = position
        .checked_add(bytes)
        .filter(|&e| e <= outsize)
        .ok_or_else(|| {
            err(
                ErrorClass::Truncate,
                format!(
                    "{func}(outsize={outsize}): {bytes} bytes do not fit at position {position}"
                ),
            )
        })?;
    if bytes == 0 {
        return Ok(end);
    }
    typed_buf(inbuf, &t, func, "inbuf")?;
    non_null(outbuf, func, "outbuf")?;
    // SAFETY: the caller passes `incount` instances at inbuf and `outsize` bytes at outbuf;
    // the type is held by `t` for the duration.
    unsafe {
        let b = Buf::typed(inbuf as usize, n, &t);
        let out = std::slice::from_raw_parts_mut((outbuf as *mut u8).add(position), bytes);
        b.pack(0, out);
    }
    Ok(end)
}

#[allow(clippy::too_many_arguments)]
unsafe fn unpack_bytes(
    inbuf: *const c_void,
    insize: i64,
    position: usize,
    outbuf: *mut c_void,
    outcount: i64,
    datatype: MPI_Datatype,
    comm: Option<MPI_Comm>,
    func: &str,
) -> MpiResult<usize> {
    if let Some(c) = comm {
        objects::comm(c, func, "comm")?;
    }
    let n = count_arg(outcount, func, "outcount")?;
    let t = committed_type(datatype, func)?;
    let bytes = t.bytes_for(n).ok_or_else(|| overflow(func, outcount))?;
    let insize = usize::try_from(insize).map_err(|_| {
        err(
            ErrorClass::Arg,
            format!("{func}(insize={insize}): must not be negative"),
        )
    })?;
    let end = position
        .checked_add(bytes)
        .filter(|&e| e <= insize)
        .ok_or_else(|| {
            err(
                ErrorClass::Truncate,
                format!(
                    "{func}(insize={insize}): {bytes} bytes are not there at position {position}"
                ),
            )
        })?;
    if bytes == 0 {
        return Ok(end);
    }
    non_null(inbuf, func, "inbuf")?;
    typed_buf(outbuf as *const c_void, &t, func, "outbuf")?;
    // SAFETY: as in `pack`, reversed.
    unsafe {
        let b = Buf::typed(outbuf as usize, n, &t);
        let src = std::slice::from_raw_parts((inbuf as *const u8).add(position), bytes);
        b.unpack(0, src);
    }
    Ok(end)
}

fn packed_size(
    incount: i64,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
    func: &str,
) -> MpiResult<usize> {
    objects::comm(comm, func, "comm")?;
    let n = count_arg(incount, func, "incount")?;
    let t = crate::datatypes::type_of(datatype, func, "datatype")?;
    t.bytes_for(n).ok_or_else(|| overflow(func, incount))
}

// ------------------------------------------------------------------ external32

/// # Safety
/// `datarep` null or a C string.
unsafe fn check_datarep(datarep: *const c_char, func: &str) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    let d = unsafe { c_str(datarep, func, "datarep")? };
    if d != "external32" {
        return Err(err(
            ErrorClass::UnsupportedDatarep,
            format!("{func}(datarep=\"{d}\"): only \"external32\" is supported"),
        ));
    }
    Ok(())
}

fn external_size(incount: i64, datatype: MPI_Datatype, func: &str) -> MpiResult<usize> {
    let n = count_arg(incount, func, "incount")?;
    let t = crate::datatypes::type_of(datatype, func, "datatype")?;
    external32::size(&t, n).ok_or_else(|| overflow(func, incount))
}

#[allow(clippy::too_many_arguments)]
unsafe fn pack_external_bytes(
    datarep: *const c_char,
    inbuf: *const c_void,
    incount: i64,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: i64,
    position: usize,
    func: &str,
) -> MpiResult<usize> {
    // SAFETY: forwarded caller contract.
    unsafe { check_datarep(datarep, func)? };
    let n = count_arg(incount, func, "incount")?;
    let t = committed_type(datatype, func)?;
    let bytes = external32::size(&t, n).ok_or_else(|| overflow(func, incount))?;
    let end = position
        .checked_add(bytes)
        .filter(|&e| e as i128 <= outsize as i128)
        .ok_or_else(|| {
            err(
                ErrorClass::Truncate,
                format!(
                    "{func}(outsize={outsize}): {bytes} bytes do not fit at position {position}"
                ),
            )
        })?;
    if bytes > 0 {
        typed_buf(inbuf, &t, func, "inbuf")?;
        non_null(outbuf, func, "outbuf")?;
        // SAFETY: the caller passes the instances at inbuf and outsize bytes at outbuf.
        unsafe {
            let out = std::slice::from_raw_parts_mut((outbuf as *mut u8).add(position), bytes);
            external32::pack(&t, inbuf as usize, n, out);
        }
    }
    Ok(end)
}

#[allow(clippy::too_many_arguments)]
unsafe fn unpack_external_bytes(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: i64,
    position: usize,
    outbuf: *mut c_void,
    outcount: i64,
    datatype: MPI_Datatype,
    func: &str,
) -> MpiResult<usize> {
    // SAFETY: forwarded caller contract.
    unsafe { check_datarep(datarep, func)? };
    let n = count_arg(outcount, func, "outcount")?;
    let t = committed_type(datatype, func)?;
    let bytes = external32::size(&t, n).ok_or_else(|| overflow(func, outcount))?;
    let end = position
        .checked_add(bytes)
        .filter(|&e| e as i128 <= insize as i128)
        .ok_or_else(|| {
            err(
                ErrorClass::Truncate,
                format!(
                    "{func}(insize={insize}): {bytes} bytes are not there at position {position}"
                ),
            )
        })?;
    if bytes > 0 {
        non_null(inbuf, func, "inbuf")?;
        typed_buf(outbuf as *const c_void, &t, func, "outbuf")?;
        // SAFETY: the caller passes insize bytes at inbuf and the instances at outbuf.
        unsafe {
            let src = std::slice::from_raw_parts((inbuf as *const u8).add(position), bytes);
            external32::unpack(&t, outbuf as usize, n, src);
        }
    }
    Ok(end)
}

/// Move the stream position to `end`.
///
/// # Safety
/// `position` writable (read by `read_position` before).
unsafe fn advance<T: Int>(position: *mut T, end: usize) {
    // SAFETY: per the contract; the end fits where the size it is bounded by fitted.
    unsafe { position.write(T::or_undefined(end as i64)) };
}

/// `MPI_Pack` and its `_c` twin.
///
/// # Safety
/// The buffers hold what the counts say; `position` null or readable and writable.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn pack<C: Int>(
    inbuf: *const c_void,
    incount: C,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: C,
    position: *mut C,
    comm: MPI_Comm,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        let p = read_position(position, func)?;
        let (n, size) = (incount.get(), outsize.get());
        let end = pack_bytes(inbuf, n, datatype, outbuf, size, p, Some(comm), func)?;
        advance(position, end);
    }
    Ok(())
}

/// `MPI_Unpack` and its `_c` twin.
///
/// # Safety
/// The buffers hold what the counts say; `position` null or readable and writable.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn unpack<C: Int>(
    inbuf: *const c_void,
    insize: C,
    position: *mut C,
    outbuf: *mut c_void,
    outcount: C,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        let p = read_position(position, func)?;
        let (size, n) = (insize.get(), outcount.get());
        let end = unpack_bytes(inbuf, size, p, outbuf, n, datatype, Some(comm), func)?;
        advance(position, end);
    }
    Ok(())
}

/// `MPI_Pack_size` and its `_c` twin (`MPI_UNDEFINED` when the size does not fit).
///
/// # Safety
/// `size` null or writable.
pub(crate) unsafe fn pack_size<C: Int>(
    incount: C,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
    size: *mut C,
    func: &str,
) -> MpiResult<()> {
    let n = packed_size(incount.get(), datatype, comm, func)?;
    // SAFETY: checked by write.
    unsafe { write(size, C::or_undefined(n as i64), func, "size") }
}

/// `MPI_Pack_external_size` and its `_c` twin.
///
/// # Safety
/// `datarep` null or a C string; `size` null or writable.
pub(crate) unsafe fn pack_external_size<C: Int, D: Int>(
    datarep: *const c_char,
    incount: C,
    datatype: MPI_Datatype,
    size: *mut D,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { check_datarep(datarep, func)? };
    let n = external_size(incount.get(), datatype, func)?;
    // SAFETY: checked by write.
    unsafe { write(size, D::or_undefined(n as i64), func, "size") }
}

/// `MPI_Pack_external` and its `_c` twin.
///
/// # Safety
/// The buffers hold what the counts say; `position` null or readable and writable.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn pack_external<C: Int, D: Int>(
    datarep: *const c_char,
    inbuf: *const c_void,
    incount: C,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: D,
    position: *mut D,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        let p = read_position(position, func)?;
        let (n, size) = (incount.get(), outsize.get());
        let end = pack_external_bytes(datarep, inbuf, n, datatype, outbuf, size, p, func)?;
        advance(position, end);
    }
    Ok(())
}

/// `MPI_Unpack_external` and its `_c` twin.
///
/// # Safety
/// The buffers hold what the counts say; `position` null or readable and writable.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn unpack_external<C: Int, D: Int>(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: D,
    position: *mut D,
    outbuf: *mut c_void,
    outcount: C,
    datatype: MPI_Datatype,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        let p = read_position(position, func)?;
        let (size, n) = (insize.get(), outcount.get());
        let end = unpack_external_bytes(datarep, inbuf, size, p, outbuf, n, datatype, func)?;
        advance(position, end);
    }
    Ok(())
}
