//! Thread communicators (`MPIX_Threadcomm_*`, docs/threadcomm.md): creating, starting,
//! finishing and freeing them. The calls made on one inside its region are routed in the
//! files of their families (`comm.rs`, `pt2pt.rs`, `recv.rs`, `coll.rs`) through
//! `thread_ranks`.

use std::ffi::c_int;
use std::sync::Arc;

use weft_core::datatype::Buf;
use weft_core::error::{MpiError, MpiResult};
use weft_core::mpi_err;
use weft_core::object::comm as core_comm;
use weft_core::object::{Comm, Group};
use weft_core::pt2pt::thread_wire;
use weft_core::threadcomm::{group, split};

use crate::args::{non_null, write};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects::{self, out_comm};
use crate::thread_ranks;

/// The thread communicator a handle names (`MPI_ERR_COMM` for any other communicator).
fn thread_comm(handle: MPI_Comm, func: &str) -> MpiResult<Arc<Comm>> {
    if handle == MPI_COMM_NULL || handle == MPI_COMM_WORLD || handle == MPI_COMM_SELF {
        return Err(not_thread(func));
    }
    let c = objects::comm_any(handle, func, "threadcomm")?;
    if c.thread.is_none() {
        return Err(not_thread(func));
    }
    Ok(c)
}

fn not_thread(func: &str) -> MpiError {
    mpi_err!(
        Comm,
        "{func}(threadcomm): not a thread communicator (made by MPIX_Threadcomm_init)"
    )
}

pub(crate) unsafe fn mpix_threadcomm_init(
    comm: MPI_Comm,
    num_threads: c_int,
    newthreadcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPIX_Threadcomm_init";
    non_null(newthreadcomm, func, "newthreadcomm")?;
    let c = objects::comm(comm, func, "comm")?;
    if num_threads < 1 {
        return Err(mpi_err!(
            Arg,
            "{func}(num_threads={num_threads}): at least one thread is required"
        ));
    }
    if c.is_inter() {
        return Err(mpi_err!(
            Comm,
            "{func}(comm): an intercommunicator cannot be made a thread communicator"
        ));
    }
    c.session.instance.allow_concurrent_calls();
    let tc = thread_wire::thread_comm(&c, num_threads as u32, func)?;
    let new = core_comm::thread_dup(&c, tc, func)?;
    let t = new.thread.as_ref().expect("a thread communicator");
    if let Some(m) = group::root(new.context_id(), t.size()) {
        t.set_members(m);
    }
    // SAFETY: checked non-null.
    unsafe { out_comm(newthreadcomm, Some(new)) };
    Ok(())
}

pub(crate) fn mpix_threadcomm_start(threadcomm: MPI_Comm) -> MpiResult<()> {
    let func = "MPIX_Threadcomm_start";
    let c = thread_comm(threadcomm, func)?;
    if thread_ranks::is_inside(threadcomm) {
        return Err(mpi_err!(
            Comm,
            "{func}(threadcomm): this thread already started it (and did not finish)"
        ));
    }
    let tc = c.thread.clone().expect("checked a thread communicator");
    let rank = tc.start()?;
    thread_ranks::enter(threadcomm, c, rank);
    Ok(())
}

pub(crate) fn mpix_threadcomm_finish(threadcomm: MPI_Comm) -> MpiResult<()> {
    let func = "MPIX_Threadcomm_finish";
    thread_comm(threadcomm, func)?;
    finish_rank(threadcomm, func)
}

/// The calling thread's rank of `threadcomm` leaves its region: it waits for every rank (and
/// is refused while it has requests), then its attributes go.
fn finish_rank(threadcomm: MPI_Comm, func: &str) -> MpiResult<()> {
    thread_ranks::with(threadcomm, |_, tc, rank| tc.finish(rank)).unwrap_or_else(|| {
        Err(mpi_err!(
            Comm,
            "{func}(threadcomm): this thread did not start it"
        ))
    })?;
    // The thread rank's attributes go once its region is over (their delete callbacks may
    // still ask the thread communicator for the rank and size, not communicate on it).
    let attrs = thread_ranks::attrs(threadcomm);
    let deleted = attrs.map_or(Ok(()), |l| {
        crate::api::attr::delete_all(threadcomm, &l, func)
    });
    thread_ranks::leave(threadcomm);
    deleted
}

