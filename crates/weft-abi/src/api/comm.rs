//! Communicators: queries, names, info hints, and every constructor and destructor
//! (attributes are in `attr.rs`, intercommunicators in `intercomm.rs`, topologies in
//! `topo.rs`).

use std::ffi::{c_char, c_int};
use std::sync::Arc;

use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::message::Status;
use weft_core::mpi_err;
use weft_core::object::attr::AttrList;
use weft_core::object::comm::{self as core_comm, SplitType};
use weft_core::object::idup;
use weft_core::object::{Comm, Compare, Info};

use crate::api::attr::{copy_attrs, copy_comm_attrs, free_comm_attrs};
use crate::api::group::compare_value;
use crate::args::{c_str, copy_out_str, non_null, write};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;
use crate::objects::{info_object, out_comm};
use crate::requests::{completed_request, request_handle};
use crate::thread_ranks;

/// Read a field of a process communicator without a reference count (`MPI_Comm_rank` and
/// `_size` are called in loops: the count's two atomic read-modify-writes were most of their
/// cost). `None` where that borrow is not available (thread level MULTIPLE, a thread
/// communicator, a communicator still being created): the caller takes the general path.
#[inline(always)]
fn quiet_query(comm: MPI_Comm, field: impl FnOnce(&Comm) -> u32) -> Option<u32> {
    // SAFETY: reading a field runs no user code and waits for no other process.
    let c = unsafe { objects::comm_quiet_unchecked(comm) }?;
    c.thread.is_none().then(|| field(c))
}

pub(crate) unsafe fn mpi_comm_size(comm: MPI_Comm, size: *mut c_int) -> MpiResult<()> {
    if let Some(n) = quiet_query(comm, |c| c.size()) {
        // SAFETY: the caller passes a valid int pointer (checked for null).
        return unsafe { write(size, n as c_int, "MPI_Comm_size", "size") };
    }
    if let Some(n) = thread_ranks::with(comm, |_, tc, _| tc.size()) {
        // SAFETY: the caller passes a valid int pointer (checked for null).
        return unsafe { write(size, n as c_int, "MPI_Comm_size", "size") };
    }
    let c = objects::comm_local(comm, "MPI_Comm_size", "comm")?;
    // SAFETY: the caller passes a valid int pointer (checked for null).
    unsafe { write(size, c.size() as c_int, "MPI_Comm_size", "size") }
}

pub(crate) unsafe fn mpi_comm_rank(comm: MPI_Comm, rank: *mut c_int) -> MpiResult<()> {
    if let Some(r) = quiet_query(comm, |c| c.rank) {
        // SAFETY: the caller passes a valid int pointer (checked for null).
        return unsafe { write(rank, r as c_int, "MPI_Comm_rank", "rank") };
    }
    if let Some(r) = thread_ranks::with(comm, |_, _, r| r) {
        // SAFETY: the caller passes a valid int pointer (checked for null).
        return unsafe { write(rank, r as c_int, "MPI_Comm_rank", "rank") };
    }
    let c = objects::comm_local(comm, "MPI_Comm_rank", "comm")?;
    // SAFETY: as above.
    unsafe { write(rank, c.rank as c_int, "MPI_Comm_rank", "rank") }
}

pub(crate) unsafe fn mpi_comm_remote_size(comm: MPI_Comm, size: *mut c_int) -> MpiResult<()> {
    let func = "MPI_Comm_remote_size";
    let c = objects::comm_local(comm, func, "comm")?;
    let r = c
        .remote
        .as_ref()
        .ok_or_else(|| mpi_err!(Comm, "{func}(comm): not an intercommunicator"))?;
    // SAFETY: as above.
    unsafe { write(size, r.size() as c_int, func, "size") }
}

pub(crate) unsafe fn mpi_comm_test_inter(comm: MPI_Comm, flag: *mut c_int) -> MpiResult<()> {
    let c = objects::comm_local(comm, "MPI_Comm_test_inter", "comm")?;
    // SAFETY: as above.
    unsafe { write(flag, c.is_inter() as c_int, "MPI_Comm_test_inter", "flag") }
}

pub(crate) unsafe fn mpi_comm_set_name(comm: MPI_Comm, comm_name: *const c_char) -> MpiResult<()> {
    let c = objects::comm_local(comm, "MPI_Comm_set_name", "comm")?;
    // SAFETY: the caller passes a NUL-terminated string (checked for null).
    let name = unsafe { c_str(comm_name, "MPI_Comm_set_name", "comm_name")? };
    if name.len() >= MPI_MAX_OBJECT_NAME as usize {
        return Err(MpiError::new(
            ErrorClass::Arg,
            "MPI_Comm_set_name(comm_name): longer than MPI_MAX_OBJECT_NAME",
        ));
    }
    c.set_name(&name);
    Ok(())
}

