//! Completion: wait and test (single, any, some, all), request free and cancel, and status
//! queries and setters.

use std::ffi::c_int;

use weft_core::datatype::Type;
use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::instance::Instance;
use weft_core::message::Status;
use weft_core::mpi_err;
use weft_core::progress::{self, Completed};
use weft_core::pt2pt;
use weft_core::request::{PersistentState, ReqId};

use crate::args::{non_null, write, Int};
use crate::boundary::raise_on;
use crate::constants::*;
use crate::ctypes::*;
use crate::requests::{request_id, InArray};
use crate::{datatypes, status};

/// The instance requests live in.
fn instance(func: &str) -> MpiResult<crate::objects::InstanceRef> {
    crate::objects::instance(func)
}

/// Whether `id` is a VCI's shared completed send that is simply complete (waiting on it
/// takes nothing; one whose send `MPI_Cancel` asked to withdraw is not).
#[inline]
fn is_completed_send(inst: &Instance, id: ReqId) -> bool {
    id.is_completed_send()
        && inst
            .vcis
            .get(id.vci() as usize)
            .is_some_and(|v| v.completed_sends_plain())
}

fn not_active(handle: MPI_Request, func: &str) -> MpiError {
    mpi_err!(
        Request,
        "{func}(request={handle:#x}): not an active request (already completed or freed?)"
    )
}

/// Decode and check a request handle (the VCI must exist).
fn live_id(
    inst: &Instance,
    handle: MPI_Request,
    func: &str,
    arg: impl std::fmt::Display + Copy,
) -> MpiResult<Option<ReqId>> {
    let id = request_id(handle, func, arg)?;
    if let Some(id) = id {
        if id.vci() as usize >= inst.vcis.len() || !progress::exists(inst, id) {
            return Err(mpi_err!(
                Request,
                "{func}({arg}={handle:#x}): not an active request (already completed or freed?)"
            ));
        }
    }
    Ok(id)
}

/// The status a completed request reports (the empty status for an inactive persistent one).
fn done_status(done: &Completed) -> Status {
    if done.inactive {
        status::EMPTY
    } else {
        done.status
    }
}

/// Write a completed request's status: the empty status (error included) for an inactive
/// persistent request; for others, single-request calls leave `MPI_ERROR` alone.
///
/// # Safety
/// `out` must be null or point to a writable `MPI_Status`.
unsafe fn store_done(out: *mut MPI_Status, done: &Completed) {
    // SAFETY: the caller's contract.
    unsafe {
        if done.inactive {
            status::store_empty(out)
        } else {
            status::store(out, &done.status, false)
        }
    }
}

/// The handle after completion: `MPI_REQUEST_NULL`, except for persistent requests (they
/// become inactive and keep their handle).
fn after(handle: MPI_Request, done: &Completed) -> MPI_Request {
    if done.persistent {
        handle
    } else {
        MPI_REQUEST_NULL
    }
}

/// The error a completed operation reports, raised on its communicator's errhandler.
#[inline]
fn completion_error(done: &Completed, func: &str) -> MpiResult<()> {
    if done.status.error == 0 {
        return Ok(());
    }
    failed_completion(done, func)
}

/// `completion_error` of an operation that failed: out of line, off the completion path
/// (callgrind, bench/send_instructions.c: an 8-byte `MPI_Isend` + `MPI_Wait`, bench/README.md).
#[cold]
#[inline(never)]
fn failed_completion(done: &Completed, func: &str) -> MpiResult<()> {
    match done.status.into_result() {
        Ok(_) => Ok(()),
        Err(e) => {
            if done.owner != 0 {
                raise_on(crate::boundary::owner_scope(done.owner));
            }
            Err(MpiError {
                message: format!("{func}: {}", e.message),
                ..e
            })
        }
    }
}