/// `MPI_Comm_dup` of the thread communicator `handle` by one of its ranks inside the region
/// (collective over its ranks): the duplicate has the same ranks and is born active; it is
/// freed with `MPI_Comm_free` (`free_dup`) before the region ends. Each process's first rank
/// makes it (over the processes, as `MPIX_Threadcomm_init` does) and hands it to the
/// process's other ranks; each rank's attributes are copied by their copy callbacks.
pub(crate) fn dup(
    handle: MPI_Comm,
    hints: Option<&[(String, String)]>,
    func: &str,
) -> MpiResult<MPI_Comm> {
    let (c, rank) = thread_ranks::comm_and_rank(handle).ok_or_else(|| not_inside(func))?;
    let tc = c.thread.clone().expect("a thread communicator");
    let made = tc.share(rank, || {
        let copy = thread_wire::thread_comm(&c, tc.threads(), func)?.born_active();
        let new = core_comm::thread_dup(&c, copy, func)?;
        let all: Vec<u32> = (0..tc.size()).collect();
        new.thread
            .as_ref()
            .expect("a thread communicator")
            .inherit_members(&tc, &all);
        if let Some(h) = hints {
            new.clear_hints();
            new.set_hints(h);
        }
        Ok(Arc::new((objects::comm_handle(Some(new.clone())), new)))
    })?;
    let (h, new) = (made.0, made.1.clone());
    thread_ranks::enter(h, new, rank);
    if let (Some(old), Some(fresh)) = (thread_ranks::attrs(handle), thread_ranks::attrs(h)) {
        crate::api::attr::copy_attrs(handle, &old, &fresh, func)?;
    }
    Ok(h)
}

/// `MPI_Comm_split` of the thread communicator `handle` by one of its ranks inside the region
/// (collective over its ranks; `MPI_Comm_split_type` passes the colour it chose): every rank
/// learns every rank's colour, key and process (an allgather on the thread communicator),
/// then each process's first rank makes the process's new thread communicators, one per
/// colour in ascending order over the processes that have ranks of it, and hands them to the
/// process's other ranks. Each new one is born active, holds its ranks in key order (then
/// old rank order), inherits the errhandler and no attributes, and is freed with
/// `MPI_Comm_free` (`free_dup`) before the region ends. `None`: `MPI_UNDEFINED`.
pub(crate) fn split(
    handle: MPI_Comm,
    color: Option<u32>,
    key: i32,
    func: &str,
) -> MpiResult<MPI_Comm> {
    let (c, rank) = thread_ranks::comm_and_rank(handle).ok_or_else(|| not_inside(func))?;
    let tc = c.thread.clone().expect("a thread communicator");
    let mine = split::Entry {
        color,
        key,
        process: c.rank,
    }
    .encode();
    let mut table = vec![0u8; split::Entry::BYTES * tc.size() as usize];
    // SAFETY: both buffers are live locals of exactly these lengths for the whole call.
    let (send, recv) = unsafe {
        (
            Buf::new(mine.as_ptr() as usize, mine.len()),
            Buf::new(table.as_mut_ptr() as usize, table.len()),
        )
    };
    tc.allgather(rank, Some(&send), &recv)?;
    let plan = split::Plan::new(&split::Entry::decode_all(&table), func)?;
    let made = tc.share(rank, || make_colours(&c, &plan, func).map(Arc::new))?;
    let Some((color, new_rank)) = plan.place(rank) else {
        return Ok(MPI_COMM_NULL);
    };
    let (h, new) = made
        .iter()
        .find(|(col, _, _)| *col == color)
        .map(|(_, h, new)| (*h, new.clone()))
        .expect("the first rank made every colour of its process");
    thread_ranks::enter(h, new, new_rank);
    Ok(h)
}

/// This process's new thread communicators of `plan`, made by its first rank: per colour,
/// the processes that have ranks of it split off (every process takes part, in ascending
/// colour order), then those make the thread communicator over them.
fn make_colours(
    c: &Arc<Comm>,
    plan: &split::Plan,
    func: &str,
) -> MpiResult<Vec<(u32, MPI_Comm, Arc<Comm>)>> {
    let parent = c.thread.as_ref().expect("a thread communicator");
    let mut made = Vec::new();
    for colour in plan.colours() {
        let n = colour.threads_of(c.rank);
        let sub = if c.size() == 1 {
            Some(c.clone())
        } else {
            core_comm::split(c, (n > 0).then_some(0), c.rank as i32)?
        };
        let Some(sub) = sub else { continue };
        let tc = thread_wire::thread_comm(&sub, n, func)?.born_active();
        let new = core_comm::thread_dup(&sub, tc, func)?;
        new.thread
            .as_ref()
            .expect("a thread communicator")
            .inherit_members(parent, colour.members());
        made.push((colour.color, objects::comm_handle(Some(new.clone())), new));
    }
    Ok(made)
}