pub(crate) unsafe fn mpi_comm_get_name(
    comm: MPI_Comm,
    comm_name: *mut c_char,
    resultlen: *mut c_int,
) -> MpiResult<()> {
    non_null(resultlen, "MPI_Comm_get_name", "resultlen")?;
    // MPICH names the null handle too (its test suite checks it); harmless and convenient.
    let name = if comm == MPI_COMM_NULL {
        "MPI_COMM_NULL".to_owned()
    } else {
        objects::comm_local(comm, "MPI_Comm_get_name", "comm")?.name()
    };
    // SAFETY: the standard requires a buffer of MPI_MAX_OBJECT_NAME bytes.
    unsafe {
        copy_out_str(
            &name,
            comm_name,
            MPI_MAX_OBJECT_NAME as usize,
            resultlen,
            "MPI_Comm_get_name",
            "comm_name",
        )
    }
}

pub(crate) unsafe fn mpi_comm_compare(
    comm1: MPI_Comm,
    comm2: MPI_Comm,
    result: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Comm_compare";
    let c1 = objects::comm_local(comm1, func, "comm1")?;
    let c2 = objects::comm_local(comm2, func, "comm2")?;
    let r = if comm1 == comm2 || Arc::ptr_eq(&c1, &c2) {
        Compare::Ident
    } else {
        c1.compare(&c2)
    };
    // SAFETY: the caller passes a valid int pointer (checked for null).
    unsafe { write(result, compare_value(r), func, "result") }
}

/// The info hints Weft understands on communicators; others are ignored (not stored, not
/// returned by `MPI_Comm_get_info`), as the standard allows and MPICH does.
pub(crate) const COMM_HINTS: &[&str] = &[
    "mpi_assert_no_any_tag",
    "mpi_assert_no_any_source",
    "mpi_assert_exact_length",
    "mpi_assert_allow_overtaking",
    "mpi_assert_strict_persistent_collective_ordering",
];

/// The hints of an info handle (`MPI_INFO_NULL`: none) this implementation understands on
/// a communicator; an assertion's value must be "true" or "false".
fn hints_of(info: MPI_Info, func: &str) -> MpiResult<Vec<(String, String)>> {
    if info == MPI_INFO_NULL {
        return Ok(Vec::new());
    }
    Ok(info_object(info, func)?
        .pairs()
        .into_iter()
        .filter(|(k, v)| COMM_HINTS.contains(&k.as_str()) && (v == "true" || v == "false"))
        .collect())
}

/// Duplicate with attributes copied; `hints` replaces the parent's hints when given.
fn dup_impl(
    comm: MPI_Comm,
    hints: Option<Vec<(String, String)>>,
    func: &str,
) -> MpiResult<Arc<Comm>> {
    let c = objects::comm(comm, func, "comm")?;
    let new = core_comm::dup_named(&c, func)?;
    if let Some(h) = hints {
        new.clear_hints();
        new.set_hints(&h);
    }
    copy_comm_attrs(comm, &c, &new, func)?;
    Ok(new)
}

/// The dup family on a thread communicator by one of its ranks inside the region
/// (`threadcomm::dup`; `None`: the calling thread is no rank of `comm` now). Every rank takes
/// part in the call, so the nonblocking forms are complete when they return.
///
/// # Safety
/// `newcomm` is non-null and writable.
unsafe fn thread_dup(
    comm: MPI_Comm,
    hints: Option<&[(String, String)]>,
    newcomm: *mut MPI_Comm,
    func: &str,
) -> Option<MpiResult<()>> {
    if !crate::thread_ranks::is_inside(comm) {
        return None;
    }
    let new = crate::api::threadcomm::dup(comm, hints, func);
    // SAFETY: non-null and writable per the contract. On error newcomm is MPI_COMM_NULL.
    unsafe { newcomm.write(*new.as_ref().unwrap_or(&MPI_COMM_NULL)) };
    Some(new.map(|_| ()))
}

pub(crate) unsafe fn mpi_comm_dup(comm: MPI_Comm, newcomm: *mut MPI_Comm) -> MpiResult<()> {
    non_null(newcomm, "MPI_Comm_dup", "newcomm")?;
    // SAFETY: checked non-null; writable per the caller's contract.
    if let Some(r) = unsafe { thread_dup(comm, None, newcomm, "MPI_Comm_dup") } {
        return r;
    }
    let new = dup_impl(comm, None, "MPI_Comm_dup").inspect_err(|_| {
        // SAFETY: checked non-null. On error newcomm is MPI_COMM_NULL (as MPICH does).
        unsafe { newcomm.write(MPI_COMM_NULL) }
    })?;
    // SAFETY: checked non-null.
    unsafe { out_comm(newcomm, Some(new)) };
    Ok(())
}

