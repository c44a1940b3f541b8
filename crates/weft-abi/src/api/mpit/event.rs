//! MPI_T events (`weft_core::tools::EVENTS`, recorded by the engine into `weft_core::events`)
//! and the one event source, the process's monotonic clock.
//!
//! Callbacks run from the progress engine's polled work (`weft_core::polled`), with no
//! internal lock held, at `MPI_T_CB_REQUIRE_NONE`: a callback may call any MPI function.
//! Of the callbacks a registration has, the one registered for the lowest safety level is
//! called. Events a VCI could not keep (1024 waiting) are dropped and reported to the
//! registration's dropped-event handler with their number.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use weft_core::error::MpiResult;
use weft_core::events::{self, Record};
use weft_core::object::Info;
use weft_core::polled::{self, Polled};
use weft_core::tools::EVENTS;

use super::{check_init, index, index_by_name, need, out_str, store, store_required, terr};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;

/// The safety levels, lowest first.
const LEVELS: [c_int; 4] = [
    MPI_T_CB_REQUIRE_NONE,
    MPI_T_CB_REQUIRE_MPI_RESTRICTED,
    MPI_T_CB_REQUIRE_THREAD_SAFE,
    MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE,
];

#[derive(Clone, Copy)]
struct Callback {
    function: MPI_T_event_cb_function,
    user_data: usize,
}

struct Registration {
    event: usize,
    /// One callback per safety level (`LEVELS`).
    callbacks: [Option<Callback>; 4],
    dropped: Option<MPI_T_event_dropped_cb_function>,
}

static REGISTRY: Mutex<Option<HashMap<usize, Registration>>> = Mutex::new(None);
/// Whether the dispatcher is in the polled list (changed under `REGISTRY`'s lock).
static DISPATCHING: AtomicBool = AtomicBool::new(false);

fn registry() -> MutexGuard<'static, Option<HashMap<usize, Registration>>> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Record the kinds some registration asks for, and nothing else.
fn update_enabled(map: &HashMap<usize, Registration>) {
    for (i, e) in EVENTS.iter().enumerate() {
        events::enable(e.kind, map.values().any(|r| r.event == i));
    }
}

pub(super) fn release_all() {
    let mut reg = registry();
    *reg = None;
    for e in EVENTS {
        events::enable(e.kind, false);
    }
    drop(reg);
    let _ = events::take();
}

fn level_index(cb_safety: c_int, func: &str) -> MpiResult<usize> {
    LEVELS.iter().position(|&l| l == cb_safety).ok_or_else(|| {
        terr(
            MPI_T_ERR_INVALID,
            format!("{func}(cb_safety={cb_safety}): not an MPI_T_CB_REQUIRE_* level"),
        )
    })
}

fn with_registration<R>(
    h: MPI_T_event_registration,
    func: &str,
    f: impl FnOnce(&mut Registration) -> MpiResult<R>,
) -> MpiResult<R> {
    let mut reg = registry();
    match reg.as_mut().and_then(|m| m.get_mut(&h)) {
        Some(r) => f(r),
        None => Err(terr(
            MPI_T_ERR_INVALID_HANDLE,
            format!("{func}(event_registration={h:#x}): not a live registration"),
        )),
    }
}

/// Takes recorded events and calls the callbacks; leaves the polled list when no
/// registration is left.
struct Dispatcher;

impl Polled for Dispatcher {
    fn poll(&self) -> bool {
        dispatch();
        let reg = registry();
        if reg.as_ref().is_none_or(|m| m.is_empty()) {
            DISPATCHING.store(false, Ordering::Relaxed);
            return true;
        }
        false
    }
}

thread_local! {
    /// The event instance a callback on this thread is looking at (its handle and record).
    static CURRENT: Cell<Option<(usize, Record)>> = const { Cell::new(None) };
}

