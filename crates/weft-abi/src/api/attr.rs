//! Attribute caching: keyvals for communicators, datatypes and windows, set/get/delete, the
//! deprecated MPI-1 calls, and running the copy and delete callbacks when objects are
//! duplicated or freed. No lock is held while a callback runs (callbacks may call MPI, e.g.
//! free a communicator cached in an attribute).
//!
//! Communicators and windows carry their attribute lists; datatypes keep theirs in a table
//! here, keyed by handle, until their objects carry one (`type_attrs_dup`/`type_attrs_free`
//! are the hooks `MPI_Type_dup`/`MPI_Type_free` call).

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::mpi_err;
use weft_core::object::attr::{self, AttrKind, AttrList, Keyval, DUP_COPY, NULL_COPY, NULL_DELETE};
use weft_core::object::Comm;
use weft_core::runtime::world;

use crate::args::non_null;
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;

type CopyFn =
    unsafe extern "C" fn(usize, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
type DeleteFn = unsafe extern "C" fn(usize, c_int, *mut c_void, *mut c_void) -> c_int;

fn callback_error(rc: c_int, func: &str, what: &str, keyval: c_int) -> MpiError {
    MpiError::with_code(
        rc,
        format!("{func}: the {what} callback of keyval {keyval:#x} returned error {rc}"),
    )
}

/// `MPIX_Attr_value_hooks`' callbacks: a language binding's (libmpifort's) retain and release.
#[derive(Clone, Copy)]
struct ValueHooks {
    retain: MPIX_Attr_value_function,
    release: MPIX_Attr_value_function,
}

/// The registered hooks. Attribute calls are not a hot path; the lock is never held while a
/// hook runs.
static VALUE_HOOKS: Mutex<Option<ValueHooks>> = Mutex::new(None);

fn value_hooks() -> Option<ValueHooks> {
    *VALUE_HOOKS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Tells the binding that `value` is now stored on an object.
fn retained(value: usize) {
    if let Some(h) = value_hooks() {
        // SAFETY: a hook registered through MPIX_Attr_value_hooks, which takes any value.
        unsafe { (h.retain)(value as *mut c_void) }
    }
}

/// Tells the binding that a stored `value` left its object (its delete callback has run).
fn released(value: usize) {
    if let Some(h) = value_hooks() {
        // SAFETY: as in `retained`.
        unsafe { (h.release)(value as *mut c_void) }
    }
}

/// `MPIX_Attr_value_hooks`: both hooks, or neither (two nulls unregister).
pub(crate) fn mpix_attr_value_hooks(
    retain_fn: Option<MPIX_Attr_value_function>,
    release_fn: Option<MPIX_Attr_value_function>,
) -> MpiResult<()> {
    let hooks = match (retain_fn, release_fn) {
        (Some(retain), Some(release)) => Some(ValueHooks { retain, release }),
        (None, None) => None,
        _ => return Err(MpiError::new(
            ErrorClass::Arg,
            "MPIX_Attr_value_hooks: retain_fn and release_fn must both be given or both be NULL",
        )),
    };
    *VALUE_HOOKS.lock().unwrap_or_else(|e| e.into_inner()) = hooks;
    Ok(())
}

/// Run a keyval's copy callback on `value`: `Some(new value)` to store on the copy.
fn run_copy(kv: &Keyval, handle: usize, value: usize, func: &str) -> MpiResult<Option<usize>> {
    match kv.copy {
        NULL_COPY => Ok(None),
        DUP_COPY => Ok(Some(value)),
        f => {
            // `f` was stored from a non-null copy function pointer of the keyval's kind.
            // SAFETY: all kinds share this C shape (the handle is pointer-sized).
            let f: CopyFn = unsafe { std::mem::transmute::<usize, CopyFn>(f) };
            let mut out: *mut c_void = std::ptr::null_mut();
            let mut flag: c_int = 0;
            // SAFETY: a user callback with the standard's arguments; out and flag are locals.
            let rc = unsafe {
                f(
                    handle,
                    kv.id,
                    kv.extra_state as *mut c_void,
                    value as *mut c_void,
                    (&mut out as *mut *mut c_void).cast(),
                    &mut flag,
                )
            };
            if rc != MPI_SUCCESS {
                return Err(callback_error(rc, func, "copy", kv.id));
            }
            Ok((flag != 0).then_some(out as usize))
        }
    }
}

/// Run a keyval's delete callback on `value`.
fn run_delete(kv: &Keyval, handle: usize, value: usize, func: &str) -> MpiResult<()> {
    if kv.delete == NULL_DELETE {
        return Ok(());
    }
    // SAFETY: stored from a non-null delete function pointer of the keyval's kind.
    let f: DeleteFn = unsafe { std::mem::transmute::<usize, DeleteFn>(kv.delete) };
    // SAFETY: a user callback with the standard's arguments.
    let rc = unsafe {
        f(
            handle,
            kv.id,
            value as *mut c_void,
            kv.extra_state as *mut c_void,
        )
    };
    if rc != MPI_SUCCESS {
        return Err(callback_error(rc, func, "delete", kv.id));
    }
    Ok(())
}

/// Copy `old`'s attributes onto `new` (in the order they were set) by their copy callbacks.
/// On a callback error the attributes already copied are deleted again and the error
/// returned.
pub fn copy_attrs(old_handle: usize, old: &AttrList, new: &AttrList, func: &str) -> MpiResult<()> {
    for (kv, value) in old.snapshot() {
        match run_copy(&kv, old_handle, value, func) {
            Ok(Some(v)) => {
                new.set(kv, v);
                retained(v);
            }
            Ok(None) => {}
            Err(e) => {
                // The new object never had a handle; its delete callbacks see the old one.
                let _ = delete_all(old_handle, new, func);
                return Err(e);
            }
        }
    }
    Ok(())
}

/// Delete every attribute of an object being freed, in the reverse order they were set. On
/// a callback error the remaining attributes stay and the error is returned.
pub fn delete_all(handle: usize, list: &AttrList, func: &str) -> MpiResult<()> {
    for (kv, value) in list.snapshot().into_iter().rev() {
        run_delete(&kv, handle, value, func)?;
        if let Some((_, gone)) = list.remove(kv.id) {
            released(gone);
        }
    }
    Ok(())
}

/// Copy a communicator's attributes onto its duplicate.
pub fn copy_comm_attrs(old_handle: MPI_Comm, old: &Comm, new: &Comm, func: &str) -> MpiResult<()> {
    copy_attrs(old_handle, &old.attrs, &new.attrs, func)
}

/// Delete a communicator's attributes (before it is freed).
pub fn free_comm_attrs(handle: MPI_Comm, comm: &Comm, func: &str) -> MpiResult<()> {
    delete_all(handle, &comm.attrs, func)
}

/// `MPI_Finalize` deletes the attributes of `MPI_COMM_SELF` first (in reverse order of
/// setting), then those of `MPI_COMM_WORLD`.
pub fn finalize_attrs() -> MpiResult<()> {
    if let Ok(w) = world::get("MPI_Finalize") {
        delete_all(MPI_COMM_SELF, &w.self_comm.attrs, "MPI_Finalize")?;
        delete_all(MPI_COMM_WORLD, &w.world.attrs, "MPI_Finalize")?;
    }
    Ok(())
}

fn keyval_of(id: c_int, kind: AttrKind, func: &str, arg: &str) -> MpiResult<Arc<Keyval>> {
    keyval_lookup(id, kind, func, arg, false)
}

/// `keyval_of` that also accepts a keyval the program freed while attributes still hold it
/// (getting or deleting those attributes, freeing it again).
fn keyval_held(id: c_int, kind: AttrKind, func: &str, arg: &str) -> MpiResult<Arc<Keyval>> {
    keyval_lookup(id, kind, func, arg, true)
}

fn keyval_lookup(
    id: c_int,
    kind: AttrKind,
    func: &str,
    arg: &str,
    held_ok: bool,
) -> MpiResult<Arc<Keyval>> {
    if id == MPI_KEYVAL_INVALID {
        return Err(mpi_err!(
            Keyval,
            "{func}({arg}=MPI_KEYVAL_INVALID): a valid keyval is required"
        ));
    }
    let found = if held_ok {
        attr::keyval_held(id, kind)
    } else {
        attr::keyval(id, kind)
    };
    found.map_err(|why| {
        let what = if predefined_kind(id).is_some() {
            "a predefined keyval (it cannot be set or deleted)".to_owned()
        } else {
            why.describe()
        };
        mpi_err!(Keyval, "{func}({arg}={id:#x}): {what}")
    })
}

fn predefined_kind(id: c_int) -> Option<AttrKind> {
    match id {
        MPI_TAG_UB | MPI_HOST | MPI_IO | MPI_WTIME_IS_GLOBAL | MPI_APPNUM | MPI_LASTUSEDCODE
        | MPI_UNIVERSE_SIZE => Some(AttrKind::Comm),
        MPI_WIN_BASE | MPI_WIN_DISP_UNIT | MPI_WIN_SIZE | MPI_WIN_CREATE_FLAVOR | MPI_WIN_MODEL => {
            Some(AttrKind::Win)
        }
        _ => None,
    }
}

/// Create a keyval (no copy or delete function: `MPI_NULL_COPY_FN`/`MPI_NULL_DELETE_FN`);
/// `guard` is dropped with it (see `with_state`).
pub(super) unsafe fn create_keyval(
    kind: AttrKind,
    copy: Option<usize>,
    delete: Option<usize>,
    keyval: *mut c_int,
    extra_state: *mut c_void,
    guard: Option<Box<dyn std::any::Any + Send + Sync>>,
    func: &str,
) -> MpiResult<()> {
    non_null(keyval, func, "keyval")?;
    let (copy, delete) = (copy.unwrap_or(NULL_COPY), delete.unwrap_or(NULL_DELETE));
    let id = attr::create_keyval(kind, copy, delete, extra_state as usize, guard)?;
    // SAFETY: checked non-null.
    unsafe { keyval.write(id) };
    Ok(())
}

/// `MPI_<Kind>_free_keyval` and MPI-1's `MPI_Keyval_free` (`api/gen.py` passes the kind
/// and the function's name).
///
/// # Safety
/// `keyval` null or valid for a read and a write.
pub(crate) unsafe fn keyval_free(keyval: *mut c_int, kind: AttrKind, func: &str) -> MpiResult<()> {
    non_null(keyval, func, "keyval")?;
    // SAFETY: checked non-null.
    let id = unsafe { *keyval };
    keyval_held(id, kind, func, "keyval")?;
    attr::free_keyval(id, kind)
        .map_err(|why| mpi_err!(Keyval, "{func}(keyval={id:#x}): {}", why.describe()))?;
    // SAFETY: as above.
    unsafe { keyval.write(MPI_KEYVAL_INVALID) };
    Ok(())
}

/// `MPI_<Kind>_create_keyval` and MPI-1's `MPI_Keyval_create` (`api/gen.py` passes the
/// callbacks as addresses, the kind and the function's name).
///
/// # Safety
/// `keyval` null or valid for a write.
pub(crate) unsafe fn keyval_create(
    copy: Option<usize>,
    delete: Option<usize>,
    keyval: *mut c_int,
    extra_state: *mut c_void,
    kind: AttrKind,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: the caller's contract (`keyval` is checked inside).
    unsafe { create_keyval(kind, copy, delete, keyval, extra_state, None, func) }
}

/// Store `value` under `keyval` on `list`: an existing value's delete callback runs first.
fn set_attr(
    handle: usize,
    list: &AttrList,
    kv: Arc<Keyval>,
    value: usize,
    func: &str,
) -> MpiResult<()> {
    if let Some(old) = list.get(kv.id) {
        run_delete(&kv, handle, old, func)?;
    }
    let replaced = list.set(kv, value);
    retained(value);
    if let Some(old) = replaced {
        released(old);
    }
    Ok(())
}

fn delete_attr(handle: usize, list: &AttrList, kv: &Keyval, func: &str) -> MpiResult<()> {
    let Some(value) = list.get(kv.id) else {
        return Err(mpi_err!(
            Keyval,
            "{func}(keyval={:#x}): no attribute is set for this keyval",
            kv.id
        ));
    };
    run_delete(kv, handle, value, func)?;
    if let Some((_, gone)) = list.remove(kv.id) {
        released(gone);
    }
    Ok(())
}

/// Write a found attribute (`attribute_val` is a `void**` for the value) or flag 0.
unsafe fn out_attr(value: Option<usize>, attribute_val: *mut c_void, flag: *mut c_int) {
    // The caller checked both pointers for null.
    // SAFETY: the standard makes attribute_val a pointer to a void* the library fills.
    unsafe {
        match value {
            Some(v) => {
                attribute_val.cast::<usize>().write(v);
                flag.write(1);
            }
            None => flag.write(0),
        }
    }
}

// ------------------------------------------------------------------------ communicators

/// Run `f` on `comm`'s attributes: on a thread communicator the calling thread rank's own
/// (`thread_ranks::attrs`), else the communicator's.
fn with_comm_attrs<R>(
    comm: MPI_Comm,
    func: &str,
    f: impl FnOnce(&AttrList) -> MpiResult<R>,
) -> MpiResult<R> {
    if let Some(list) = crate::thread_ranks::attrs(comm) {
        return f(&list);
    }
    let c = objects::comm_local(comm, func, "comm")?;
    f(&c.attrs)
}

fn comm_set(comm: MPI_Comm, keyval: c_int, value: usize, func: &str) -> MpiResult<()> {
    with_comm_attrs(comm, func, |list| {
        let kv = keyval_of(keyval, AttrKind::Comm, func, "comm_keyval")?;
        set_attr(comm, list, kv, value, func)
    })
}

pub(crate) unsafe fn mpi_comm_set_attr(
    comm: MPI_Comm,
    comm_keyval: c_int,
    attribute_val: *mut c_void,
) -> MpiResult<()> {
    comm_set(
        comm,
        comm_keyval,
        attribute_val as usize,
        "MPI_Comm_set_attr",
    )
}

pub(crate) unsafe fn mpi_attr_put(
    comm: MPI_Comm,
    keyval: c_int,
    attribute_val: *mut c_void,
) -> MpiResult<()> {
    comm_set(comm, keyval, attribute_val as usize, "MPI_Attr_put")
}

fn comm_delete(comm: MPI_Comm, keyval: c_int, func: &str) -> MpiResult<()> {
    with_comm_attrs(comm, func, |list| {
        let kv = keyval_held(keyval, AttrKind::Comm, func, "comm_keyval")?;
        delete_attr(comm, list, &kv, func)
    })
}

pub(crate) fn mpi_comm_delete_attr(comm: MPI_Comm, comm_keyval: c_int) -> MpiResult<()> {
    comm_delete(comm, comm_keyval, "MPI_Comm_delete_attr")
}

pub(crate) fn mpi_attr_delete(comm: MPI_Comm, keyval: c_int) -> MpiResult<()> {
    comm_delete(comm, keyval, "MPI_Attr_delete")
}

/// Storage for the predefined attribute values: `MPI_Comm_get_attr` hands out pointers to
/// them, so they live for the whole process. `AtomicI32` has the layout of a C int.
struct PredefinedAttrs {
    tag_ub: AtomicI32,
    host: AtomicI32,
    io: AtomicI32,
    wtime_is_global: AtomicI32,
    appnum: AtomicI32,
    universe_size: AtomicI32,
    last_used_code: AtomicI32,
}

static ATTRS: PredefinedAttrs = PredefinedAttrs {
    tag_ub: AtomicI32::new(i32::MAX),
    host: AtomicI32::new(MPI_PROC_NULL),
    io: AtomicI32::new(MPI_ANY_SOURCE),
    wtime_is_global: AtomicI32::new(0),
    appnum: AtomicI32::new(0),
    universe_size: AtomicI32::new(1),
    last_used_code: AtomicI32::new(0),
};

/// The cell for a predefined keyval, refreshed to its current value, or `None` if the
/// keyval is not a predefined communicator attribute.
fn predefined_attr(keyval: c_int, w: &world::World) -> Option<&'static AtomicI32> {
    let (cell, value) = match keyval {
        MPI_TAG_UB => (&ATTRS.tag_ub, i32::MAX),
        MPI_HOST => (&ATTRS.host, MPI_PROC_NULL),
        MPI_IO => (&ATTRS.io, MPI_ANY_SOURCE),
        MPI_WTIME_IS_GLOBAL => (&ATTRS.wtime_is_global, 0),
        MPI_APPNUM => (&ATTRS.appnum, w.attrs.appnum),
        MPI_UNIVERSE_SIZE => (
            &ATTRS.universe_size,
            w.attrs.universe_size.unwrap_or(w.world.size()) as i32,
        ),
        MPI_LASTUSEDCODE => (&ATTRS.last_used_code, weft_core::error::last_used_code()),
        _ => return None,
    };
    cell.store(value, Ordering::Relaxed);
    Some(cell)
}

unsafe fn comm_get(
    comm: MPI_Comm,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
    func: &str,
) -> MpiResult<()> {
    with_comm_attrs(comm, func, |list| {
        non_null(attribute_val, func, "attribute_val")?;
        non_null(flag, func, "flag")?;
        if let Some(kind) = predefined_kind(keyval) {
            if kind != AttrKind::Comm {
                return Err(mpi_err!(
                    Keyval,
                    "{func}(comm_keyval={keyval}): a window keyval"
                ));
            }
            let w = world::get(func)?;
            if keyval == MPI_APPNUM && w.attrs.appnum < 0 {
                // The launcher numbers no applications (Slurm's PMI-2 says appnum=-1):
                // MPI_APPNUM is not set then (MPI 5.0 §11.10.3).
                // SAFETY: checked non-null above.
                unsafe { out_attr(None, attribute_val, flag) };
                return Ok(());
            }
            let cell = predefined_attr(keyval, w).expect("a predefined communicator keyval");
            // SAFETY: checked non-null above.
            unsafe { out_attr(Some(cell.as_ptr() as usize), attribute_val, flag) };
            return Ok(());
        }
        let kv = keyval_held(keyval, AttrKind::Comm, func, "comm_keyval")?;
        // SAFETY: checked non-null above.
        unsafe { out_attr(list.get(kv.id), attribute_val, flag) };
        Ok(())
    })
}

pub(crate) unsafe fn mpi_comm_get_attr(
    comm: MPI_Comm,
    comm_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> MpiResult<()> {
    // SAFETY: pointers checked inside.
    unsafe { comm_get(comm, comm_keyval, attribute_val, flag, "MPI_Comm_get_attr") }
}

pub(crate) unsafe fn mpi_attr_get(
    comm: MPI_Comm,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> MpiResult<()> {
    // SAFETY: pointers checked inside.
    unsafe { comm_get(comm, keyval, attribute_val, flag, "MPI_Attr_get") }
}

// ---------------------------------------------------------------------------- datatypes

/// Attribute lists of datatypes, by handle (predefined handles included).
static TYPE_ATTRS: LazyLock<Mutex<HashMap<usize, Arc<AttrList>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn type_list(handle: MPI_Datatype, create: bool) -> Option<Arc<AttrList>> {
    let mut t = TYPE_ATTRS.lock().unwrap_or_else(|p| p.into_inner());
    if create {
        Some(t.entry(handle).or_default().clone())
    } else {
        t.get(&handle).cloned()
    }
}

/// `MPI_Type_dup` hook: copy the attributes of `old` onto `new` by their callbacks. On a
/// callback error `new` keeps no attributes.
pub fn type_attrs_dup(old: MPI_Datatype, new: MPI_Datatype, func: &str) -> MpiResult<()> {
    let Some(list) = type_list(old, false) else {
        return Ok(());
    };
    let result = copy_attrs(old, &list, &type_list(new, true).expect("created"), func);
    if result.is_err() {
        TYPE_ATTRS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&new);
    }
    result
}

/// `MPI_Type_free` hook: run the delete callbacks of a datatype's attributes and forget them.
pub fn type_attrs_free(handle: MPI_Datatype, func: &str) -> MpiResult<()> {
    if let Some(list) = type_list(handle, false) {
        delete_all(handle, &list, func)?;
        TYPE_ATTRS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&handle);
    }
    Ok(())
}

fn check_type(handle: MPI_Datatype, func: &str) -> MpiResult<()> {
    crate::datatypes::type_of(handle, func, "datatype").map(|_| ())
}

pub(crate) unsafe fn mpi_type_set_attr(
    datatype: MPI_Datatype,
    type_keyval: c_int,
    attribute_val: *mut c_void,
) -> MpiResult<()> {
    let func = "MPI_Type_set_attr";
    check_type(datatype, func)?;
    let kv = keyval_of(type_keyval, AttrKind::Type, func, "type_keyval")?;
    let list = type_list(datatype, true).expect("created");
    set_attr(datatype, &list, kv, attribute_val as usize, func)
}

pub(crate) unsafe fn mpi_type_get_attr(
    datatype: MPI_Datatype,
    type_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Type_get_attr";
    check_type(datatype, func)?;
    non_null(attribute_val, func, "attribute_val")?;
    non_null(flag, func, "flag")?;
    let kv = keyval_held(type_keyval, AttrKind::Type, func, "type_keyval")?;
    let v = type_list(datatype, false).and_then(|l| l.get(kv.id));
    // SAFETY: checked non-null above.
    unsafe { out_attr(v, attribute_val, flag) };
    Ok(())
}

pub(crate) fn mpi_type_delete_attr(datatype: MPI_Datatype, type_keyval: c_int) -> MpiResult<()> {
    let func = "MPI_Type_delete_attr";
    check_type(datatype, func)?;
    let kv = keyval_held(type_keyval, AttrKind::Type, func, "type_keyval")?;
    let list = type_list(datatype, true).expect("created");
    delete_attr(datatype, &list, &kv, func)
}

// ------------------------------------------------------------------------------ windows

/// Delete a window's attributes (before it is freed).
pub fn free_win_attrs(handle: MPI_Win, list: &AttrList, func: &str) -> MpiResult<()> {
    delete_all(handle, list, func)
}

pub(crate) unsafe fn mpi_win_set_attr(
    win: MPI_Win,
    win_keyval: c_int,
    attribute_val: *mut c_void,
) -> MpiResult<()> {
    let func = "MPI_Win_set_attr";
    let w = objects::win(win, func, "win")?;
    let kv = keyval_of(win_keyval, AttrKind::Win, func, "win_keyval")?;
    set_attr(win, &w.attrs, kv, attribute_val as usize, func)
}

/// `MPI_Win_get_attr`: the predefined keyvals give the window's base address
/// (`MPI_WIN_BASE`) or a pointer to its size, displacement unit, flavor or model.
pub(crate) unsafe fn mpi_win_get_attr(
    win: MPI_Win,
    win_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Win_get_attr";
    let w = objects::win(win, func, "win")?;
    non_null(attribute_val, func, "attribute_val")?;
    non_null(flag, func, "flag")?;
    if let Some(kind) = predefined_kind(win_keyval) {
        if kind != AttrKind::Win {
            return Err(mpi_err!(
                Keyval,
                "{func}(win_keyval={win_keyval}): a communicator keyval"
            ));
        }
        let value = w.predefined_attr(win_keyval);
        // SAFETY: checked non-null above.
        unsafe { out_attr(value, attribute_val, flag) };
        return Ok(());
    }
    let kv = keyval_held(win_keyval, AttrKind::Win, func, "win_keyval")?;
    // SAFETY: checked non-null above.
    unsafe { out_attr(w.attrs.get(kv.id), attribute_val, flag) };
    Ok(())
}

pub(crate) fn mpi_win_delete_attr(win: MPI_Win, win_keyval: c_int) -> MpiResult<()> {
    let func = "MPI_Win_delete_attr";
    let w = objects::win(win, func, "win")?;
    let kv = keyval_held(win_keyval, AttrKind::Win, func, "win_keyval")?;
    delete_attr(win, &w.attrs, &kv, func)
}
