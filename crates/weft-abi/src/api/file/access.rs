//! Every read and write: explicit offsets (`_at`), the individual file pointer, the shared
//! file pointer (`_shared`, `_ordered`); blocking, nonblocking (`I`), collective (`_all`),
//! split collective (`_begin`/`_end`); each with its `_c` twin (count type `I`).

use std::ffi::c_void;
use std::sync::Arc;

use weft_core::datatype::external32::TypedMem;
use weft_core::datatype::Buf;
use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::io::datarep::{MemData, Rep};
use weft_core::io::{self as core_io, Conv, File, Mem, Pointer};

use super::offset_arg;
use crate::args::{non_null, Int};
use crate::ctypes::*;
use crate::datatypes;
use crate::file_object::file;
use crate::requests::request_handle;
use crate::status;

/// The memory of an access: `count` elements of `datatype` at `buf`, with the conversion
/// the file's representation needs.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`, left alone until the access completes.
unsafe fn mem_of<I: Int>(
    f: &File,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    func: &str,
) -> MpiResult<Mem> {
    let n = count.get();
    if n < 0 {
        return Err(MpiError::new(
            ErrorClass::Count,
            format!("{func}(count={n}): negative count"),
        ));
    }
    let t = datatypes::committed(datatype, func, "datatype")?;
    let bytes = usize::try_from(n)
        .ok()
        .and_then(|c| t.bytes_for(c))
        .ok_or_else(|| {
            MpiError::new(
                ErrorClass::Count,
                format!("{func}(count={n}): the access size overflows"),
            )
        })?;
    if buf.is_null() && bytes > 0 && t.predefined.is_some() {
        return Err(MpiError::new(
            ErrorClass::Buffer,
            format!("{func}(buf=NULL): a buffer is required for count {n}"),
        ));
    }
    // SAFETY: the caller's contract; `Mem` holds the type for as long as it uses the Buf.
    let b = unsafe { Buf::typed(buf as usize, n as usize, &t) };
    let rep = f.view().rep.clone();
    let conv = match &rep {
        Rep::Native | Rep::Internal => Conv::None,
        Rep::User(u) if !u.converts() => Conv::None,
        Rep::External32 => {
            // SAFETY: as above: the elements stay valid user memory during the access.
            Conv::External32(unsafe { TypedMem::new(buf as usize, n as usize, t.clone()) })
        }
        Rep::User(u) => Conv::User(
            u.clone(),
            MemData {
                addr: buf as usize,
                count: n as u64,
                handle: datatype,
            },
        ),
    };
    Mem::new(b, t, n as u64, conv, &rep)
}

fn pointer(offset: Option<MPI_Offset>, shared: bool, func: &str) -> MpiResult<Pointer> {
    Ok(match offset {
        Some(o) => Pointer::At(offset_arg(o, func, "offset")?),
        None if shared => Pointer::Shared,
        None => Pointer::Individual,
    })
}

/// A blocking access; `offset` for the explicit-offset forms.
#[allow(clippy::too_many_arguments)]
unsafe fn blocking<I: Int>(
    fh: MPI_File,
    offset: Option<MPI_Offset>,
    shared: bool,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    out: *mut MPI_Status,
    write: bool,
    collective: bool,
    func: &str,
) -> MpiResult<()> {
    let f: Arc<File> = file(fh, func)?;
    let ptr = pointer(offset, shared, func)?;
    // SAFETY: forwarded caller contract.
    let mem = unsafe { mem_of(&f, buf, count, datatype, func)? };
    let st = core_io::access(&f, ptr, mem, write, collective, func)?;
    // SAFETY: the caller passes MPI_STATUS_IGNORE (null) or a writable status.
    unsafe { status::store(out, &st, false) };
    Ok(())
}

/// A nonblocking access.
#[allow(clippy::too_many_arguments)]
unsafe fn nonblocking<I: Int>(
    fh: MPI_File,
    offset: Option<MPI_Offset>,
    shared: bool,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
    write: bool,
    collective: bool,
    func: &str,
) -> MpiResult<()> {
    let f = file(fh, func)?;
    non_null(request, func, "request")?;
    let ptr = pointer(offset, shared, func)?;
    // SAFETY: forwarded caller contract (the buffer stays valid until the request completes).
    let mem = unsafe { mem_of(&f, buf, count, datatype, func)? };
    let id = core_io::iaccess(&f, ptr, mem, write, collective, fh, func)?;
    // SAFETY: checked non-null.
    unsafe { request.write(request_handle(id)) };
    Ok(())
}

