//! Buffered sends' buffers: `MPI_Buffer_attach`/`detach`/`flush`/`iflush` (the process's
//! buffer), the MPI 4.1 `MPI_Comm_` forms, and the copy of a buffered message into the
//! attached buffer (`buffered_send`, used by `MPI_Bsend`, `MPI_Ibsend`, `MPI_Start`).
//! Session buffers (`MPI_Session_attach_buffer`, ...) plug into `weft_core::pt2pt::buffered`
//! with the sessions issue.

use std::ffi::c_void;
use std::sync::Arc;

use weft_core::datatype::Buf;
use weft_core::error::MpiResult;
use weft_core::message::SendMode;
use weft_core::mpi_err;
use weft_core::object::Comm;
use weft_core::pt2pt;
use weft_core::pt2pt::buffered::{self, Scope, Space};
use weft_core::request::ReqId;

use crate::args::{non_null, Int};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;
use crate::requests::request_handle;

/// Copy a message into the buffer that applies to `comm` and send it from there; the
/// internal send's request (the buffer's record keeps it, see `Pool::commit`).
pub(crate) fn buffered_send(
    comm: &Arc<Comm>,
    comm_handle: MPI_Comm,
    dest: u32,
    tag: i32,
    buf: &Buf,
    func: &str,
) -> MpiResult<ReqId> {
    let inst = &comm.session.instance;
    let pool = buffered::pool_for(comm, func)?;
    let mut p = buffered::lock(&pool);
    let len = buf.len();
    let mut space = p.reserve(inst, len, func)?;
    let addr = match (&mut space, p.region) {
        (Space::Offset(o), Some((base, _))) => base + *o,
        (Space::Heap(h), _) => h.as_mut_ptr() as usize,
        (Space::Offset(_), None) => unreachable!("offsets come from a user region"),
    };
    // The user promised the attached buffer stays valid until detached, and detach waits for this
    // send.
    // SAFETY: `addr..addr+len` is free attached space or a heap block kept with the send's record.
    let copy = unsafe { Buf::new(addr, len) };
    buf.copy_to(&copy, len);
    let id = pt2pt::isend(comm, dest, tag, copy, SendMode::Standard, comm_handle)?;
    p.commit(space, len, id);
    Ok(id)
}

fn region(buffer: *mut c_void, size: MPI_Count, func: &str) -> MpiResult<Option<(usize, usize)>> {
    if buffer as usize == MPI_BUFFER_AUTOMATIC {
        return Ok(None);
    }
    if size < 0 {
        return Err(mpi_err!(Arg, "{func}(size={size}): negative size"));
    }
    if buffer.is_null() && size > 0 {
        return Err(mpi_err!(
            Buffer,
            "{func}(buffer=NULL): a buffer is required for size {size}"
        ));
    }
    Ok(Some((buffer as usize, size as usize)))
}

fn attach(scope: Scope, buffer: *mut c_void, size: MPI_Count, func: &str) -> MpiResult<()> {
    let r = region(buffer, size, func)?;
    buffered::attach(&scope, r, func)
}

/// Detach and report the buffer: `*buffer_addr` (a `void**` in C) gets its address.
unsafe fn detach<T: Int>(
    scope: Scope,
    buffer_addr: *mut c_void,
    size: *mut T,
    func: &str,
) -> MpiResult<()> {
    non_null(buffer_addr, func, "buffer_addr")?;
    non_null(size, func, "size")?;
    let inst = crate::objects::instance(func)?;
    let r = buffered::detach(&inst, &scope, func)?;
    let (addr, len) = r.unwrap_or((MPI_BUFFER_AUTOMATIC, 0));
    let len = T::of(len as i64).ok_or_else(|| {
        mpi_err!(
            ValueTooLarge,
            "{func}: the buffer size {len} does not fit in an int; use the _c form"
        )
    })?;
    // SAFETY: checked non-null; the standard passes a `void**` as `void*` here.
    unsafe {
        buffer_addr.cast::<usize>().write(addr);
        size.write(len);
    }
    Ok(())
}

