//! Argument decoding shared by the RMA entry points (`rma.rs`, `rma_direct.rs`, `rma_sync.rs`,
//! `rma_ext.rs`): the window borrowed on the hot paths, the window and target rank, the
//! origin and target of a put, get or accumulate (counts, datatypes, displacement), the op of
//! an accumulate, and what follows an operation in the form called (`Then`).

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use weft_core::datatype::{Buf, Type};
use weft_core::error::MpiResult;
use weft_core::instance::calls_may_overlap;
use weft_core::message::Status;
use weft_core::mpi_err;
use weft_core::op::Reduction;
use weft_core::rma::notify::check_index;
use weft_core::rma::Target;

use crate::api::coll_args::{buf_at, dtype};
use crate::api::op as ops;
use crate::args::{non_null, Int};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects::{self, WINS};
use crate::requests::completed_request;
use crate::win_object::WinObject;

/// Run `f` on the window `win` names, borrowed without a reference count when no other
/// thread can be in the library; `None` for a bad handle (the general paths report it).
#[inline(always)]
pub(crate) fn with_win<R>(win: MPI_Win, f: impl FnOnce(&WinObject) -> R) -> Option<R> {
    if !calls_may_overlap() {
        // Nothing on this thread frees the window while `f` runs (no user code, no waiting).
        // SAFETY: no other thread is in MPI (thread level below MULTIPLE).
        let w = unsafe { WINS.borrow(win) }.ok()?;
        Some(f(w))
    } else {
        let w = WINS.get(win).ok()?;
        Some(f(&w))
    }
}

/// Rank `rank` (argument `arg`) of window `w`'s group (`MPI_ERR_RANK` otherwise).
pub(crate) fn rank_of(w: &WinObject, rank: c_int, func: &str, arg: &str) -> MpiResult<u32> {
    if rank < 0 || rank as u32 >= w.comm.size() {
        return Err(mpi_err!(
            Rank,
            "{func}({arg}={rank}): not a rank of the window's group (size {})",
            w.comm.size()
        ));
    }
    Ok(rank as u32)
}

/// The window and the target's window rank (`None`: `MPI_PROC_NULL`, nothing to do), with
/// the rank and the access epoch checked.
pub(crate) fn window_target(
    win: MPI_Win,
    target_rank: c_int,
    func: &str,
) -> MpiResult<(Arc<WinObject>, Option<u32>)> {
    let w = objects::win(win, func, "win")?;
    if target_rank == MPI_PROC_NULL {
        return Ok((w, None));
    }
    let t = rank_of(&w, target_rank, func, "target_rank")?;
    w.rma.check_access(t, func)?;
    Ok((w, Some(t)))
}

/// A non-negative target displacement (`MPI_ERR_DISP`).
pub(crate) fn check_disp(target_disp: MPI_Aint, func: &str) -> MpiResult<()> {
    if target_disp < 0 {
        return Err(mpi_err!(
            Disp,
            "{func}(target_disp={target_disp}): negative displacement"
        ));
    }
    Ok(())
}

/// The target datatype and count, checked.
fn target_type(count: i64, datatype: MPI_Datatype, func: &str) -> MpiResult<(usize, Arc<Type>)> {
    if count < 0 {
        return Err(mpi_err!(
            Count,
            "{func}(target_count={count}): negative count"
        ));
    }
    let t = dtype(datatype, func, "target_datatype")?;
    if t.bytes_for(count as usize).is_none() {
        return Err(mpi_err!(
            Count,
            "{func}(target_count={count}): the target data size overflows"
        ));
    }
    Ok((count as usize, t))
}

/// The op of an accumulate-type operation on `count` elements of `datatype`: predefined ops
/// only (MPI 4.1 §12.3.4), `MPI_REPLACE` and `MPI_NO_OP` included. With nothing to combine
/// (`count` 0) any predefined op is accepted on any type, as MPICH does (mpi4py's tests
/// accumulate zero `MPI_BYTE`s with `MPI_SUM`).
pub(crate) fn acc_op(
    op: MPI_Op,
    datatype: MPI_Datatype,
    t: &Arc<Type>,
    count: usize,
    func: &str,
) -> MpiResult<Reduction> {
    if count == 0 && ops::predefined(op).is_some() {
        return ops::reduction(MPI_REPLACE, datatype, t, func);
    }
    if ops::predefined(op).is_none() {
        if op != MPI_OP_NULL {
            ops::user_op(op, func)?;
        }
        return Err(mpi_err!(
            Op,
            "{func}(op={op:#x}): RMA accumulates take predefined ops only"
        ));
    }
    ops::reduction(op, datatype, t, func)
}

/// A predefined datatype (`MPI_Fetch_and_op`, `MPI_Compare_and_swap`).
pub(crate) fn predefined_only(datatype: MPI_Datatype, func: &str) -> MpiResult<Arc<Type>> {
    let t = dtype(datatype, func, "datatype")?;
    if t.predefined.is_none() {
        return Err(mpi_err!(
            Type,
            "{func}(datatype): a predefined datatype is required"
        ));
    }
    Ok(t)
}