/// # Safety
/// `requests` and (unless ignored) `statuses` must hold `count` elements.
unsafe fn slices<'a>(
    count: c_int,
    requests: *mut MPI_Request,
    statuses: *mut MPI_Status,
    func: &str,
) -> MpiResult<(&'a mut [MPI_Request], Option<&'a mut [MPI_Status]>)> {
    if count < 0 {
        return Err(mpi_err!(Count, "{func}(count={count}): negative count"));
    }
    let n = count as usize;
    if n > 0 {
        non_null(requests, func, "array_of_requests")?;
    }
    // SAFETY: non-null (or empty) arrays of `count` elements per the caller's contract.
    unsafe {
        let reqs = if n == 0 {
            &mut [][..]
        } else {
            std::slice::from_raw_parts_mut(requests, n)
        };
        let stats =
            (!statuses.is_null() && n > 0).then(|| std::slice::from_raw_parts_mut(statuses, n));
        Ok((reqs, stats))
    }
}

// ------------------------------------------------------------------ single

pub(crate) unsafe fn mpi_wait(request: *mut MPI_Request, out: *mut MPI_Status) -> MpiResult<()> {
    non_null(request, "MPI_Wait", "request")?;
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    let handle = unsafe { *request };
    let inst = instance("MPI_Wait")?;
    let Some(id) = request_id(handle, "MPI_Wait", "request")? else {
        // SAFETY: `out` is null (ignored) or writable.
        unsafe { status::store_empty(out) };
        return Ok(());
    };
    let done = if is_completed_send(&inst, id) {
        Completed::SEND
    } else {
        progress::wait_for(&inst, id).map_err(|_| not_active(handle, "MPI_Wait"))?
    };
    // SAFETY: as above.
    unsafe {
        request.write(after(handle, &done));
        store_done(out, &done);
    }
    completion_error(&done, "MPI_Wait")
}

pub(crate) unsafe fn mpi_test(
    request: *mut MPI_Request,
    flag: *mut c_int,
    out: *mut MPI_Status,
) -> MpiResult<()> {
    non_null(request, "MPI_Test", "request")?;
    non_null(flag, "MPI_Test", "flag")?;
    // SAFETY: checked non-null.
    let handle = unsafe { *request };
    let inst = instance("MPI_Test")?;
    let Some(id) = request_id(handle, "MPI_Test", "request")? else {
        // SAFETY: checked/caller-guaranteed pointers.
        unsafe {
            flag.write(1);
            status::store_empty(out);
        }
        return Ok(());
    };
    match progress::try_take(&inst, id).map_err(|_| not_active(handle, "MPI_Test"))? {
        None => {
            // SAFETY: checked non-null.
            unsafe { flag.write(0) };
            Ok(())
        }
        Some(done) => {
            // SAFETY: checked/caller-guaranteed pointers.
            unsafe {
                flag.write(1);
                request.write(after(handle, &done));
                store_done(out, &done);
            }
            completion_error(&done, "MPI_Test")
        }
    }
}

pub(crate) unsafe fn mpi_request_free(request: *mut MPI_Request) -> MpiResult<()> {
    non_null(request, "MPI_Request_free", "request")?;
    // SAFETY: checked non-null.
    let handle = unsafe { *request };
    let inst = instance("MPI_Request_free")?;
    let Some(id) = live_id(&inst, handle, "MPI_Request_free", "request")? else {
        return Err(MpiError::new(
            ErrorClass::Request,
            "MPI_Request_free(request=MPI_REQUEST_NULL): nothing to free",
        ));
    };
    progress::detach(&inst, id);
    // SAFETY: checked non-null.
    unsafe { request.write(MPI_REQUEST_NULL) };
    Ok(())
}

pub(crate) unsafe fn mpi_cancel(request: *mut MPI_Request) -> MpiResult<()> {
    non_null(request, "MPI_Cancel", "request")?;
    // SAFETY: checked non-null.
    let handle = unsafe { *request };
    let inst = instance("MPI_Cancel")?;
    match live_id(&inst, handle, "MPI_Cancel", "request")? {
        Some(id) => pt2pt::cancel(&inst, id),
        None => Err(MpiError::new(
            ErrorClass::Request,
            "MPI_Cancel(request=MPI_REQUEST_NULL): nothing to cancel",
        )),
    }
}