pub(crate) unsafe fn mpi_comm_dup_with_info(
    comm: MPI_Comm,
    info: MPI_Info,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Comm_dup_with_info";
    non_null(newcomm, func, "newcomm")?;
    let hints = hints_of(info, func)?;
    // SAFETY: checked non-null; writable per the caller's contract.
    if let Some(r) = unsafe { thread_dup(comm, Some(&hints), newcomm, func) } {
        return r;
    }
    let new = dup_impl(comm, Some(hints), func).inspect_err(|_| {
        // SAFETY: checked non-null. On error newcomm is MPI_COMM_NULL.
        unsafe { newcomm.write(MPI_COMM_NULL) }
    })?;
    // SAFETY: checked non-null.
    unsafe { out_comm(newcomm, Some(new)) };
    Ok(())
}

/// `MPI_Comm_idup`: attributes are copied (their callbacks run) at the call; the handle is
/// returned at once and names the new communicator, whose context id is agreed in the
/// progress engine (`weft_core::object::idup`): until then what needs the id is refused
/// (`objects::comm`), what the object keeps can be used (`objects::comm_local`).
unsafe fn idup_impl(
    comm: MPI_Comm,
    hints: Option<Vec<(String, String)>>,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
    func: &'static str,
) -> MpiResult<()> {
    non_null(newcomm, func, "newcomm")?;
    non_null(request, func, "request")?;
    // SAFETY: checked non-null; writable per the caller's contract.
    if let Some(r) = unsafe { thread_dup(comm, hints.as_deref(), newcomm, func) } {
        let done = r.map(|()| {
            let c = crate::thread_ranks::comm(comm).expect("inside the region");
            completed_request(&c, Status::default(), comm)
        });
        // SAFETY: checked non-null. On error the request is MPI_REQUEST_NULL.
        unsafe { request.write(*done.as_ref().unwrap_or(&MPI_REQUEST_NULL)) };
        return done.map(|_| ());
    }
    let c = objects::comm(comm, func, "comm")?;
    // Copied first: a failing copy callback fails the call before the agreement starts.
    let attrs = AttrList::new();
    copy_attrs(comm, &c.attrs, &attrs, func)?;
    let (new, id) = idup::idup(&c, comm, func);
    if let Some(h) = hints {
        new.clear_hints();
        new.set_hints(&h);
    }
    for (kv, v) in attrs.snapshot() {
        new.attrs.set(kv, v);
    }
    let handle = objects::comm_handle(Some(new));
    // SAFETY: both checked non-null.
    unsafe {
        newcomm.write(handle);
        request.write(request_handle(id));
    }
    Ok(())
}

pub(crate) unsafe fn mpi_comm_idup(
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: pointers checked inside.
    unsafe { idup_impl(comm, None, newcomm, request, "MPI_Comm_idup") }
}

pub(crate) unsafe fn mpi_comm_idup_with_info(
    comm: MPI_Comm,
    info: MPI_Info,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let func = "MPI_Comm_idup_with_info";
    let hints = hints_of(info, func)?;
    // SAFETY: pointers checked inside.
    unsafe { idup_impl(comm, Some(hints), newcomm, request, func) }
}

/// `MPI_Comm_split` (or `_type`) of a thread communicator by one of its ranks inside the
/// region (`api::threadcomm::split`); `newcomm` is `MPI_COMM_NULL` on error.
///
/// # Safety
/// `newcomm` is non-null and writable.
unsafe fn thread_split(
    comm: MPI_Comm,
    color: Option<u32>,
    key: c_int,
    newcomm: *mut MPI_Comm,
    func: &str,
) -> MpiResult<()> {
    let new = crate::api::threadcomm::split(comm, color, key, func);
    // SAFETY: non-null and writable per the contract.
    unsafe { newcomm.write(*new.as_ref().unwrap_or(&MPI_COMM_NULL)) };
    new.map(|_| ())
}

