//! `MPI_Pack`, `MPI_Unpack`, `MPI_Pack_size` (native representation: the packed stream is
//! the type's data bytes in typemap order, no header) and the "external32" forms.

use std::ffi::{c_char, c_void};

use weft_core::datatype::{external32, Buf, Type};
use weft_core::error::{MpiError, MpiResult};
use weft_core::mpi_err;

use crate::api::datatype::{committed_type, count_arg};
use crate::args::{c_str, non_null, write, Int};
use crate::ctypes::*;
use crate::objects;

fn overflow(func: &str, count: i64) -> MpiError {
    mpi_err!(Count, "{func}(count={count}): the packed size overflows")
}

/// Read `*position` (non-negative).
///
/// # Safety
/// `position` null or readable.
unsafe fn read_position<T: Int>(position: *const T, func: &str) -> MpiResult<usize> {
    non_null(position, func, "position")?;
    // SAFETY: checked non-null; readable per the caller.
    let p = unsafe { *position }.get();
    usize::try_from(p).map_err(|_| mpi_err!(Arg, "{func}(*position={p}): must not be negative"))
}

/// The typed side of a pack or unpack: a derived type may address absolute memory, so
/// `MPI_BOTTOM` (null) is a valid buffer for it; a predefined type needs a real pointer.
fn typed_buf(buf: *const c_void, t: &Type, func: &str, arg: &str) -> MpiResult<()> {
    if t.predefined.is_some() {
        non_null(buf, func, arg)?;
    }
    Ok(())
}

/// The representation of a packed stream.
#[derive(Clone, Copy)]
enum Rep {
    /// The type's data bytes in typemap order (`MPI_Pack`).
    Native,
    /// "external32" (`MPI_Pack_external`).
    External32,
}

impl Rep {
    fn size(self, t: &Type, n: usize) -> Option<usize> {
        match self {
            Rep::Native => t.bytes_for(n),
            Rep::External32 => external32::size(t, n),
        }
    }
}

/// One side of a pack or unpack: `count` elements of `datatype` (the typed buffer), and the
/// stream buffer of `size` bytes with the stream position.
struct Side {
    count: i64,
    datatype: MPI_Datatype,
    size: i64,
    position: usize,
}

/// Check a pack (`packing`) or unpack and return (type, element count, bytes, end position).
fn plan(
    rep: Rep,
    side: &Side,
    packing: bool,
    func: &str,
) -> MpiResult<(std::sync::Arc<Type>, usize, usize, usize)> {
    let (count_name, size_name) = if packing {
        ("incount", "outsize")
    } else {
        ("outcount", "insize")
    };
    let n = count_arg(side.count, func, count_name)?;
    let t = committed_type(side.datatype, func)?;
    let bytes = rep.size(&t, n).ok_or_else(|| overflow(func, side.count))?;
    let size = usize::try_from(side.size).map_err(|_| {
        mpi_err!(
            Arg,
            "{func}({size_name}={}): must not be negative",
            side.size
        )
    })?;
    let position = side.position;
    let end = position
        .checked_add(bytes)
        .filter(|&e| e <= size)
        .ok_or_else(|| {
            let what = if packing {
                "do not fit"
            } else {
                "are not there"
            };
            mpi_err!(
                Truncate,
                "{func}({size_name}={size}): {bytes} bytes {what} at position {position}"
            )
        })?;
    Ok((t, n, bytes, end))
}