/// The origin (or result) buffer of an RMA operation as the call names it.
#[derive(Clone, Copy)]
pub(crate) struct Origin {
    pub addr: usize,
    pub count: i64,
    pub datatype: MPI_Datatype,
}

impl Origin {
    #[inline(always)]
    pub(crate) fn new<C: Int>(addr: *const c_void, count: C, datatype: MPI_Datatype) -> Origin {
        Origin {
            addr: addr as usize,
            count: count.get(),
            datatype,
        }
    }
}

/// The target of an RMA operation as the call names it.
#[derive(Clone, Copy)]
pub(crate) struct TargetArgs {
    pub rank: c_int,
    pub disp: MPI_Aint,
    pub count: i64,
    pub datatype: MPI_Datatype,
}

impl TargetArgs {
    #[inline(always)]
    pub(crate) fn new<C: Int>(
        rank: c_int,
        disp: MPI_Aint,
        count: C,
        datatype: MPI_Datatype,
    ) -> TargetArgs {
        TargetArgs {
            rank,
            disp,
            count: count.get(),
            datatype,
        }
    }
}

/// What a put, get or accumulate names on both sides, checked.
pub(crate) struct Move {
    pub w: Arc<WinObject>,
    /// `None`: `MPI_PROC_NULL`, nothing to do.
    pub rank: Option<u32>,
    pub origin: Buf,
    disp: MPI_Aint,
    count: usize,
    pub ty: Arc<Type>,
    _origin_ty: Arc<Type>,
}

impl Move {
    /// Check the arguments of a put, get or accumulate.
    ///
    /// # Safety
    /// The origin holds what it names.
    pub(crate) unsafe fn new(
        o: Origin,
        target: TargetArgs,
        win: MPI_Win,
        func: &str,
    ) -> MpiResult<Move> {
        let (w, rank) = window_target(win, target.rank, func)?;
        let ot = dtype(o.datatype, func, "origin_datatype")?;
        // SAFETY: forwarded contract.
        let origin = unsafe { buf_at(o.addr, o.count, &ot, func, "origin_addr", "origin_count")? };
        let (count, ty) = target_type(target.count, target.datatype, func)?;
        if rank.is_some() {
            check_disp(target.disp, func)?;
        }
        Ok(Move {
            w,
            rank,
            origin,
            disp: target.disp,
            count,
            ty,
            _origin_ty: ot,
        })
    }

    /// The core's target description, for target rank `rank`.
    pub(crate) fn target(&self, rank: u32) -> Target<'_> {
        Target {
            rank,
            disp: self.disp as i64,
            count: self.count,
            ty: &self.ty,
        }
    }

    /// The count of target elements.
    pub(crate) fn count(&self) -> usize {
        self.count
    }
}

/// Which way a put or get moves data.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dir {
    /// Origin to target (`MPI_Put`).
    Put,
    /// Target to origin (`MPI_Get`).
    Get,
}

/// What follows an RMA operation in the form called (`api/gen.py` picks it from the name):
/// nothing (`MPI_Put`), a request returned complete (`MPI_R*`, and `MPIX_Rr*`, whose
/// completion means remote completion: operations complete at the call, at the target too),
/// or one notification on an index at the target, seen only after the data
/// (`MPIX_*_notify`).
#[derive(Clone, Copy)]
pub(crate) enum Then {
    Done,
    Request(*mut MPI_Request),
    Notify(c_int),
}

impl Then {
    /// Check the form's own argument (before the operation runs).
    pub(crate) fn check(self, func: &str) -> MpiResult<()> {
        match self {
            Then::Done => Ok(()),
            Then::Request(request) => non_null(request, func, "request"),
            Then::Notify(idx) => check_index(idx, func).map(drop),
        }
    }

    /// After the operation on `w`'s target `rank` (`None`: `MPI_PROC_NULL`): write the
    /// completed request, or count the notification.
    ///
    /// # Safety
    /// A request pointer (checked non-null by `check`) is writable.
    pub(crate) unsafe fn finish(
        self,
        w: &WinObject,
        rank: Option<u32>,
        func: &str,
    ) -> MpiResult<()> {
        match self {
            Then::Done => {}
            Then::Request(request) => {
                let h = completed_request(&w.comm, Status::default(), MPI_COMM_NULL);
                // SAFETY: checked non-null by `check`; writable per the caller's contract.
                unsafe { request.write(h) };
            }
            Then::Notify(_) => self.notify(w, rank, func)?,
        }
        Ok(())
    }

    /// After the operation on `w`'s target `rank` (`None`: `MPI_PROC_NULL`): the
    /// notification `Notify` asks for; nothing for the other forms.
    pub(crate) fn notify(self, w: &WinObject, rank: Option<u32>, func: &str) -> MpiResult<()> {
        match (self, rank) {
            (Then::Notify(idx), Some(t)) => w.rma.notify(t, idx as usize, func),
            _ => Ok(()),
        }
    }
}