/// The object whose buffer an `MPI_Comm_*_buffer` or `MPI_Session_*_buffer` call names:
/// `api/gen.py` passes it, so that one implementation of each call serves both objects
/// (and the `_c` twins).
#[derive(Clone, Copy)]
pub(crate) enum Holder {
    Comm,
    Session,
}

impl Holder {
    /// The buffer scope of the object `handle` names (checked).
    fn scope(self, handle: usize, func: &str) -> MpiResult<Scope> {
        Ok(match self {
            Holder::Comm => Scope::Comm(objects::comm(handle, func, "comm")?),
            Holder::Session => Scope::Session(objects::session(handle, func, "session")?),
        })
    }

    /// The owner an iflush request records: the communicator, none for a session.
    fn request_owner(self, handle: usize) -> usize {
        match self {
            Holder::Comm => handle,
            Holder::Session => 0,
        }
    }
}

/// `MPI_Buffer_attach` and its `_c` twin.
pub(crate) fn buffer_attach<C: Int>(buffer: *mut c_void, size: C, func: &str) -> MpiResult<()> {
    attach(Scope::Process, buffer, size.get(), func)
}

/// `MPI_Buffer_detach` and its `_c` twin.
///
/// # Safety
/// `buffer_addr` (a `void**`) and `size` null or writable.
pub(crate) unsafe fn buffer_detach<C: Int>(
    buffer_addr: *mut c_void,
    size: *mut C,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { detach(Scope::Process, buffer_addr, size, func) }
}

/// `MPI_Comm_attach_buffer`, `MPI_Session_attach_buffer` and their `_c` twins.
pub(crate) fn holder_attach<C: Int>(
    handle: usize,
    buffer: *mut c_void,
    size: C,
    holder: Holder,
    func: &str,
) -> MpiResult<()> {
    attach(holder.scope(handle, func)?, buffer, size.get(), func)
}

/// `MPI_Comm_detach_buffer`, `MPI_Session_detach_buffer` and their `_c` twins.
///
/// # Safety
/// `buffer_addr` (a `void**`) and `size` null or writable.
pub(crate) unsafe fn holder_detach<C: Int>(
    handle: usize,
    buffer_addr: *mut c_void,
    size: *mut C,
    holder: Holder,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { detach(holder.scope(handle, func)?, buffer_addr, size, func) }
}

pub(crate) fn mpi_buffer_flush() -> MpiResult<()> {
    let f = "MPI_Buffer_flush";
    let inst = crate::objects::instance(f)?;
    buffered::flush(&inst, &Scope::Process, f)
}

/// `MPI_Comm_flush_buffer` and `MPI_Session_flush_buffer`.
pub(crate) fn holder_flush(handle: usize, holder: Holder, func: &str) -> MpiResult<()> {
    let scope = holder.scope(handle, func)?;
    let inst = crate::objects::instance(func)?;
    buffered::flush(&inst, &scope, func)
}

unsafe fn iflush(
    scope: Scope,
    owner: usize,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    non_null(request, func, "request")?;
    let inst = crate::objects::instance(func)?;
    let id = buffered::iflush(&inst, &scope, owner, func)?;
    // SAFETY: checked non-null.
    unsafe { request.write(request_handle(id)) };
    Ok(())
}

pub(crate) unsafe fn mpi_buffer_iflush(request: *mut MPI_Request) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { iflush(Scope::Process, 0, request, "MPI_Buffer_iflush") }
}

/// `MPI_Comm_iflush_buffer` and `MPI_Session_iflush_buffer`.
///
/// # Safety
/// `request` null or writable.
pub(crate) unsafe fn holder_iflush(
    handle: usize,
    request: *mut MPI_Request,
    holder: Holder,
    func: &str,
) -> MpiResult<()> {
    let scope = holder.scope(handle, func)?;
    // SAFETY: forwarded caller contract.
    unsafe { iflush(scope, holder.request_owner(handle), request, func) }
}
