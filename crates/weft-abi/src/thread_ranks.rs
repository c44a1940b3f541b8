//! Which thread communicators the calling thread is a rank of (`MPIX_Threadcomm_start` until
//! `MPIX_Threadcomm_finish`): thread-local, so finding one's rank takes no lock and touches
//! no shared cache line. Part of the lookup layer: `objects.rs` asks it whether a thread
//! communicator is used inside its region, and the `api/` files route calls through it.

use std::cell::RefCell;
use std::sync::Arc;

use weft_core::error::MpiError;
use weft_core::mpi_err;
use weft_core::object::attr::AttrList;
use weft_core::object::{Comm, Group};
use weft_core::threadcomm::ThreadComm;

use crate::ctypes::MPI_Comm;

struct Entry {
    handle: MPI_Comm,
    comm: Arc<Comm>,
    rank: u32,
    /// This thread rank's attributes (deleted at finish).
    attrs: Arc<AttrList>,
}

thread_local! {
    static ACTIVE: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
}

/// Run `f` on this thread's entry for `handle`, if it has one (one thread-local read when
/// the thread is in no region).
#[inline]
fn find<R>(handle: MPI_Comm, f: impl FnOnce(&Entry) -> R) -> Option<R> {
    ACTIVE.with(|a| a.borrow().iter().find(|e| e.handle == handle).map(f))
}

/// Run `f` with the thread communicator `handle` names and this thread's rank in it, if
/// this thread is inside its region; `None` otherwise. `f` must not start or finish a
/// thread communicator.
#[inline]
pub fn with<R>(
    handle: MPI_Comm,
    f: impl FnOnce(&Arc<Comm>, &Arc<ThreadComm>, u32) -> R,
) -> Option<R> {
    find(handle, |e| {
        e.comm.thread.as_ref().map(|tc| f(&e.comm, tc, e.rank))
    })
    .flatten()
}

/// The thread communicator `handle` names, if this thread is inside its region.
pub fn comm(handle: MPI_Comm) -> Option<Arc<Comm>> {
    find(handle, |e| e.comm.clone())
}

/// The thread communicator `handle` names and this thread's rank in it, if this thread is
/// inside its region.
pub fn comm_and_rank(handle: MPI_Comm) -> Option<(Arc<Comm>, u32)> {
    find(handle, |e| (e.comm.clone(), e.rank))
}

/// This thread rank's attributes on the thread communicator `handle`, if this thread is
/// inside its region.
pub fn attrs(handle: MPI_Comm) -> Option<Arc<AttrList>> {
    find(handle, |e| e.attrs.clone())
}

/// The calling thread's rank in `group` when the group's members are thread ranks and one
/// of them is this thread in a region it is inside (`threadcomm::group`).
pub fn rank_in(group: &Group) -> Option<u32> {
    ACTIVE.with(|a| {
        a.borrow().iter().find_map(|e| {
            let member = e.comm.thread.as_ref()?.member(e.rank)?;
            group.rank_of(member)
        })
    })
}

/// Whether this thread is a rank of `handle`'s thread communicator now.
pub fn is_inside(handle: MPI_Comm) -> bool {
    with(handle, |_, _, _| ()).is_some()
}

/// Record that this thread is `rank` of `handle` (start).
pub fn enter(handle: MPI_Comm, comm: Arc<Comm>, rank: u32) {
    ACTIVE.with(|a| {
        a.borrow_mut().push(Entry {
            handle,
            comm,
            rank,
            attrs: Arc::default(),
        })
    });
}

/// Forget this thread's rank in `handle` (finish).
pub fn leave(handle: MPI_Comm) {
    ACTIVE.with(|a| a.borrow_mut().retain(|e| e.handle != handle));
}

/// The error for a thread communicator passed to a function that does not handle one:
/// outside its region it is a misuse, inside a function Weft does not do on threads yet.
#[cold]
pub fn misuse(handle: MPI_Comm, func: &str) -> MpiError {
    if is_inside(handle) {
        mpi_err!(
            UnsupportedOperation,
            "{func}(comm): not supported on a thread communicator in Weft yet"
        )
    } else {
        mpi_err!(
            Comm,
            "{func}(comm): a thread communicator can only be used by its threads between \
                 MPIX_Threadcomm_start and MPIX_Threadcomm_finish"
        )
    }
}