pub(crate) unsafe fn mpi_request_get_status(
    request: MPI_Request,
    flag: *mut c_int,
    out: *mut MPI_Status,
) -> MpiResult<()> {
    non_null(flag, "MPI_Request_get_status", "flag")?;
    let inst = instance("MPI_Request_get_status")?;
    let id = live_id(&inst, request, "MPI_Request_get_status", "request")?;
    let found = id.map(|id| progress::peek_status(&inst, id));
    // SAFETY: checked non-null; `out` null or writable.
    unsafe {
        match found {
            None => {
                flag.write(1);
                status::store_empty(out);
            }
            Some(Some(done)) => {
                flag.write(1);
                store_done(out, &done);
            }
            Some(None) => flag.write(0),
        }
    }
    Ok(())
}

// ------------------------------------------------------------------ many

/// Let the pending generalized requests among `open` block in their class's `wait_fn` (one
/// call for all requests of a class). `greqs` caches whether there are any with a `wait_fn`
/// (a request that had none pending at the first look never needs one).
fn block_on_greqs(inst: &Instance, open: &[Option<ReqId>], greqs: &mut Option<bool>) -> bool {
    if *greqs == Some(false) {
        return false;
    }
    let live: Vec<ReqId> = open.iter().flatten().copied().collect();
    let any =
        *greqs.get_or_insert_with(|| live.iter().any(|&id| progress::greq::has_wait_fn(inst, id)));
    any && progress::greq::block_on(inst, &live)
}

/// Multi-request calls keep their scratch arrays on the stack up to this many requests.
const STACK_REQUESTS: usize = 64;

/// `n` elements of scratch space: `stack` when it is large enough, else `heap`.
fn scratch<'a, T: Copy>(
    stack: &'a mut [T],
    heap: &'a mut Vec<T>,
    n: usize,
    fill: T,
) -> &'a mut [T] {
    if n <= stack.len() {
        &mut stack[..n]
    } else {
        heap.resize(n, fill);
        heap
    }
}

/// Complete every request in `reqs`, writing statuses; `MPI_ERR_IN_STATUS` if one failed.
fn finish_all(
    inst: &Instance,
    reqs: &mut [MPI_Request],
    stats: &mut Option<&mut [MPI_Status]>,
    func: &str,
) -> MpiResult<()> {
    let n = reqs.len();
    let (mut open_stack, mut open_heap) = ([None; STACK_REQUESTS], Vec::new());
    let open = scratch(&mut open_stack, &mut open_heap, n, None);
    // Handles are decoded here; whether each names a live request is checked by the first
    // sweep (with its VCI locked anyway), not by a separate lookup per request.
    let mut left = 0;
    for (i, slot) in open.iter_mut().enumerate() {
        let id = request_id(reqs[i], func, InArray(i))?;
        let status = match id {
            None => &status::EMPTY,
            Some(id) if is_completed_send(inst, id) => {
                reqs[i] = MPI_REQUEST_NULL;
                &Completed::SEND.status
            }
            Some(id) => {
                *slot = Some(id);
                left += 1;
                continue;
            }
        };
        if let Some(out) = stats {
            status::to_c(status, &mut out[i], false);
        }
    }
    // (index, error) of the operations that failed: rare, so kept apart.
    let mut failed: Vec<(usize, i32)> = Vec::new();
    let mut backoff = inst.backoff();
    let mut greqs = None;
    let mut first = true;
    while left > 0 {
        let swept = progress::sweep(inst, open, first, |i, c| {
            let s = done_status(&c);
            if s.error != MPI_SUCCESS {
                failed.push((i, s.error));
            }
            if let Some(out) = stats.as_deref_mut() {
                status::to_c(&s, &mut out[i], false);
            }
            reqs[i] = after(reqs[i], &c);
        });
        let got = swept.map_err(|i| {
            mpi_err!(Request, "{func}(array_of_requests[{i}]={:#x}): not an active request (already completed or freed?)",
                    reqs[i])
        })?;
        left -= got;
        first = false;
        if left == 0 {
            break;
        }
        if got == 0 {
            if block_on_greqs(inst, open, &mut greqs) {
                continue;
            }
            backoff.idle();
        } else {
            backoff.reset();
        }
    }
    if failed.is_empty() {
        return Ok(());
    }
    if let Some(out) = stats {
        out.iter_mut().for_each(|o| o.MPI_ERROR = MPI_SUCCESS);
        for &(i, error) in &failed {
            out[i].MPI_ERROR = error;
        }
    }
    Err(mpi_err!(
        InStatus,
        "{func}: an operation failed; see the statuses' MPI_ERROR"
    ))
}

