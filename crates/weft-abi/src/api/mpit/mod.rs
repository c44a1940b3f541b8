//! The MPI tool information interface (MPI_T, MPI 4.1 chapter 15): initialization
//! (reference counted, independent of `MPI_Init` and sessions), the handles tools hold and
//! the conventions every MPI_T function shares. Errors are returned as MPI_T's classes and
//! never reach an errhandler (`boundary::tool_call`).
//!
//! `cvar.rs`: control variables and enumerations; `pvar.rs`: performance variables and
//! their sessions; `category.rs`: categories; `event.rs`: events and the event source.

pub(crate) mod category;
pub(crate) mod cvar;
pub(crate) mod event;
pub(crate) mod pvar;

use std::collections::HashMap;
use std::ffi::{c_char, c_int};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use weft_core::error::{MpiError, MpiResult};

use crate::args::text_bytes;
use crate::constants::*;

/// An MPI_T error: its class and a message naming the function and the argument.
pub(super) fn terr(code: c_int, message: impl Into<String>) -> MpiError {
    MpiError::with_code(code, message)
}

/// How many `MPI_T_init_thread` calls have no `MPI_T_finalize` yet.
static INITS: Mutex<usize> = Mutex::new(0);

fn inits() -> MutexGuard<'static, usize> {
    INITS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Fail with `MPI_T_ERR_NOT_INITIALIZED` unless MPI_T is initialized.
pub(super) fn check_init(func: &str) -> MpiResult<()> {
    if *inits() == 0 {
        return Err(terr(
            MPI_T_ERR_NOT_INITIALIZED,
            format!("{func}: MPI_T is not initialized (MPI_T_init_thread)"),
        ));
    }
    Ok(())
}

/// Fail with `MPI_T_ERR_INVALID` if `ptr` is null.
pub(super) fn need<T>(ptr: *const T, func: &str, arg: &str) -> MpiResult<()> {
    if ptr.is_null() {
        return Err(terr(
            MPI_T_ERR_INVALID,
            format!("{func}({arg}=NULL): a valid pointer is required"),
        ));
    }
    Ok(())
}

/// Store `value` through `ptr` when the caller asked for it (MPI_T lets most outputs be
/// NULL).
///
/// # Safety
/// `ptr` must be null or valid for writing a `T`.
pub(super) unsafe fn store<T>(ptr: *mut T, value: T) {
    if !ptr.is_null() {
        // SAFETY: non-null and, per the caller, valid for writes.
        unsafe { ptr.write(value) };
    }
}

/// Store `value` through `ptr`, which must not be null.
///
/// # Safety
/// `ptr` must be null or valid for writing a `T`.
pub(super) unsafe fn store_required<T>(
    ptr: *mut T,
    value: T,
    func: &str,
    arg: &str,
) -> MpiResult<()> {
    need(ptr, func, arg)?;
    // SAFETY: checked non-null; valid for writes per the caller.
    unsafe { ptr.write(value) };
    Ok(())
}

/// MPI_T's string outputs (MPI 4.1 §15.3.3): with `len` null nothing is returned; with
/// `buf` null or `*len` zero, `*len` becomes the length the whole text needs (its NUL
/// included); otherwise up to `*len - 1` bytes and a NUL are stored and `*len` becomes the
/// number stored, NUL included.
///
/// # Safety
/// `len` null or valid for an int; `buf` null or valid for `*len` bytes.
pub(super) unsafe fn out_str(text: &str, buf: *mut c_char, len: *mut c_int) {
    if len.is_null() {
        return;
    }
    let bytes = text_bytes(text);
    // SAFETY: non-null, valid per the caller.
    let room = unsafe { *len };
    if buf.is_null() || room <= 0 {
        // SAFETY: as above.
        unsafe { *len = bytes.len() as c_int + 1 };
        return;
    }
    let n = bytes.len().min(room as usize - 1);
    // SAFETY: buf is valid for `room` > n bytes per the caller.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), n);
        *buf.add(n) = 0;
        *len = n as c_int + 1;
    }
}

/// An index argument: in `0..n`, else `MPI_T_ERR_INVALID_INDEX`.
pub(super) fn index(i: c_int, n: usize, func: &str, arg: &str) -> MpiResult<usize> {
    if i < 0 || i as usize >= n {
        return Err(terr(
            MPI_T_ERR_INVALID_INDEX,
            format!("{func}({arg}={i}): no such index (there are {n})"),
        ));
    }
    Ok(i as usize)
}