/// The group of the thread communicator `handle` by one of its ranks inside the region
/// (`MPI_Comm_group`): its thread ranks (`threadcomm::group`).
pub(crate) fn comm_group(handle: MPI_Comm, func: &str) -> MpiResult<Group> {
    let c = thread_ranks::comm(handle).ok_or_else(|| not_inside(func))?;
    let tc = c.thread.as_ref().expect("a thread communicator");
    let members = tc.members().ok_or_else(|| no_group(func))?;
    Ok(Group::new(members.to_vec()))
}

/// `MPI_Comm_create` of the thread communicator `handle` with `g` by one of its ranks inside
/// the region (collective over its ranks): the split whose colour is membership of `g` and
/// whose key is the rank in `g` (`split`); `MPI_COMM_NULL` outside `g`.
pub(crate) fn create(handle: MPI_Comm, g: &Group, func: &str) -> MpiResult<MPI_Comm> {
    let (c, rank) = thread_ranks::comm_and_rank(handle).ok_or_else(|| not_inside(func))?;
    let tc = c.thread.as_ref().expect("a thread communicator");
    let mine = tc.members().ok_or_else(|| no_group(func))?;
    let (color, key) = group::create_place(g.members(), mine, rank, func)?;
    split(handle, color, key, func)
}

#[cold]
fn no_group(func: &str) -> MpiError {
    mpi_err!(
        UnsupportedOperation,
        "{func}(comm): this thread communicator has no group (more than 65536 ranks or \
         too many communicators in Weft)"
    )
}

/// `MPI_Comm_free` of a thread communicator by one of its ranks inside the region: only a
/// duplicate made there (`dup`), which every rank frees together: like finish, then each
/// process's first rank lets its handle go.
pub(crate) fn free_dup(handle: MPI_Comm, func: &str) -> MpiResult<()> {
    let (c, rank) = thread_ranks::comm_and_rank(handle).ok_or_else(|| not_inside(func))?;
    let tc = c.thread.clone().expect("a thread communicator");
    if !tc.is_born_active() {
        return Err(mpi_err!(
            Comm,
            "{func}(comm): a thread communicator made by MPIX_Threadcomm_init is freed by \
                 MPIX_Threadcomm_free after MPIX_Threadcomm_finish"
        ));
    }
    finish_rank(handle, func)?;
    if tc.is_first(rank) {
        drop(c);
        let removed = objects::COMMS
            .remove(handle)
            .map_err(|why| mpi_err!(Comm, "{func}(comm={handle:#x}): {}", why.describe()))?;
        objects::release_comm(removed);
    }
    Ok(())
}

fn not_inside(func: &str) -> MpiError {
    mpi_err!(
        Comm,
        "{func}(comm): this thread is not a rank of the thread communicator now"
    )
}

pub(crate) unsafe fn mpix_threadcomm_free(threadcomm: *mut MPI_Comm) -> MpiResult<()> {
    let func = "MPIX_Threadcomm_free";
    non_null(threadcomm, func, "threadcomm")?;
    // SAFETY: checked non-null.
    let h = unsafe { *threadcomm };
    let c = thread_comm(h, func)?;
    if c.thread.as_ref().is_some_and(|t| t.is_active()) {
        return Err(mpi_err!(
            Comm,
            "{func}(threadcomm): the thread communicator is active (call it after every \
                 thread called MPIX_Threadcomm_finish)"
        ));
    }
    crate::api::attr::free_comm_attrs(h, &c, func)?;
    let removed = objects::COMMS
        .remove(h)
        .map_err(|why| mpi_err!(Comm, "{func}(threadcomm={h:#x}): {}", why.describe()))?;
    drop(c);
    objects::release_comm(removed);
    // SAFETY: as above.
    unsafe { threadcomm.write(MPI_COMM_NULL) };
    Ok(())
}

pub(crate) unsafe fn mpix_comm_test_threadcomm(comm: MPI_Comm, flag: *mut c_int) -> MpiResult<()> {
    let func = "MPIX_Comm_test_threadcomm";
    let is = match comm {
        MPI_COMM_WORLD | MPI_COMM_SELF => false,
        _ => objects::comm_any(comm, func, "comm")?.thread.is_some(),
    };
    // SAFETY: the caller passes a writable int (checked for null).
    unsafe { write(flag, is as c_int, func, "flag") }
}