pub(crate) unsafe fn mpi_waitall(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    array_of_statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let (reqs, mut stats) =
        // SAFETY: arrays of `count` per the caller's contract.
        unsafe { slices(count, array_of_requests, array_of_statuses, "MPI_Waitall")? };
    let inst = instance("MPI_Waitall")?;
    finish_all(&inst, reqs, &mut stats, "MPI_Waitall")
}

pub(crate) unsafe fn mpi_testall(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    flag: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> MpiResult<()> {
    non_null(flag, "MPI_Testall", "flag")?;
    let (reqs, mut stats) =
        // SAFETY: arrays of `count` per the caller's contract.
        unsafe { slices(count, array_of_requests, array_of_statuses, "MPI_Testall")? };
    let inst = instance("MPI_Testall")?;
    let ids: Vec<ReqId> = reqs
        .iter()
        .enumerate()
        .map(|(i, &h)| live_id(&inst, h, "MPI_Testall", InArray(i)))
        .collect::<MpiResult<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    // One progress pass, then a look that calls no query_fn (only completing calls do).
    weft_core::polled::run();
    let mut vcis: Vec<usize> = ids.iter().map(|id| id.vci() as usize).collect();
    vcis.sort_unstable();
    vcis.dedup();
    for v in vcis {
        progress::poke(&inst, v);
    }
    let all = ids.iter().all(|&id| progress::is_complete(&inst, id));
    // SAFETY: checked non-null.
    unsafe { flag.write(all as c_int) };
    if all {
        finish_all(&inst, reqs, &mut stats, "MPI_Testall")
    } else {
        Ok(())
    }
}

/// Look once over `reqs` for a completed request; `Some(None)` if all are null/inactive.
fn any_once(
    inst: &Instance,
    reqs: &mut [MPI_Request],
    func: &str,
) -> MpiResult<Option<Option<(usize, Completed)>>> {
    let mut active = false;
    for (i, h) in reqs.iter_mut().enumerate() {
        if let Some(id) = live_id(inst, *h, func, InArray(i))? {
            if progress::persistent_state(inst, id) == Some(PersistentState::Inactive) {
                continue;
            }
            active = true;
            if let Some(done) = progress::take_if_complete(inst, id) {
                *h = after(*h, &done);
                return Ok(Some(Some((i, done))));
            }
        }
    }
    Ok(if active { None } else { Some(None) })
}

/// `block_on_greqs` for an array of handles.
fn wait_in_greqs(inst: &Instance, reqs: &[MPI_Request], greqs: &mut Option<bool>) -> bool {
    if *greqs == Some(false) {
        return false;
    }
    let ids: Vec<Option<ReqId>> = reqs
        .iter()
        .map(|&h| request_id(h, "", "").ok().flatten())
        .collect();
    block_on_greqs(inst, &ids, greqs)
}

unsafe fn any_result(
    found: Option<(usize, Completed)>,
    index: *mut c_int,
    out: *mut MPI_Status,
    func: &str,
) -> MpiResult<()> {
    // SAFETY: index checked by callers; `out` null or writable.
    unsafe {
        match found {
            None => {
                index.write(MPI_UNDEFINED);
                status::store_empty(out);
                Ok(())
            }
            Some((i, done)) => {
                index.write(i as c_int);
                store_done(out, &done);
                completion_error(&done, func)
            }
        }
    }
}

pub(crate) unsafe fn mpi_waitany(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    index: *mut c_int,
    out: *mut MPI_Status,
) -> MpiResult<()> {
    non_null(index, "MPI_Waitany", "index")?;
    // SAFETY: arrays of `count` per the caller's contract.
    let (reqs, _) = unsafe {
        slices(
            count,
            array_of_requests,
            std::ptr::null_mut(),
            "MPI_Waitany",
        )?
    };
    let inst = instance("MPI_Waitany")?;
    let mut backoff = inst.backoff();
    let mut greqs = None;
    loop {
        if let Some(found) = any_once(&inst, reqs, "MPI_Waitany")? {
            // SAFETY: forwarded pointers.
            return unsafe { any_result(found, index, out, "MPI_Waitany") };
        }
        if wait_in_greqs(&inst, reqs, &mut greqs) {
            continue;
        }
        backoff.idle();
    }
}

pub(crate) unsafe fn mpi_testany(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    out: *mut MPI_Status,
) -> MpiResult<()> {
    non_null(index, "MPI_Testany", "index")?;
    non_null(flag, "MPI_Testany", "flag")?;
    // SAFETY: arrays of `count` per the caller's contract.
    let (reqs, _) = unsafe {
        slices(
            count,
            array_of_requests,
            std::ptr::null_mut(),
            "MPI_Testany",
        )?
    };
    let inst = instance("MPI_Testany")?;
    match any_once(&inst, reqs, "MPI_Testany")? {
        None => {
            // SAFETY: checked non-null.
            unsafe {
                flag.write(0);
                index.write(MPI_UNDEFINED);
            }
            Ok(())
        }
        Some(found) => {
            // SAFETY: checked non-null.
            unsafe { flag.write(1) };
            // SAFETY: forwarded pointers.
            unsafe { any_result(found, index, out, "MPI_Testany") }
        }
    }
}

/// Complete whatever is complete now; `None` if every request is null/inactive.
unsafe fn some_once(
    inst: &Instance,
    reqs: &mut [MPI_Request],
    indices: *mut c_int,
    stats: &mut Option<&mut [MPI_Status]>,
    func: &str,
) -> MpiResult<Option<(usize, bool)>> {
    let mut active = false;
    let mut done: Vec<(usize, Completed)> = Vec::new();
    for (i, h) in reqs.iter_mut().enumerate() {
        if let Some(id) = live_id(inst, *h, func, InArray(i))? {
            if progress::persistent_state(inst, id) == Some(PersistentState::Inactive) {
                continue;
            }
            active = true;
            if let Some(c) = progress::take_if_complete(inst, id) {
                *h = after(*h, &c);
                done.push((i, c));
            }
        }
    }
    if !active {
        return Ok(None);
    }
    let failed = done.iter().any(|(_, c)| c.status.error != MPI_SUCCESS);
    for (k, (i, c)) in done.iter().enumerate() {
        // SAFETY: `indices` holds `count` ints per the caller's contract.
        unsafe { indices.add(k).write(*i as c_int) };
        if let Some(out) = stats {
            status::to_c(&c.status, &mut out[k], failed);
        }
    }
    Ok(Some((done.len(), failed)))
}

/// `MPI_Waitsome` (`wait`) and `MPI_Testsome`.
///
/// # Safety
/// The arrays hold `count` elements (statuses: or `MPI_STATUSES_IGNORE`); `outcount`
/// null or writable.
pub(crate) unsafe fn some_impl(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MPI_Status,
    wait: bool,
    func: &str,
) -> MpiResult<()> {
    non_null(outcount, func, "outcount")?;
    // SAFETY: arrays of `count` per the caller's contract.
    let (reqs, mut stats) = unsafe { slices(count, array_of_requests, array_of_statuses, func)? };
    if count > 0 {
        non_null(array_of_indices, func, "array_of_indices")?;
    }
    let inst = instance(func)?;
    let mut backoff = inst.backoff();
    let mut greqs = None;
    loop {
        // SAFETY: forwarded arrays.
        let got = unsafe { some_once(&inst, reqs, array_of_indices, &mut stats, func)? };
        match got {
            None => {
                // SAFETY: checked non-null.
                unsafe { outcount.write(MPI_UNDEFINED) };
                return Ok(());
            }
            Some((n, failed)) if n > 0 || !wait => {
                // SAFETY: checked non-null.
                unsafe { outcount.write(n as c_int) };
                if failed {
                    return Err(mpi_err!(
                        InStatus,
                        "{func}: an operation failed; see the statuses' MPI_ERROR"
                    ));
                }
                return Ok(());
            }
            Some(_) => {
                if !wait_in_greqs(&inst, reqs, &mut greqs) {
                    backoff.idle();
                }
            }
        }
    }
}

// ------------------------------------------------------------------ status queries

unsafe fn read_status<'a>(s: *const MPI_Status, func: &str) -> MpiResult<&'a MPI_Status> {
    non_null(s, func, "status")?;
    // SAFETY: checked non-null; the caller passes a readable status.
    Ok(unsafe { &*s })
}

/// Whole elements of `t` in `bytes` (`MPI_Get_count`), `None` when not a whole number.
pub(crate) fn whole_count(t: &Type, bytes: u64) -> Option<u64> {
    if t.size == 0 {
        return Some(0);
    }
    bytes
        .is_multiple_of(t.size as u64)
        .then(|| bytes / t.size as u64)
}

/// `MPI_Get_count` (`measure` is `whole_count`) and `MPI_Get_elements` (`Type::elements_in`),
/// their `_c` twins and the `_x` form, forwarded by api/gen.py: `MPI_UNDEFINED` when the bytes
/// are not a whole number or the count does not fit (MPI 4.1 §3.2.5).
///
/// # Safety
/// `status` null or readable; `count` null or writable.
pub(crate) unsafe fn status_count<C: Int>(
    status: *const MPI_Status,
    datatype: MPI_Datatype,
    count: *mut C,
    func: &str,
    measure: fn(&Type, u64) -> Option<u64>,
) -> MpiResult<()> {
    non_null(count, func, "count")?;
    // SAFETY: forwarded caller contract.
    let st = status::from_c(unsafe { read_status(status, func)? });
    let t = datatypes::type_of(datatype, func, "datatype")?;
    let n = measure(&t, st.bytes).map_or(MPI_UNDEFINED.into(), |n| {
        i64::try_from(n).unwrap_or(i64::MAX)
    });
    // SAFETY: checked non-null.
    unsafe { write(count, C::or_undefined(n), func, "count") }
}

pub(crate) unsafe fn mpi_test_cancelled(
    status: *const MPI_Status,
    flag: *mut c_int,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    let st = status::from_c(unsafe { read_status(status, "MPI_Test_cancelled")? });
    // SAFETY: checked by write.
    unsafe { write(flag, st.cancelled as c_int, "MPI_Test_cancelled", "flag") }
}

unsafe fn update_status(
    s: *mut MPI_Status,
    func: &str,
    f: impl FnOnce(&mut Status),
) -> MpiResult<()> {
    non_null(s, func, "status")?;
    // SAFETY: checked non-null; the caller passes a writable status.
    let c = unsafe { &mut *s };
    let mut st = status::from_c(c);
    f(&mut st);
    status::to_c(&st, c, true);
    Ok(())
}

pub(crate) unsafe fn mpi_status_set_cancelled(
    status: *mut MPI_Status,
    flag: c_int,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        update_status(status, "MPI_Status_set_cancelled", |s| {
            s.cancelled = flag != 0
        })
    }
}