pub(crate) unsafe fn mpi_comm_split(
    comm: MPI_Comm,
    color: c_int,
    key: c_int,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Comm_split";
    // `None`: a thread communicator used inside its region.
    let c = (!crate::thread_ranks::is_inside(comm))
        .then(|| objects::comm(comm, func, "comm"))
        .transpose()?;
    non_null(newcomm, func, "newcomm")?;
    let color = match color {
        MPI_UNDEFINED => None,
        c if c >= 0 => Some(c as u32),
        c => {
            return Err(mpi_err!(
                Arg,
                "{func}(color={c}): colours must be non-negative or MPI_UNDEFINED"
            ))
        }
    };
    let Some(c) = c else {
        // SAFETY: checked non-null.
        return unsafe { thread_split(comm, color, key, newcomm, func) };
    };
    let new = core_comm::split(&c, color, key)?;
    // SAFETY: checked non-null.
    unsafe { out_comm(newcomm, new) };
    Ok(())
}

pub(crate) unsafe fn mpi_comm_split_type(
    comm: MPI_Comm,
    split_type: c_int,
    key: c_int,
    info: MPI_Info,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Comm_split_type";
    if crate::thread_ranks::is_inside(comm) {
        non_null(newcomm, func, "newcomm")?;
        // Threads of one process share its memory: the shared split is by process.
        let color = match split_type {
            MPI_UNDEFINED => None,
            MPI_COMM_TYPE_SHARED => crate::thread_ranks::comm(comm).map(|c| c.rank),
            t => {
                return Err(mpi_err!(
                    UnsupportedOperation,
                    "{func}(split_type={t}): only MPI_COMM_TYPE_SHARED and MPI_UNDEFINED \
                         split a thread communicator in Weft yet"
                ))
            }
        };
        // SAFETY: checked non-null.
        return unsafe { thread_split(comm, color, key, newcomm, func) };
    }
    let c = objects::comm(comm, func, "comm")?;
    non_null(newcomm, func, "newcomm")?;
    let pairs = if info == MPI_INFO_NULL {
        Vec::new()
    } else {
        info_object(info, func)?.pairs()
    };
    let kind = match split_type {
        MPI_UNDEFINED => None,
        MPI_COMM_TYPE_SHARED => Some(SplitType::Shared),
        MPI_COMM_TYPE_HW_UNGUIDED => Some(SplitType::Unguided),
        // Both are guided by the mpi_hw_resource_type hint (mpi_shared_memory: the node, as
        // MPI_COMM_TYPE_SHARED); without it there is nothing to be guided by: no
        // communicator.
        MPI_COMM_TYPE_HW_GUIDED | MPI_COMM_TYPE_RESOURCE_GUIDED => Some(SplitType::Guided(
            pairs
                .iter()
                .find(|(k, _)| k == "mpi_hw_resource_type")
                .map(|(_, v)| v.clone())
                .unwrap_or_default(),
        )),
        t => return Err(mpi_err!(Arg, "{func}(split_type={t}): not a split type")),
    };
    let hints = hints_of(info, func)?;
    let unguided = kind == Some(SplitType::Unguided);
    let (new, level) = core_comm::split_type_level(&c, kind, key)?;
    // The info's hints hold for the new communicator (MPI_Comm_get_info returns them).
    if let Some(new) = &new {
        new.set_hints(&hints);
    }
    // An unguided split reports the level it chose in the info argument (MPI 4.0 7.4.2).
    if let (true, Some(l), true) = (unguided, level, new.is_some()) {
        if info != MPI_INFO_NULL {
            info_object(info, func)?.set(func, "mpi_hw_resource_type", l)?;
        }
    }
    // SAFETY: checked non-null.
    unsafe { out_comm(newcomm, new) };
    Ok(())
}

pub(crate) unsafe fn mpi_comm_create(
    comm: MPI_Comm,
    group: MPI_Group,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Comm_create";
    if thread_ranks::is_inside(comm) {
        let g = objects::group(group, func, "group")?;
        non_null(newcomm, func, "newcomm")?;
        let new = crate::api::threadcomm::create(comm, &g, func);
        // SAFETY: checked non-null.
        unsafe { newcomm.write(*new.as_ref().unwrap_or(&MPI_COMM_NULL)) };
        return new.map(|_| ());
    }
    let c = objects::comm(comm, func, "comm")?;
    let g = objects::group(group, func, "group")?;
    non_null(newcomm, func, "newcomm")?;
    let new = if c.is_inter() {
        crate::api::intercomm::create_on_inter(&c, &g, func)?
    } else {
        core_comm::create(&c, &g)?
    };
    // SAFETY: checked non-null.
    unsafe { out_comm(newcomm, new) };
    Ok(())
}

