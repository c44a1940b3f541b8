//! Every read and write: explicit offsets (`_at`), the individual file pointer, the shared
//! file pointer (`_shared`, `_ordered`); blocking, nonblocking (`I`), collective (`_all`),
//! split collective (`_begin`/`_end`); each with its `_c` twin (count type `I`).
//!
//! The 62 entry points are mechanical: api/gen.py reads the form of each from its name
//! (`file_access_call`) and calls one of the five functions here with a [`Form`].

use std::ffi::c_void;
use std::sync::Arc;

use weft_core::datatype::external32::TypedMem;
use weft_core::datatype::Buf;
use weft_core::error::MpiResult;
use weft_core::io::datarep::{MemData, Rep};
use weft_core::io::{self as core_io, Conv, File, Mem, Pointer};
use weft_core::mpi_err;

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
        return Err(mpi_err!(Count, "{func}(count={n}): negative count"));
    }
    let t = datatypes::committed(datatype, func, "datatype")?;
    let bytes = usize::try_from(n)
        .ok()
        .and_then(|c| t.bytes_for(c))
        .ok_or_else(|| mpi_err!(Count, "{func}(count={n}): the access size overflows"))?;
    if buf.is_null() && bytes > 0 && t.predefined.is_some() {
        return Err(mpi_err!(
            Buffer,
            "{func}(buf=NULL): a buffer is required for count {n}"
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

/// Which position an access starts at.
#[derive(Clone, Copy)]
pub(crate) enum Ptr {
    /// An explicit offset (`_at` forms), in etypes.
    At(MPI_Offset),
    /// The individual file pointer.
    Individual,
    /// The shared file pointer (`_shared`).
    Shared,
    /// The shared file pointer in rank order (`_ordered`, collective).
    Ordered,
}

/// What an access does, read from its name by the generator.
#[derive(Clone, Copy)]
pub(crate) struct Form {
    pub write: bool,
    /// A collective form (`_all`); `_ordered` is collective by its pointer.
    pub collective: bool,
    pub ptr: Ptr,
}

fn pointer(ptr: Ptr, func: &str) -> MpiResult<Pointer> {
    Ok(match ptr {
        Ptr::At(o) => Pointer::At(offset_arg(o, func, "offset")?),
        Ptr::Shared | Ptr::Ordered => Pointer::Shared,
        Ptr::Individual => Pointer::Individual,
    })
}

/// A blocking access (`MPI_File_read`, `_write_at_all`, `_read_ordered`, ...).
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `status` is `MPI_STATUS_IGNORE` or writable.
pub(crate) unsafe fn blocking<I: Int>(
    fh: MPI_File,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
    form: Form,
    func: &str,
) -> MpiResult<()> {
    let f: Arc<File> = file(fh, func)?;
    let ptr = pointer(form.ptr, func)?;
    // SAFETY: forwarded caller contract.
    let mem = unsafe { mem_of(&f, buf, count, datatype, func)? };
    let st = match form.ptr {
        Ptr::Ordered => core_io::ordered(&f, mem, form.write, func)?,
        _ => core_io::access(&f, ptr, mem, form.write, form.collective, func)?,
    };
    // SAFETY: the caller passes MPI_STATUS_IGNORE (null) or a writable status.
    unsafe { status::store(status, &st, false) };
    Ok(())
}

/// A nonblocking access (`MPI_File_iread`, `_iwrite_at_all`, ...).
///
/// # Safety
/// `buf` holds `count` elements of `datatype`, left alone until the request completes;
/// `request` is writable.
pub(crate) unsafe fn nonblocking<I: Int>(
    fh: MPI_File,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
    form: Form,
    func: &str,
) -> MpiResult<()> {
    let f = file(fh, func)?;
    non_null(request, func, "request")?;
    let ptr = pointer(form.ptr, func)?;
    // SAFETY: forwarded caller contract (the buffer stays valid until the request completes).
    let mem = unsafe { mem_of(&f, buf, count, datatype, func)? };
    let id = core_io::iaccess(&f, ptr, mem, form.write, form.collective, fh, func)?;
    // SAFETY: checked non-null.
    unsafe { request.write(request_handle(id)) };
    Ok(())
}

/// The `_begin` of a split collective.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`, left alone until the `_end`.
pub(crate) unsafe fn begin<I: Int>(
    fh: MPI_File,
    buf: *const c_void,
    count: I,
    datatype: MPI_Datatype,
    form: Form,
    func: &str,
) -> MpiResult<()> {
    let f = file(fh, func)?;
    let ptr = match form.ptr {
        Ptr::Ordered => None,
        p => Some(pointer(p, func)?),
    };
    // SAFETY: forwarded caller contract (the buffer stays untouched until `_end`).
    let mem = unsafe { mem_of(&f, buf, count, datatype, func)? };
    core_io::split_begin(&f, ptr, mem, form.write, func)
}

/// The `_end` of a split collective (the buffer was given at `_begin`; of `form.ptr` only its
/// kind matters).
///
/// # Safety
/// `status` is `MPI_STATUS_IGNORE` or writable.
pub(crate) unsafe fn end(
    fh: MPI_File,
    status: *mut MPI_Status,
    form: Form,
    func: &str,
) -> MpiResult<()> {
    let f = file(fh, func)?;
    let ordered = matches!(form.ptr, Ptr::Ordered);
    let explicit = matches!(form.ptr, Ptr::At(_));
    let st = core_io::split_end(&f, form.write, ordered, explicit, func)?;
    // SAFETY: as in `blocking`.
    unsafe { status::store(status, &st, false) };
    Ok(())
}