pub(crate) unsafe fn mpi_status_set_source(
    status: *mut MPI_Status,
    source: c_int,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { update_status(status, "MPI_Status_set_source", |s| s.source = source) }
}

pub(crate) unsafe fn mpi_status_set_tag(status: *mut MPI_Status, tag: c_int) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { update_status(status, "MPI_Status_set_tag", |s| s.tag = tag) }
}

pub(crate) unsafe fn mpi_status_set_error(status: *mut MPI_Status, err: c_int) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { update_status(status, "MPI_Status_set_error", |s| s.error = err) }
}

unsafe fn get_field(
    s: *const MPI_Status,
    out: *mut c_int,
    func: &str,
    arg: &str,
    f: impl FnOnce(&MPI_Status) -> c_int,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    let st = unsafe { read_status(s, func)? };
    // SAFETY: checked by write.
    unsafe { write(out, f(st), func, arg) }
}

pub(crate) unsafe fn mpi_status_get_source(
    status: *const MPI_Status,
    source: *mut c_int,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        get_field(status, source, "MPI_Status_get_source", "source", |s| {
            s.MPI_SOURCE
        })
    }
}

pub(crate) unsafe fn mpi_status_get_tag(
    status: *const MPI_Status,
    tag: *mut c_int,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { get_field(status, tag, "MPI_Status_get_tag", "tag", |s| s.MPI_TAG) }
}