/// `MPI_File_read_ordered`/`write_ordered`.
unsafe fn ordered<I: Int>(
    fh: MPI_File,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    out: *mut MPI_Status,
    write: bool,
    func: &str,
) -> MpiResult<()> {
    let f = file(fh, func)?;
    // SAFETY: forwarded caller contract.
    let mem = unsafe { mem_of(&f, buf, count, datatype, func)? };
    let st = core_io::ordered(&f, mem, write, func)?;
    // SAFETY: as in `blocking`.
    unsafe { status::store(out, &st, false) };
    Ok(())
}

/// The `_begin` of a split collective (`ordered`: the shared pointer in rank order).
#[allow(clippy::too_many_arguments)]
unsafe fn begin<I: Int>(
    fh: MPI_File,
    offset: Option<MPI_Offset>,
    ordered: bool,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    write: bool,
    func: &str,
) -> MpiResult<()> {
    let f = file(fh, func)?;
    let ptr = if ordered {
        None
    } else {
        Some(pointer(offset, false, func)?)
    };
    // SAFETY: forwarded caller contract (the buffer stays untouched until `_end`).
    let mem = unsafe { mem_of(&f, buf, count, datatype, func)? };
    core_io::split_begin(&f, ptr, mem, write, func)
}

/// The `_end` of a split collective.
unsafe fn end(
    fh: MPI_File,
    out: *mut MPI_Status,
    write: bool,
    ordered: bool,
    explicit: bool,
    func: &str,
) -> MpiResult<()> {
    let f = file(fh, func)?;
    let st = core_io::split_end(&f, write, ordered, explicit, func)?;
    // SAFETY: as in `blocking`.
    unsafe { status::store(out, &st, false) };
    Ok(())
}

// ------------------------------------------------------------------ explicit offsets

pub(crate) unsafe fn file_read_at<I: Int>(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *mut c_void,
    count: I,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        blocking(
            fh,
            Some(offset),
            false,
            buf,
            count,
            datatype,
            status,
            false,
            false,
            func,
        )
    }
}

pub(crate) unsafe fn file_read_at_all<I: Int>(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *mut c_void,
    count: I,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        blocking(
            fh,
            Some(offset),
            false,
            buf,
            count,
            datatype,
            status,
            false,
            true,
            func,
        )
    }
}

pub(crate) unsafe fn file_write_at<I: Int>(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        blocking(
            fh,
            Some(offset),
            false,
            buf,
            count,
            datatype,
            status,
            true,
            false,
            func,
        )
    }
}

pub(crate) unsafe fn file_write_at_all<I: Int>(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        blocking(
            fh,
            Some(offset),
            false,
            buf,
            count,
            datatype,
            status,
            true,
            true,
            func,
        )
    }
}

pub(crate) unsafe fn file_iread_at<I: Int>(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *mut c_void,
    count: I,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking(
            fh,
            Some(offset),
            false,
            buf,
            count,
            datatype,
            request,
            false,
            false,
            func,
        )
    }
}

pub(crate) unsafe fn file_iread_at_all<I: Int>(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *mut c_void,
    count: I,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking(
            fh,
            Some(offset),
            false,
            buf,
            count,
            datatype,
            request,
            false,
            true,
            func,
        )
    }
}

pub(crate) unsafe fn file_iwrite_at<I: Int>(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking(
            fh,
            Some(offset),
            false,
            buf,
            count,
            datatype,
            request,
            true,
            false,
            func,
        )
    }
}

pub(crate) unsafe fn file_iwrite_at_all<I: Int>(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking(
            fh,
            Some(offset),
            false,
            buf,
            count,
            datatype,
            request,
            true,
            true,
            func,
        )
    }
}

pub(crate) unsafe fn file_read_at_all_begin<I: Int>(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *mut c_void,
    count: I,
    datatype: MPI_Datatype,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { begin(fh, Some(offset), false, buf, count, datatype, false, func) }
}

pub(crate) unsafe fn file_write_at_all_begin<I: Int>(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { begin(fh, Some(offset), false, buf, count, datatype, true, func) }
}

pub(crate) unsafe fn mpi_file_read_at_all_end(
    fh: MPI_File,
    _buf: *mut c_void,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { end(fh, status, false, false, true, "MPI_File_read_at_all_end") }
}

pub(crate) unsafe fn mpi_file_write_at_all_end(
    fh: MPI_File,
    _buf: *const c_void,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { end(fh, status, true, false, true, "MPI_File_write_at_all_end") }
}

// ------------------------------------------------------------------ individual pointer