pub(crate) unsafe fn mpi_comm_create_group(
    comm: MPI_Comm,
    group: MPI_Group,
    tag: c_int,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Comm_create_group";
    let c = objects::comm(comm, func, "comm")?;
    let g = objects::group(group, func, "group")?;
    non_null(newcomm, func, "newcomm")?;
    if tag < 0 {
        return Err(mpi_err!(
            Tag,
            "{func}(tag={tag}): tags must be in 0..=MPI_TAG_UB"
        ));
    }
    let new = if g.is_empty() {
        None
    } else {
        core_comm::create_group(&c, &g, tag)?
    };
    // SAFETY: checked non-null.
    unsafe { out_comm(newcomm, new) };
    Ok(())
}

unsafe fn free_impl(comm: *mut MPI_Comm, func: &str) -> MpiResult<()> {
    non_null(comm, func, "comm")?;
    // SAFETY: checked non-null.
    let h = unsafe { *comm };
    if h == MPI_COMM_WORLD || h == MPI_COMM_SELF {
        let name = if h == MPI_COMM_WORLD {
            "MPI_COMM_WORLD"
        } else {
            "MPI_COMM_SELF"
        };
        return Err(mpi_err!(
            Comm,
            "{func}(comm={name}): a predefined communicator cannot be freed"
        ));
    }
    if crate::thread_ranks::is_inside(h) {
        crate::api::threadcomm::free_dup(h, func)?;
        // SAFETY: checked non-null.
        unsafe { comm.write(MPI_COMM_NULL) };
        return Ok(());
    }
    let c = objects::comm_settled(h, func, "comm")?;
    // Operations still queued on its offload stream use it: they run first.
    weft_core::object::stream_comm::drain_before_free(&c, func)?;
    free_comm_attrs(h, &c, func)?;
    let unmatched = weft_core::pt2pt::discard_unmatched(&c);
    let removed = objects::COMMS
        .remove(h)
        .map_err(|why| mpi_err!(Comm, "{func}(comm={h:#x}): {}", why.describe()))?;
    drop(c);
    // Its streams stop counting it now (the object itself may outlive the call).
    if let Some(s) = &removed.streams {
        s.detach();
    }
    objects::release_comm(removed);
    // SAFETY: as above.
    unsafe { comm.write(MPI_COMM_NULL) };
    // The communicator is freed either way; messages nobody received are an error of the
    // program's, reported (MPICH's errors/comm/unmatched) rather than left to match a
    // later communicator that gets the same context id.
    match unmatched.first() {
        None => Ok(()),
        Some(m) => Err(mpi_err!(Other, "{func}(comm={h:#x}): {} message(s) sent on the communicator were never received and are discarded (the first from rank {}, tag {}, {} bytes)",
                unmatched.len(),
                m.source,
                m.tag,
                m.bytes)),
    }
}

pub(crate) unsafe fn mpi_comm_free(comm: *mut MPI_Comm) -> MpiResult<()> {
    // SAFETY: checked inside.
    unsafe { free_impl(comm, "MPI_Comm_free") }
}

/// `MPI_Comm_disconnect`: collective; waits until every process of the communicator (both
/// groups of an intercommunicator) has called it, so that what the others sent on it has
/// arrived, then frees it like `MPI_Comm_free` (this process's own operations on it are
/// complete when the program calls it: the standard requires it).
pub(crate) unsafe fn mpi_comm_disconnect(comm: *mut MPI_Comm) -> MpiResult<()> {
    let func = "MPI_Comm_disconnect";
    non_null(comm, func, "comm")?;
    // SAFETY: checked non-null; the caller passes a readable MPI_Comm.
    let h = unsafe { comm.read() };
    if h != MPI_COMM_WORLD && h != MPI_COMM_SELF {
        if let Ok(c) = objects::comm(h, func, "comm") {
            weft_core::coll::barrier(&c)?;
            // A spawned job reached only through it finalizes independently now.
            weft_core::runtime::spawn::disconnected(&c);
        }
    }
    // SAFETY: checked inside.
    unsafe { free_impl(comm, func) }
}

pub(crate) fn mpi_comm_set_info(comm: MPI_Comm, info: MPI_Info) -> MpiResult<()> {
    let func = "MPI_Comm_set_info";
    let c = objects::comm_local(comm, func, "comm")?;
    let hints = hints_of(info, func)?;
    c.set_hints(&hints);
    Ok(())
}

pub(crate) unsafe fn mpi_comm_get_info(comm: MPI_Comm, info_used: *mut MPI_Info) -> MpiResult<()> {
    let func = "MPI_Comm_get_info";
    let c = objects::comm_local_or_thread(comm, func, "comm")?;
    non_null(info_used, func, "info_used")?;
    let h = objects::INFOS.insert(Arc::new(Info::from_pairs(c.hints())));
    // SAFETY: checked non-null.
    unsafe { info_used.write(h) };
    Ok(())
}