pub(crate) unsafe fn mpi_status_get_error(
    status: *const MPI_Status,
    err: *mut c_int,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe { get_field(status, err, "MPI_Status_get_error", "err", |s| s.MPI_ERROR) }
}

// ------------------------------------------------------------------ persistent: start

unsafe fn start_one(
    inst: &Instance,
    handle: MPI_Request,
    func: &str,
    arg: impl std::fmt::Display + Copy,
) -> MpiResult<()> {
    let Some(id) = live_id(inst, handle, func, arg)? else {
        return Err(mpi_err!(
            Request,
            "{func}({arg}=MPI_REQUEST_NULL): a persistent request is required"
        ));
    };
    progress::persistent::start(inst, id, func)
}

pub(crate) unsafe fn mpi_start(request: *mut MPI_Request) -> MpiResult<()> {
    non_null(request, "MPI_Start", "request")?;
    let inst = instance("MPI_Start")?;
    // SAFETY: checked non-null.
    unsafe { start_one(&inst, *request, "MPI_Start", "request") }
}

pub(crate) unsafe fn mpi_startall(
    count: c_int,
    array_of_requests: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: an array of `count` per the caller's contract.
    let (reqs, _) = unsafe {
        slices(
            count,
            array_of_requests,
            std::ptr::null_mut(),
            "MPI_Startall",
        )?
    };
    let inst = instance("MPI_Startall")?;
    for (i, &h) in reqs.iter().enumerate() {
        // SAFETY: forwarded.
        unsafe { start_one(&inst, h, "MPI_Startall", InArray(i))? };
    }
    Ok(())
}