/// With `packing`, pack `side.count` elements at `inbuf` into `outbuf` at the position, else
/// unpack from `inbuf` at the position into `side.count` elements at `outbuf`; returns the end.
///
/// # Safety
/// The packed side holds `side.size` bytes, the other the elements.
unsafe fn move_bytes(
    rep: Rep,
    inbuf: *const c_void,
    outbuf: *mut c_void,
    side: Side,
    packing: bool,
    func: &str,
) -> MpiResult<usize> {
    let (t, n, bytes, end) = plan(rep, &side, packing, func)?;
    if bytes == 0 {
        return Ok(end);
    }
    let (elements, packed) = if packing {
        typed_buf(inbuf, &t, func, "inbuf")?;
        non_null(outbuf, func, "outbuf")?;
        (inbuf as usize, outbuf as usize)
    } else {
        non_null(inbuf, func, "inbuf")?;
        typed_buf(outbuf as *const c_void, &t, func, "outbuf")?;
        (outbuf as usize, inbuf as usize)
    };
    // The caller passes the elements and `size` packed bytes, of which [position, end) is
    // checked in range.
    // SAFETY: the type is held by `t` for the duration.
    unsafe {
        let at = (packed as *mut u8).add(side.position);
        match (rep, packing) {
            (Rep::Native, true) => {
                let out = std::slice::from_raw_parts_mut(at, bytes);
                Buf::typed(elements, n, &t).pack(0, out)
            }
            (Rep::Native, false) => {
                let src = std::slice::from_raw_parts(at, bytes);
                Buf::typed(elements, n, &t).unpack(0, src)
            }
            (Rep::External32, true) => {
                let out = std::slice::from_raw_parts_mut(at, bytes);
                external32::pack(&t, elements, n, out)
            }
            (Rep::External32, false) => {
                let src = std::slice::from_raw_parts(at, bytes);
                external32::unpack(&t, elements, n, src)
            }
        }
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
        return Err(mpi_err!(
            UnsupportedDatarep,
            "{func}(datarep=\"{d}\"): only \"external32\" is supported"
        ));
    }
    Ok(())
}

fn external_size(incount: i64, datatype: MPI_Datatype, func: &str) -> MpiResult<usize> {
    let n = count_arg(incount, func, "incount")?;
    let t = crate::datatypes::type_of(datatype, func, "datatype")?;
    external32::size(&t, n).ok_or_else(|| overflow(func, incount))
}

/// Run a pack or unpack `step` from the stream position at `position` (`count` elements of
/// `datatype`, a stream of `size` bytes) and store the position where it ended.
///
/// # Safety
/// `position` null or readable and writable.
unsafe fn at_position<T: Int>(
    position: *mut T,
    count: i64,
    datatype: MPI_Datatype,
    size: T,
    func: &str,
    step: impl FnOnce(Side) -> MpiResult<usize>,
) -> MpiResult<()> {
    // SAFETY: the caller's contract.
    let p = unsafe { read_position(position, func)? };
    let side = Side {
        count,
        datatype,
        size: size.get(),
        position: p,
    };
    let end = step(side)?;
    // SAFETY: the caller's contract.
    unsafe { advance(position, end) };
    Ok(())
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
    objects::comm(comm, func, "comm")?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let step = |side| unsafe { move_bytes(Rep::Native, inbuf, outbuf, side, true, func) };
    // SAFETY: forwarded caller contract on `position`.
    unsafe { at_position(position, incount.get(), datatype, outsize, func, step) }
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
    objects::comm(comm, func, "comm")?;
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let step = |side| unsafe { move_bytes(Rep::Native, inbuf, outbuf, side, false, func) };
    // SAFETY: forwarded caller contract on `position`.
    unsafe { at_position(position, outcount.get(), datatype, insize, func, step) }
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
    // SAFETY: forwarded caller contract (a C string or null).
    unsafe { check_datarep(datarep, func)? };
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let step = |side| unsafe { move_bytes(Rep::External32, inbuf, outbuf, side, true, func) };
    // SAFETY: forwarded caller contract on `position`.
    unsafe { at_position(position, incount.get(), datatype, outsize, func, step) }
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
    // SAFETY: forwarded caller contract (a C string or null).
    unsafe { check_datarep(datarep, func)? };
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    let step = |side| unsafe { move_bytes(Rep::External32, inbuf, outbuf, side, false, func) };
    // SAFETY: forwarded caller contract on `position`.
    unsafe { at_position(position, outcount.get(), datatype, insize, func, step) }
}
