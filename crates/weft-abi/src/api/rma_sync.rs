//! RMA synchronisation: `MPI_Win_fence`, `MPI_Win_lock`/`unlock`, `lock_all`/`unlock_all`,
//! the flushes, `MPI_Win_sync`, and post/start/complete/wait/test. Arguments (assertions,
//! lock types, ranks, groups) are checked here; the epochs are the core's
//! (`weft_core::rma::epoch`).

use std::ffi::c_int;

use weft_core::error::MpiResult;
use weft_core::mpi_err;
use weft_core::rma::epoch::{FenceAssert, LockType};

use crate::api::rma_args::{rank_of, with_win};
use crate::args::non_null;
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;
use crate::win_object::WinObject;

/// Check an `assert` argument: a combination of `allowed` mode bits (`MPI_ERR_ASSERT`).
fn check_assert(assert: c_int, allowed: c_int, func: &str) -> MpiResult<()> {
    if assert & !allowed != 0 {
        return Err(mpi_err!(
            Assert,
            "{func}(assert={assert:#x}): not a valid assertion for this call"
        ));
    }
    Ok(())
}

/// The window ranks of the members of `group` (which must all be in the window's group).
fn group_ranks(w: &WinObject, group: MPI_Group, func: &str) -> MpiResult<Vec<u32>> {
    let g = objects::group(group, func, "group")?;
    g.members()
        .iter()
        .map(|&p| {
            w.comm.group.rank_of(p).ok_or_else(|| {
                mpi_err!(
                    Group,
                    "{func}(group): a member is not in the window's group"
                )
            })
        })
        .collect()
}

pub(crate) fn mpi_win_fence(assert: c_int, win: MPI_Win) -> MpiResult<()> {
    let func = "MPI_Win_fence";
    let w = objects::win(win, func, "win")?;
    check_assert(
        assert,
        MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED,
        func,
    )?;
    let a = FenceAssert {
        noprecede: assert & MPI_MODE_NOPRECEDE != 0,
        nosucceed: assert & MPI_MODE_NOSUCCEED != 0,
    };
    w.rma.fence(a, func)
}

/// `MPI_Win_lock`'s lock type, if it is one.
fn lock_kind(lock_type: c_int) -> Option<LockType> {
    match lock_type {
        MPI_LOCK_EXCLUSIVE => Some(LockType::Exclusive),
        MPI_LOCK_SHARED => Some(LockType::Shared),
        _ => None,
    }
}

/// Run a lock or unlock of window rank `rank` (checked against the group) with the window
/// borrowed (`with_win`: no handle-table lock, no reference count), as the flushes and the
/// direct operations run: `None` when the window or the rank is bad (the caller's general
/// path reports it). While a lock waits for its word, its epoch is already open, so nothing
/// it makes progress on can free the window (`MPI_Win_free` refuses an open epoch).
#[inline]
fn sync_borrowed(
    win: MPI_Win,
    rank: c_int,
    f: impl FnOnce(&WinObject, u32) -> MpiResult<()>,
) -> Option<MpiResult<()>> {
    if rank < 0 {
        return None;
    }
    with_win(win, |w| {
        ((rank as u32) < w.comm.size()).then(|| f(w, rank as u32))
    })
    .flatten()
}

pub(crate) fn mpi_win_lock(
    lock_type: c_int,
    rank: c_int,
    assert: c_int,
    win: MPI_Win,
) -> MpiResult<()> {
    let func = "MPI_Win_lock";
    if let Some(kind) = lock_kind(lock_type).filter(|_| assert & !MPI_MODE_NOCHECK == 0) {
        let nocheck = assert & MPI_MODE_NOCHECK != 0;
        if let Some(done) = sync_borrowed(win, rank, |w, r| w.rma.lock(kind, r, nocheck, func)) {
            return done;
        }
    }
    let w = objects::win(win, func, "win")?;
    let kind = match lock_kind(lock_type) {
        Some(kind) => kind,
        None => {
            return Err(mpi_err!(
                Locktype,
                "{func}(lock_type={lock_type}): neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED"
            ))
        }
    };
    check_assert(assert, MPI_MODE_NOCHECK, func)?;
    if rank == MPI_PROC_NULL {
        return Ok(());
    }
    let r = rank_of(&w, rank, func, "rank")?;
    w.rma.lock(kind, r, assert & MPI_MODE_NOCHECK != 0, func)
}