// ------------------------------------------------------------------ MPI 4.1 status queries

/// # Safety
/// `requests` must hold `count` elements.
unsafe fn const_requests<'a>(
    count: c_int,
    requests: *const MPI_Request,
    func: &str,
) -> MpiResult<&'a [MPI_Request]> {
    if count < 0 {
        return Err(mpi_err!(Count, "{func}(count={count}): negative count"));
    }
    if count == 0 {
        return Ok(&[]);
    }
    non_null(requests, func, "array_of_requests")?;
    // SAFETY: non-null array of `count` per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(requests, count as usize) })
}

/// The status of each request: `Some` if complete (or null/inactive: the empty status, with
/// `false` for "not active").
fn peek_all(
    inst: &Instance,
    reqs: &[MPI_Request],
    func: &str,
) -> MpiResult<Vec<(bool, Option<Status>)>> {
    reqs.iter()
        .enumerate()
        .map(|(i, &h)| {
            Ok(match live_id(inst, h, func, InArray(i))? {
                None => (false, Some(status::EMPTY)),
                Some(id) => match progress::peek_status(inst, id) {
                    Some(c) if c.inactive => (false, Some(status::EMPTY)),
                    Some(c) => (true, Some(c.status)),
                    None => (true, None),
                },
            })
        })
        .collect()
}

