//! `MPI_Pack`, `MPI_Unpack`, `MPI_Pack_size` (native representation: the packed stream is
//! the type's data bytes in typemap order, no header) and the "external32" forms.

use std::ffi::{c_char, c_int, c_void};

use weft_core::datatype::{external32, Buf, Type};
use weft_core::error::{ErrorClass, MpiError, MpiResult};

use crate::api::datatype::{committed_type, count_arg};
use crate::args::{c_str, non_null, write};
use crate::constants::*;
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
unsafe fn read_position<T: Copy + Into<i64>>(position: *const T, func: &str) -> MpiResult<usize> {
    non_null(position, func, "position")?;
    // SAFETY: checked non-null; readable per the caller.
    let p: i64 = unsafe { *position }.into();
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
unsafe fn pack(
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
unsafe fn unpack(
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

pub(crate) unsafe fn mpi_pack(
    inbuf: *const c_void,
    incount: c_int,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: c_int,
    position: *mut c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let f = "MPI_Pack";
    // SAFETY: forwarded caller contract.
    unsafe {
        let p = read_position(position, f)?;
        let end = pack(
            inbuf,
            incount.into(),
            datatype,
            outbuf,
            outsize.into(),
            p,
            Some(comm),
            f,
        )?;
        *position = end as c_int;
    }
    Ok(())
}

pub(crate) unsafe fn mpi_pack_c(
    inbuf: *const c_void,
    incount: MPI_Count,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: MPI_Count,
    position: *mut MPI_Count,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let f = "MPI_Pack_c";
    // SAFETY: forwarded caller contract.
    unsafe {
        let p = read_position(position, f)?;
        let end = pack(inbuf, incount, datatype, outbuf, outsize, p, Some(comm), f)?;
        *position = end as MPI_Count;
    }
    Ok(())
}

pub(crate) unsafe fn mpi_unpack(
    inbuf: *const c_void,
    insize: c_int,
    position: *mut c_int,
    outbuf: *mut c_void,
    outcount: c_int,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let f = "MPI_Unpack";
    // SAFETY: forwarded caller contract.
    unsafe {
        let p = read_position(position, f)?;
        let end = unpack(
            inbuf,
            insize.into(),
            p,
            outbuf,
            outcount.into(),
            datatype,
            Some(comm),
            f,
        )?;
        *position = end as c_int;
    }
    Ok(())
}

pub(crate) unsafe fn mpi_unpack_c(
    inbuf: *const c_void,
    insize: MPI_Count,
    position: *mut MPI_Count,
    outbuf: *mut c_void,
    outcount: MPI_Count,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let f = "MPI_Unpack_c";
    // SAFETY: forwarded caller contract.
    unsafe {
        let p = read_position(position, f)?;
        let end = unpack(inbuf, insize, p, outbuf, outcount, datatype, Some(comm), f)?;
        *position = end as MPI_Count;
    }
    Ok(())
}

fn pack_size(incount: i64, datatype: MPI_Datatype, comm: MPI_Comm, func: &str) -> MpiResult<usize> {
    objects::comm(comm, func, "comm")?;
    let n = count_arg(incount, func, "incount")?;
    let t = crate::datatypes::type_of(datatype, func, "datatype")?;
    t.bytes_for(n).ok_or_else(|| overflow(func, incount))
}

pub(crate) unsafe fn mpi_pack_size(
    incount: c_int,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
    size: *mut c_int,
) -> MpiResult<()> {
    let f = "MPI_Pack_size";
    let n = pack_size(incount.into(), datatype, comm, f)?;
    // SAFETY: checked by write.
    unsafe { write(size, c_int::try_from(n).unwrap_or(MPI_UNDEFINED), f, "size") }
}

pub(crate) unsafe fn mpi_pack_size_c(
    incount: MPI_Count,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
    size: *mut MPI_Count,
) -> MpiResult<()> {
    let f = "MPI_Pack_size_c";
    let n = pack_size(incount, datatype, comm, f)?;
    // SAFETY: checked by write.
    unsafe { write(size, n as MPI_Count, f, "size") }
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

pub(crate) unsafe fn mpi_pack_external_size(
    datarep: *const c_char,
    incount: c_int,
    datatype: MPI_Datatype,
    size: *mut MPI_Aint,
) -> MpiResult<()> {
    let f = "MPI_Pack_external_size";
    // SAFETY: forwarded caller contract.
    unsafe { check_datarep(datarep, f)? };
    let n = external_size(incount.into(), datatype, f)?;
    // SAFETY: checked by write.
    unsafe { write(size, n as MPI_Aint, f, "size") }
}

pub(crate) unsafe fn mpi_pack_external_size_c(
    datarep: *const c_char,
    incount: MPI_Count,
    datatype: MPI_Datatype,
    size: *mut MPI_Count,
) -> MpiResult<()> {
    let f = "MPI_Pack_external_size_c";
    // SAFETY: forwarded caller contract.
    unsafe { check_datarep(datarep, f)? };
    let n = external_size(incount, datatype, f)?;
    // SAFETY: checked by write.
    unsafe { write(size, n as MPI_Count, f, "size") }
}

#[allow(clippy::too_many_arguments)]
unsafe fn pack_external(
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
unsafe fn unpack_external(
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

pub(crate) unsafe fn mpi_pack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    incount: c_int,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: MPI_Aint,
    position: *mut MPI_Aint,
) -> MpiResult<()> {
    let f = "MPI_Pack_external";
    // SAFETY: forwarded caller contract.
    unsafe {
        let p = read_position(position as *const i64, f)?;
        let end = pack_external(
            datarep,
            inbuf,
            incount.into(),
            datatype,
            outbuf,
            outsize as i64,
            p,
            f,
        )?;
        *position = end as MPI_Aint;
    }
    Ok(())
}

pub(crate) unsafe fn mpi_pack_external_c(
    datarep: *const c_char,
    inbuf: *const c_void,
    incount: MPI_Count,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: MPI_Count,
    position: *mut MPI_Count,
) -> MpiResult<()> {
    let f = "MPI_Pack_external_c";
    // SAFETY: forwarded caller contract.
    unsafe {
        let p = read_position(position, f)?;
        let end = pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, p, f)?;
        *position = end as MPI_Count;
    }
    Ok(())
}

pub(crate) unsafe fn mpi_unpack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: MPI_Aint,
    position: *mut MPI_Aint,
    outbuf: *mut c_void,
    outcount: c_int,
    datatype: MPI_Datatype,
) -> MpiResult<()> {
    let f = "MPI_Unpack_external";
    // SAFETY: forwarded caller contract.
    unsafe {
        let p = read_position(position as *const i64, f)?;
        let end = unpack_external(
            datarep,
            inbuf,
            insize as i64,
            p,
            outbuf,
            outcount.into(),
            datatype,
            f,
        )?;
        *position = end as MPI_Aint;
    }
    Ok(())
}

pub(crate) unsafe fn mpi_unpack_external_c(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: MPI_Count,
    position: *mut MPI_Count,
    outbuf: *mut c_void,
    outcount: MPI_Count,
    datatype: MPI_Datatype,
) -> MpiResult<()> {
    let f = "MPI_Unpack_external_c";
    // SAFETY: forwarded caller contract.
    unsafe {
        let p = read_position(position, f)?;
        let end = unpack_external(datarep, inbuf, insize, p, outbuf, outcount, datatype, f)?;
        *position = end as MPI_Count;
    }
    Ok(())
}