fn dispatch() {
    let (records, dropped) = events::take();
    if records.is_empty() && dropped.iter().all(|&d| d == 0) {
        return;
    }
    // (registration, event index, lowest-level callback, dropped handler), taken under
    // the lock and called without it.
    let targets: Vec<(
        usize,
        usize,
        Option<Callback>,
        Option<MPI_T_event_dropped_cb_function>,
    )> = registry()
        .as_ref()
        .map(|m| {
            m.iter()
                .map(|(&h, r)| {
                    (
                        h,
                        r.event,
                        r.callbacks.iter().flatten().next().copied(),
                        r.dropped,
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    for (k, &n) in dropped.iter().enumerate() {
        if n == 0 {
            continue;
        }
        for &(h, event, cb, handler) in &targets {
            if EVENTS[event].kind as usize != k {
                continue;
            }
            if let Some(handler) = handler {
                let user = cb.map_or(0, |c| c.user_data);
                // SAFETY: the tool registered this function for exactly this call.
                unsafe {
                    handler(
                        n as MPI_Count,
                        h,
                        0,
                        MPI_T_CB_REQUIRE_NONE,
                        user as *mut c_void,
                    )
                };
            }
        }
    }
    for rec in records {
        for &(h, event, cb, _) in &targets {
            let Some(cb) = cb.filter(|_| EVENTS[event].kind == rec.kind) else {
                continue;
            };
            let instance = super::new_handle();
            let previous = CURRENT.with(|c| c.replace(Some((instance, rec))));
            // SAFETY: the tool registered this function for exactly this call.
            unsafe {
                (cb.function)(
                    instance,
                    h,
                    MPI_T_CB_REQUIRE_NONE,
                    cb.user_data as *mut c_void,
                )
            };
            CURRENT.with(|c| c.set(previous));
        }
    }
}

/// The event a callback is handed, or `MPI_T_ERR_INVALID_HANDLE` outside its callback.
fn current(instance: MPI_T_event_instance, func: &str) -> MpiResult<Record> {
    match CURRENT.with(|c| c.get()) {
        Some((h, rec)) if h == instance => Ok(rec),
        _ => Err(terr(
            MPI_T_ERR_INVALID_HANDLE,
            format!("{func}(event_instance={instance:#x}): valid only inside its callback"),
        )),
    }
}

pub(crate) unsafe fn mpi_t_event_get_num(num_events: *mut c_int) -> MpiResult<()> {
    check_init("MPI_T_event_get_num")?;
    // SAFETY: valid per the standard when not null.
    unsafe {
        store_required(
            num_events,
            EVENTS.len() as c_int,
            "MPI_T_event_get_num",
            "num_events",
        )
    }
}

/// A new, empty info object for an info output argument.
///
/// # Safety
/// `info` null or valid for one `MPI_Info`.
unsafe fn new_info(info: *mut MPI_Info) {
    if !info.is_null() {
        let handle = objects::INFOS.insert(Arc::new(Info::new()));
        // SAFETY: non-null and valid per the caller.
        unsafe { info.write(handle) };
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn mpi_t_event_get_info(
    event_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    array_of_datatypes: *mut MPI_Datatype,
    array_of_displacements: *mut MPI_Aint,
    num_elements: *mut c_int,
    enumtype: *mut MPI_T_enum,
    info: *mut MPI_Info,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
) -> MpiResult<()> {
    const F: &str = "MPI_T_event_get_info";
    check_init(F)?;
    let e = &EVENTS[index(event_index, EVENTS.len(), F, "event_index")?];
    // SAFETY: every pointer is null or valid per the standard (arrays of *num_elements entries).
    unsafe {
        out_str(e.name, name, name_len);
        out_str(e.desc, desc, desc_len);
        store(verbosity, MPI_T_VERBOSITY_USER_BASIC);
        if !num_elements.is_null() {
            let room = (*num_elements).max(0) as usize;
            for k in 0..room.min(e.fields.len()) {
                if !array_of_datatypes.is_null() {
                    array_of_datatypes.add(k).write(MPI_INT64_T);
                }
                if !array_of_displacements.is_null() {
                    array_of_displacements.add(k).write(8 * k as MPI_Aint);
                }
            }
            num_elements.write(e.fields.len() as c_int);
        }
        store(enumtype, MPI_T_ENUM_NULL);
        new_info(info);
        store(bind, MPI_T_BIND_NO_OBJECT);
    }
    Ok(())
}

pub(crate) unsafe fn mpi_t_event_get_index(
    name: *const c_char,
    event_index: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_T_event_get_index";
    let find = |name: &str| EVENTS.iter().position(|e| e.name == name);
    // SAFETY: the caller's guarantees (the standard's rules).
    unsafe { index_by_name(name, event_index, func, "event_index", "event", find) }
}

pub(crate) unsafe fn mpi_t_event_handle_alloc(
    event_index: c_int,
    _obj_handle: *mut c_void,
    info: MPI_Info,
    event_registration: *mut MPI_T_event_registration,
) -> MpiResult<()> {
    const F: &str = "MPI_T_event_handle_alloc";
    check_init(F)?;
    let i = index(event_index, EVENTS.len(), F, "event_index")?;
    check_info(info, F)?;
    need(event_registration, F, "event_registration")?;
    let h = super::new_handle();
    let mut reg = registry();
    let map = reg.get_or_insert_with(HashMap::new);
    map.insert(
        h,
        Registration {
            event: i,
            callbacks: [None; 4],
            dropped: None,
        },
    );
    update_enabled(map);
    if !DISPATCHING.swap(true, Ordering::Relaxed) {
        polled::register(Arc::new(Dispatcher));
    }
    drop(reg);
    // SAFETY: checked non-null.
    unsafe { event_registration.write(h) };
    Ok(())
}

fn check_info(info: MPI_Info, func: &str) -> MpiResult<()> {
    if info != MPI_INFO_NULL && objects::INFOS.get(info).is_err() {
        return Err(terr(
            MPI_T_ERR_INVALID,
            format!("{func}(info={info:#x}): not a valid info object"),
        ));
    }
    Ok(())
}

pub(crate) unsafe fn mpi_t_event_handle_free(
    event_registration: MPI_T_event_registration,
    user_data: *mut c_void,
    free_cb_function: Option<MPI_T_event_free_cb_function>,
) -> MpiResult<()> {
    const F: &str = "MPI_T_event_handle_free";
    check_init(F)?;
    {
        let mut reg = registry();
        let map = reg.as_mut();
        if map.and_then(|m| m.remove(&event_registration)).is_none() {
            return Err(terr(
                MPI_T_ERR_INVALID_HANDLE,
                format!("{F}(event_registration={event_registration:#x}): not a live registration"),
            ));
        }
        if let Some(m) = reg.as_ref() {
            update_enabled(m);
        }
    }
    if let Some(free) = free_cb_function {
        // SAFETY: the tool passed this function for exactly this call.
        unsafe { free(event_registration, MPI_T_CB_REQUIRE_NONE, user_data) };
    }
    Ok(())
}

pub(crate) unsafe fn mpi_t_event_handle_get_info(
    event_registration: MPI_T_event_registration,
    info_used: *mut MPI_Info,
) -> MpiResult<()> {
    const F: &str = "MPI_T_event_handle_get_info";
    check_init(F)?;
    with_registration(event_registration, F, |_| Ok(()))?;
    need(info_used, F, "info_used")?;
    // Weft understands no hints for events: the info is empty.
    // SAFETY: checked non-null.
    unsafe { new_info(info_used) };
    Ok(())
}

pub(crate) fn mpi_t_event_handle_set_info(
    event_registration: MPI_T_event_registration,
    info: MPI_Info,
) -> MpiResult<()> {
    const F: &str = "MPI_T_event_handle_set_info";
    check_init(F)?;
    check_info(info, F)?;
    with_registration(event_registration, F, |_| Ok(()))
}

pub(crate) unsafe fn mpi_t_event_register_callback(
    event_registration: MPI_T_event_registration,
    cb_safety: MPI_T_cb_safety,
    info: MPI_Info,
    user_data: *mut c_void,
    event_cb_function: Option<MPI_T_event_cb_function>,
) -> MpiResult<()> {
    const F: &str = "MPI_T_event_register_callback";
    check_init(F)?;
    let level = level_index(cb_safety, F)?;
    check_info(info, F)?;
    with_registration(event_registration, F, |r| {
        // A null function removes the callback of this level.
        r.callbacks[level] = event_cb_function.map(|function| Callback {
            function,
            user_data: user_data as usize,
        });
        Ok(())
    })
}

pub(crate) unsafe fn mpi_t_event_callback_get_info(
    event_registration: MPI_T_event_registration,
    cb_safety: MPI_T_cb_safety,
    info_used: *mut MPI_Info,
) -> MpiResult<()> {
    const F: &str = "MPI_T_event_callback_get_info";
    check_init(F)?;
    level_index(cb_safety, F)?;
    with_registration(event_registration, F, |_| Ok(()))?;
    need(info_used, F, "info_used")?;
    // SAFETY: checked non-null.
    unsafe { new_info(info_used) };
    Ok(())
}

pub(crate) fn mpi_t_event_callback_set_info(
    event_registration: MPI_T_event_registration,
    cb_safety: MPI_T_cb_safety,
    info: MPI_Info,
) -> MpiResult<()> {
    const F: &str = "MPI_T_event_callback_set_info";
    check_init(F)?;
    level_index(cb_safety, F)?;
    check_info(info, F)?;
    with_registration(event_registration, F, |_| Ok(()))
}

pub(crate) fn mpi_t_event_set_dropped_handler(
    event_registration: MPI_T_event_registration,
    dropped_cb_function: Option<MPI_T_event_dropped_cb_function>,
) -> MpiResult<()> {
    const F: &str = "MPI_T_event_set_dropped_handler";
    check_init(F)?;
    with_registration(event_registration, F, |r| {
        r.dropped = dropped_cb_function;
        Ok(())
    })
}

pub(crate) unsafe fn mpi_t_event_read(
    event_instance: MPI_T_event_instance,
    element_index: c_int,
    buffer: *mut c_void,
) -> MpiResult<()> {
    const F: &str = "MPI_T_event_read";
    check_init(F)?;
    let rec = current(event_instance, F)?;
    let k = index(element_index, rec.fields.len(), F, "element_index")?;
    need(buffer, F, "buffer")?;
    // SAFETY: the element is an int64_t (MPI_T_event_get_info); buffer holds one.
    unsafe {
        buffer
            .cast::<u8>()
            .copy_from_nonoverlapping(rec.fields[k].to_ne_bytes().as_ptr(), 8)
    };
    Ok(())
}

pub(crate) unsafe fn mpi_t_event_copy(
    event_instance: MPI_T_event_instance,
    buffer: *mut c_void,
) -> MpiResult<()> {
    const F: &str = "MPI_T_event_copy";
    check_init(F)?;
    let rec = current(event_instance, F)?;
    need(buffer, F, "buffer")?;
    let bytes: Vec<u8> = rec.fields.iter().flat_map(|f| f.to_ne_bytes()).collect();
    // SAFETY: buffer holds the event's elements at their displacements (8 bytes each).
    unsafe {
        buffer
            .cast::<u8>()
            .copy_from_nonoverlapping(bytes.as_ptr(), bytes.len())
    };
    Ok(())
}

pub(crate) unsafe fn mpi_t_event_get_timestamp(
    event_instance: MPI_T_event_instance,
    event_timestamp: *mut MPI_Count,
) -> MpiResult<()> {
    const F: &str = "MPI_T_event_get_timestamp";
    check_init(F)?;
    let rec = current(event_instance, F)?;
    // SAFETY: valid per the standard when not null.
    unsafe {
        store_required(
            event_timestamp,
            rec.timestamp as MPI_Count,
            F,
            "event_timestamp",
        )
    }
}

pub(crate) unsafe fn mpi_t_event_get_source(
    event_instance: MPI_T_event_instance,
    source_index: *mut c_int,
) -> MpiResult<()> {
    const F: &str = "MPI_T_event_get_source";
    check_init(F)?;
    current(event_instance, F)?;
    // SAFETY: valid per the standard when not null.
    unsafe { store_required(source_index, 0, F, "source_index") }
}

pub(crate) unsafe fn mpi_t_source_get_num(num_sources: *mut c_int) -> MpiResult<()> {
    check_init("MPI_T_source_get_num")?;
    // SAFETY: valid per the standard when not null.
    unsafe { store_required(num_sources, 1, "MPI_T_source_get_num", "num_sources") }
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn mpi_t_source_get_info(
    source_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    desc: *mut c_char,
    desc_len: *mut c_int,
    ordering: *mut MPI_T_source_order,
    ticks_per_second: *mut MPI_Count,
    max_ticks: *mut MPI_Count,
    info: *mut MPI_Info,
) -> MpiResult<()> {
    const F: &str = "MPI_T_source_get_info";
    check_init(F)?;
    index(source_index, 1, F, "source_index")?;
    // SAFETY: every pointer is null or valid per the standard.
    unsafe {
        out_str("weft_monotonic_clock", name, name_len);
        out_str(
            "the process's monotonic clock (CLOCK_MONOTONIC) in nanoseconds; events of different VCIs are delivered VCI by VCI",
            desc,
            desc_len,
        );
        store(ordering, MPI_T_SOURCE_UNORDERED);
        store(ticks_per_second, 1_000_000_000);
        store(max_ticks, MPI_Count::MAX);
        new_info(info);
    }
    Ok(())
}

pub(crate) unsafe fn mpi_t_source_get_timestamp(
    source_index: c_int,
    timestamp: *mut MPI_Count,
) -> MpiResult<()> {
    const F: &str = "MPI_T_source_get_timestamp";
    check_init(F)?;
    index(source_index, 1, F, "source_index")?;
    // SAFETY: valid per the standard when not null.
    unsafe { store_required(timestamp, events::now() as MPI_Count, F, "timestamp") }
}
