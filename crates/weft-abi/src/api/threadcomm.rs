//! Thread communicators (`MPIX_Threadcomm_*`, docs/threadcomm.md): creating, starting,
//! finishing and freeing them. The calls made on one inside its region are routed in the
//! files of their families (`comm.rs`, `pt2pt.rs`, `recv.rs`, `coll.rs`) through
//! `thread_ranks`.

use std::ffi::c_int;

use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::object::comm as core_comm;

use crate::args::{non_null, write};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects::{self, out_comm};
use crate::thread_ranks;

/// The thread communicator a handle names (`MPI_ERR_COMM` for any other communicator).
fn thread_comm(handle: MPI_Comm, func: &str) -> MpiResult<std::sync::Arc<weft_core::object::Comm>> {
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
    MpiError::new(
        ErrorClass::Comm,
        format!("{func}(threadcomm): not a thread communicator (made by MPIX_Threadcomm_init)"),
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
        return Err(MpiError::new(
            ErrorClass::Arg,
            format!("{func}(num_threads={num_threads}): at least one thread is required"),
        ));
    }
    if c.is_inter() {
        return Err(MpiError::new(
            ErrorClass::Comm,
            format!("{func}(comm): an intercommunicator cannot be made a thread communicator"),
        ));
    }
    c.session.instance.allow_concurrent_calls();
    let tc = weft_core::pt2pt::thread_wire::thread_comm(&c, num_threads as u32)?;
    let new = core_comm::thread_dup(&c, tc)?;
    // SAFETY: checked non-null.
    unsafe { out_comm(newthreadcomm, Some(new)) };
    Ok(())
}

pub(crate) fn mpix_threadcomm_start(threadcomm: MPI_Comm) -> MpiResult<()> {
    let func = "MPIX_Threadcomm_start";
    let c = thread_comm(threadcomm, func)?;
    if thread_ranks::is_inside(threadcomm) {
        return Err(MpiError::new(
            ErrorClass::Comm,
            format!("{func}(threadcomm): this thread already started it (and did not finish)"),
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
    thread_ranks::with(threadcomm, |_, tc, rank| tc.finish(rank)).unwrap_or_else(|| {
        Err(MpiError::new(
            ErrorClass::Comm,
            format!("{func}(threadcomm): this thread did not start it"),
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

pub(crate) unsafe fn mpix_threadcomm_free(threadcomm: *mut MPI_Comm) -> MpiResult<()> {
    let func = "MPIX_Threadcomm_free";
    non_null(threadcomm, func, "threadcomm")?;
    // SAFETY: checked non-null.
    let h = unsafe { *threadcomm };
    let c = thread_comm(h, func)?;
    if c.thread.as_ref().is_some_and(|t| t.is_active()) {
        return Err(MpiError::new(
            ErrorClass::Comm,
            format!(
                "{func}(threadcomm): the thread communicator is active (call it after every \
                 thread called MPIX_Threadcomm_finish)"
            ),
        ));
    }
    crate::api::attr::free_comm_attrs(h, &c, func)?;
    let removed = objects::COMMS.remove(h).map_err(|why| {
        MpiError::new(
            ErrorClass::Comm,
            format!("{func}(threadcomm={h:#x}): {}", why.describe()),
        )
    })?;
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