pub(crate) unsafe fn file_read<I: Int>(
    fh: MPI_File,
    buf: *mut c_void,
    count: I,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        blocking(
            fh, None, false, buf, count, datatype, status, false, false, func,
        )
    }
}

pub(crate) unsafe fn file_read_all<I: Int>(
    fh: MPI_File,
    buf: *mut c_void,
    count: I,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        blocking(
            fh, None, false, buf, count, datatype, status, false, true, func,
        )
    }
}

pub(crate) unsafe fn file_write<I: Int>(
    fh: MPI_File,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        blocking(
            fh, None, false, buf, count, datatype, status, true, false, func,
        )
    }
}

pub(crate) unsafe fn file_write_all<I: Int>(
    fh: MPI_File,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        blocking(
            fh, None, false, buf, count, datatype, status, true, true, func,
        )
    }
}

pub(crate) unsafe fn file_iread<I: Int>(
    fh: MPI_File,
    buf: *mut c_void,
    count: I,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking(
            fh, None, false, buf, count, datatype, request, false, false, func,
        )
    }
}

pub(crate) unsafe fn file_iread_all<I: Int>(
    fh: MPI_File,
    buf: *mut c_void,
    count: I,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking(
            fh, None, false, buf, count, datatype, request, false, true, func,
        )
    }
}

pub(crate) unsafe fn file_iwrite<I: Int>(
    fh: MPI_File,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking(
            fh, None, false, buf, count, datatype, request, true, false, func,
        )
    }
}

pub(crate) unsafe fn file_iwrite_all<I: Int>(
    fh: MPI_File,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking(
            fh, None, false, buf, count, datatype, request, true, true, func,
        )
    }
}

pub(crate) unsafe fn file_read_all_begin<I: Int>(
    fh: MPI_File,
    buf: *mut c_void,
    count: I,
    datatype: MPI_Datatype,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { begin(fh, None, false, buf, count, datatype, false, func) }
}

pub(crate) unsafe fn file_write_all_begin<I: Int>(
    fh: MPI_File,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { begin(fh, None, false, buf, count, datatype, true, func) }
}

pub(crate) unsafe fn mpi_file_read_all_end(
    fh: MPI_File,
    _buf: *mut c_void,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { end(fh, status, false, false, false, "MPI_File_read_all_end") }
}

pub(crate) unsafe fn mpi_file_write_all_end(
    fh: MPI_File,
    _buf: *const c_void,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { end(fh, status, true, false, false, "MPI_File_write_all_end") }
}

// ------------------------------------------------------------------ shared pointer

pub(crate) unsafe fn file_read_shared<I: Int>(
    fh: MPI_File,
    buf: *mut c_void,
    count: I,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        blocking(
            fh, None, true, buf, count, datatype, status, false, false, func,
        )
    }
}

pub(crate) unsafe fn file_write_shared<I: Int>(
    fh: MPI_File,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        blocking(
            fh, None, true, buf, count, datatype, status, true, false, func,
        )
    }
}

pub(crate) unsafe fn file_iread_shared<I: Int>(
    fh: MPI_File,
    buf: *mut c_void,
    count: I,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking(
            fh, None, true, buf, count, datatype, request, false, false, func,
        )
    }
}

pub(crate) unsafe fn file_iwrite_shared<I: Int>(
    fh: MPI_File,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        nonblocking(
            fh, None, true, buf, count, datatype, request, true, false, func,
        )
    }
}

pub(crate) unsafe fn file_read_ordered<I: Int>(
    fh: MPI_File,
    buf: *mut c_void,
    count: I,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { ordered(fh, buf, count, datatype, status, false, func) }
}

pub(crate) unsafe fn file_write_ordered<I: Int>(
    fh: MPI_File,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { ordered(fh, buf, count, datatype, status, true, func) }
}

pub(crate) unsafe fn file_read_ordered_begin<I: Int>(
    fh: MPI_File,
    buf: *mut c_void,
    count: I,
    datatype: MPI_Datatype,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { begin(fh, None, true, buf, count, datatype, false, func) }
}

pub(crate) unsafe fn file_write_ordered_begin<I: Int>(
    fh: MPI_File,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { begin(fh, None, true, buf, count, datatype, true, func) }
}

pub(crate) unsafe fn mpi_file_read_ordered_end(
    fh: MPI_File,
    _buf: *mut c_void,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { end(fh, status, false, true, false, "MPI_File_read_ordered_end") }
}

pub(crate) unsafe fn mpi_file_write_ordered_end(
    fh: MPI_File,
    _buf: *const c_void,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { end(fh, status, true, true, false, "MPI_File_write_ordered_end") }
}