/// A name to look up, or `MPI_T_ERR_INVALID` for a null pointer.
///
/// # Safety
/// `name` null or a NUL-terminated string.
pub(super) unsafe fn name_arg(name: *const c_char, func: &str) -> MpiResult<String> {
    need(name, func, "name")?;
    // SAFETY: non-null and NUL-terminated per the caller.
    Ok(unsafe { crate::args::c_str(name, func, "name") }?.into_owned())
}

/// `MPI_T_<kind>_get_index`: the index `find` gives the item called `name`, written to `out`
/// (argument `arg`); `what` names the kind of item in the error.
///
/// # Safety
/// `name` is NUL-terminated and `out` null or valid for a write (the standard's rules).
pub(super) unsafe fn index_by_name(
    name: *const c_char,
    out: *mut c_int,
    func: &str,
    arg: &str,
    what: &str,
    find: impl FnOnce(&str) -> Option<usize>,
) -> MpiResult<()> {
    check_init(func)?;
    // SAFETY: a NUL-terminated string per the standard.
    let name = unsafe { name_arg(name, func) }?;
    need(out, func, arg)?;
    let i = find(&name).ok_or_else(|| {
        terr(
            MPI_T_ERR_INVALID_NAME,
            format!("{func}(name={name:?}): no {what} has this name"),
        )
    })?;
    // SAFETY: checked non-null.
    unsafe { out.write(i as c_int) };
    Ok(())
}

/// Handles MPI_T gives out: never 0 (the null handles) or 1 (`MPI_T_PVAR_ALL_HANDLES`),
/// never reused in the life of the process, so a freed or made-up handle is recognised.
static NEXT_HANDLE: AtomicU64 = AtomicU64::new(0x1000);

pub(super) fn new_handle() -> usize {
    NEXT_HANDLE.fetch_add(16, Ordering::Relaxed) as usize
}

/// Live objects of one kind of MPI_T handle.
pub(super) struct Handles<T> {
    map: Mutex<Option<HashMap<usize, T>>>,
}

impl<T> Handles<T> {
    pub(super) const fn new() -> Handles<T> {
        Handles {
            map: Mutex::new(None),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Option<HashMap<usize, T>>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn insert(&self, value: T) -> usize {
        let h = new_handle();
        self.lock()
            .get_or_insert_with(HashMap::new)
            .insert(h, value);
        h
    }

    /// Run `f` on the object of handle `h`, or fail with `code` naming `func`.
    pub(super) fn with<R>(
        &self,
        h: usize,
        code: c_int,
        func: &str,
        arg: &str,
        f: impl FnOnce(&mut T) -> MpiResult<R>,
    ) -> MpiResult<R> {
        let mut map = self.lock();
        match map.as_mut().and_then(|m| m.get_mut(&h)) {
            Some(v) => f(v),
            None => Err(terr(
                code,
                format!("{func}({arg}={h:#x}): not a live handle"),
            )),
        }
    }

    pub(super) fn remove(&self, h: usize) -> Option<T> {
        self.lock().as_mut().and_then(|m| m.remove(&h))
    }

    pub(super) fn clear(&self) {
        *self.lock() = None;
    }
}

pub(crate) unsafe fn mpi_t_init_thread(required: c_int, provided: *mut c_int) -> MpiResult<()> {
    const F: &str = "MPI_T_init_thread";
    let level = match required {
        MPI_THREAD_SINGLE | MPI_THREAD_FUNNELED | MPI_THREAD_SERIALIZED | MPI_THREAD_MULTIPLE => {
            required
        }
        other => {
            return Err(terr(
                MPI_T_ERR_INVALID,
                format!("{F}(required={other}): not an MPI_THREAD_* level"),
            ))
        }
    };
    need(provided, F, "provided")?;
    *inits() += 1;
    // Every level is provided: MPI_T's state is behind locks and its counters are atomics.
    // SAFETY: checked non-null; valid per the standard.
    unsafe { provided.write(level) };
    Ok(())
}

pub(crate) fn mpi_t_finalize() -> MpiResult<()> {
    let mut n = inits();
    if *n == 0 {
        return Err(terr(
            MPI_T_ERR_NOT_INITIALIZED,
            "MPI_T_finalize: MPI_T is not initialized (more finalize than init calls)",
        ));
    }
    *n -= 1;
    if *n == 0 {
        drop(n);
        // The last finalize: handles and sessions of the tools are gone.
        cvar::release_all();
        pvar::release_all();
        event::release_all();
    }
    Ok(())
}