pub(crate) fn mpi_win_unlock(rank: c_int, win: MPI_Win) -> MpiResult<()> {
    let func = "MPI_Win_unlock";
    if let Some(done) = sync_borrowed(win, rank, |w, r| w.rma.unlock(r, func)) {
        return done;
    }
    let w = objects::win(win, func, "win")?;
    if rank == MPI_PROC_NULL {
        return Ok(());
    }
    let r = rank_of(&w, rank, func, "rank")?;
    w.rma.unlock(r, func)
}

pub(crate) fn mpi_win_lock_all(assert: c_int, win: MPI_Win) -> MpiResult<()> {
    let func = "MPI_Win_lock_all";
    let w = objects::win(win, func, "win")?;
    check_assert(assert, MPI_MODE_NOCHECK, func)?;
    w.rma.lock_all(assert & MPI_MODE_NOCHECK != 0, func)
}

pub(crate) fn mpi_win_unlock_all(win: MPI_Win) -> MpiResult<()> {
    let func = "MPI_Win_unlock_all";
    objects::win(win, func, "win")?.rma.unlock_all(func)
}

#[inline]
fn flush_one(rank: c_int, win: MPI_Win, func: &str) -> MpiResult<()> {
    // The common case with the window borrowed (`with_win`); errors take the path below.
    let fast = with_win(win, |w| {
        rank >= 0 && (rank as u32) < w.comm.size() && w.rma.flush(Some(rank as u32), func).is_ok()
    });
    if fast == Some(true) {
        return Ok(());
    }
    flush_checked(rank, win, func)
}

/// `flush_one` off its common case: `MPI_PROC_NULL`, and every error with its message.
#[cold]
#[inline(never)]
fn flush_checked(rank: c_int, win: MPI_Win, func: &str) -> MpiResult<()> {
    let w = objects::win(win, func, "win")?;
    if rank == MPI_PROC_NULL {
        return Ok(());
    }
    let r = rank_of(&w, rank, func, "rank")?;
    w.rma.flush(Some(r), func)
}

pub(crate) fn mpi_win_flush(rank: c_int, win: MPI_Win) -> MpiResult<()> {
    flush_one(rank, win, "MPI_Win_flush")
}

pub(crate) fn mpi_win_flush_local(rank: c_int, win: MPI_Win) -> MpiResult<()> {
    flush_one(rank, win, "MPI_Win_flush_local")
}

pub(crate) fn mpi_win_flush_all(win: MPI_Win) -> MpiResult<()> {
    let func = "MPI_Win_flush_all";
    objects::win(win, func, "win")?.rma.flush(None, func)
}

pub(crate) fn mpi_win_flush_local_all(win: MPI_Win) -> MpiResult<()> {
    let func = "MPI_Win_flush_local_all";
    objects::win(win, func, "win")?.rma.flush(None, func)
}

pub(crate) fn mpi_win_sync(win: MPI_Win) -> MpiResult<()> {
    let func = "MPI_Win_sync";
    objects::win(win, func, "win")?.rma.sync();
    Ok(())
}

pub(crate) fn mpi_win_post(group: MPI_Group, assert: c_int, win: MPI_Win) -> MpiResult<()> {
    let func = "MPI_Win_post";
    let w = objects::win(win, func, "win")?;
    check_assert(
        assert,
        MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT,
        func,
    )?;
    let origins = group_ranks(&w, group, func)?;
    w.rma.post(origins, func)
}

pub(crate) fn mpi_win_start(group: MPI_Group, assert: c_int, win: MPI_Win) -> MpiResult<()> {
    let func = "MPI_Win_start";
    let w = objects::win(win, func, "win")?;
    check_assert(assert, MPI_MODE_NOCHECK, func)?;
    let targets = group_ranks(&w, group, func)?;
    w.rma.start(targets, func)
}

pub(crate) fn mpi_win_complete(win: MPI_Win) -> MpiResult<()> {
    let func = "MPI_Win_complete";
    objects::win(win, func, "win")?.rma.complete(func)
}

pub(crate) fn mpi_win_wait(win: MPI_Win) -> MpiResult<()> {
    let func = "MPI_Win_wait";
    objects::win(win, func, "win")?
        .rma
        .wait(true, func)
        .map(|_| ())
}

pub(crate) unsafe fn mpi_win_test(win: MPI_Win, flag: *mut c_int) -> MpiResult<()> {
    let func = "MPI_Win_test";
    let w = objects::win(win, func, "win")?;
    non_null(flag, func, "flag")?;
    let done = w.rma.wait(false, func)?;
    // SAFETY: checked non-null; the caller passes a writable int.
    unsafe { flag.write(done as c_int) };
    Ok(())
}