pub(crate) unsafe fn mpi_request_get_status_any(
    count: c_int,
    array_of_requests: *const MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    out: *mut MPI_Status,
) -> MpiResult<()> {
    let f = "MPI_Request_get_status_any";
    non_null(index, f, "index")?;
    non_null(flag, f, "flag")?;
    // SAFETY: forwarded caller contract.
    let reqs = unsafe { const_requests(count, array_of_requests, f)? };
    let inst = instance(f)?;
    let found = peek_all(&inst, reqs, f)?;
    let any_active = found.iter().any(|(a, _)| *a);
    let hit = found
        .iter()
        .enumerate()
        .find_map(|(i, (a, s))| if *a { s.map(|s| (i, s)) } else { None });
    // SAFETY: checked non-null; `out` null or writable.
    unsafe {
        match (any_active, hit) {
            (false, _) => {
                flag.write(1);
                index.write(MPI_UNDEFINED);
                status::store_empty(out);
            }
            (true, Some((i, s))) => {
                flag.write(1);
                index.write(i as c_int);
                status::store(out, &s, false);
            }
            (true, None) => {
                flag.write(0);
                index.write(MPI_UNDEFINED);
            }
        }
    }
    Ok(())
}

pub(crate) unsafe fn mpi_request_get_status_some(
    incount: c_int,
    array_of_requests: *const MPI_Request,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let f = "MPI_Request_get_status_some";
    non_null(outcount, f, "outcount")?;
    // SAFETY: forwarded caller contract.
    let reqs = unsafe { const_requests(incount, array_of_requests, f)? };
    if !reqs.is_empty() {
        non_null(array_of_indices, f, "array_of_indices")?;
    }
    let inst = instance(f)?;
    let found = peek_all(&inst, reqs, f)?;
    if !found.iter().any(|(a, _)| *a) {
        // SAFETY: checked non-null.
        unsafe { outcount.write(MPI_UNDEFINED) };
        return Ok(());
    }
    let mut n = 0;
    for (i, (active, s)) in found.iter().enumerate() {
        if let (true, Some(s)) = (active, s) {
            // SAFETY: arrays of `incount` per the caller's contract.
            unsafe {
                array_of_indices.add(n).write(i as c_int);
                if !array_of_statuses.is_null() {
                    status::to_c(s, &mut *array_of_statuses.add(n), true);
                }
            }
            n += 1;
        }
    }
    // SAFETY: checked non-null.
    unsafe { outcount.write(n as c_int) };
    Ok(())
}

pub(crate) unsafe fn mpi_request_get_status_all(
    count: c_int,
    array_of_requests: *const MPI_Request,
    flag: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let f = "MPI_Request_get_status_all";
    non_null(flag, f, "flag")?;
    // SAFETY: forwarded caller contract.
    let reqs = unsafe { const_requests(count, array_of_requests, f)? };
    let inst = instance(f)?;
    let found = peek_all(&inst, reqs, f)?;
    let all = found.iter().all(|(_, s)| s.is_some());
    // SAFETY: checked non-null; statuses hold `count` when not ignored.
    unsafe {
        flag.write(all as c_int);
        if all && !array_of_statuses.is_null() {
            for (i, (_, s)) in found.iter().enumerate() {
                status::to_c(
                    s.as_ref().expect("all complete"),
                    &mut *array_of_statuses.add(i),
                    true,
                );
            }
        }
    }
    Ok(())
}
