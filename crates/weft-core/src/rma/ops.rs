//! The RMA operations. Each completes at the call, at the origin and at the target, since
//! the target's memory is reached directly (`access`). Accumulate-type operations (accumulate,
//! get-accumulate, fetch-and-op, compare-and-swap) take the intrinsic path where they can
//! (CPU atomics element by element, `atomic`), else run under the target's accumulate mutex
//! in the window's segment; either way concurrent ones on the same memory are atomic with
//! each other, element-wise (MPI 4.1 §12.7.1). With `mpi_assert_accumulate_intrinsic` an
//! accumulate off the intrinsic path is `MPI_ERR_UNSUPPORTED_OPERATION`.
#![forbid(unsafe_code)]

use std::sync::atomic::Ordering;

use super::access::{packed, AccPath, Region, Target};
use super::atomic::{aligned, lock_free, AtomicOp};
use super::words;
use super::WinRma;
use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::op::{Op, OpKind, Reduction};
use crate::transport::Amo;

fn size_mismatch(func: &str, what: &str, a: usize, b: usize) -> MpiError {
    MpiError::new(
        ErrorClass::Type,
        format!("{func}: the {what} holds {a} bytes of data but the target {b}: the type signatures must match"),
    )
}

/// Bytes an accumulate combines at a time.
const ACC_CHUNK: usize = 64 * 1024;

/// A held accumulate mutex of a target, released on drop.
struct AccGuard<'a> {
    win: &'a WinRma,
    target: u32,
}

impl Drop for AccGuard<'_> {
    fn drop(&mut self) {
        let word = &self.win.area.ctl(self.target).acc;
        match self.win.far_of(self.target) {
            // A failure here (the target's node lost) was or will be reported by the
            // operations that reach it.
            Some(far) => drop(far.word(self.target, word, Amo::Swap, 0, "MPI_Accumulate")),
            None => words::release_mutex(word),
        }
    }
}

/// An op's name for messages.
fn op_name(op: &Reduction) -> &'static str {
    match op.op {
        Op::Predefined(k) => k.name(),
        _ => "a user op",
    }
}

impl WinRma {
    /// Refuse an accumulate off the intrinsic path under `mpi_assert_accumulate_intrinsic`.
    fn check_not_strict(&self, what: &str, t: &Target, func: &str) -> MpiResult<()> {
        if !self.strict.load(Ordering::Relaxed) {
            return Ok(());
        }
        Err(MpiError::new(
            ErrorClass::UnsupportedOperation,
            format!(
                "{func}(op={what}, target_datatype={}, target_rank={}, target_disp={}): not an intrinsic (lock-free atomic) accumulate on this window, but the window has mpi_assert_accumulate_intrinsic=true (see MPIX_Win_op_intrinsic)",
                t.ty.name(),
                t.rank,
                t.disp
            ),
        ))
    }

    /// Refuse an accumulate on elements other processes update by CPU atomics but this one
    /// reaches only by cross-memory attach (`AccPath::Refused`): under the mutex it would not
    /// be atomic with them.
    fn check_reachable(&self, r: &Region, size: usize, t: &Target, func: &str) -> MpiResult<()> {
        if r.acc != AccPath::Refused || !lock_free(size) || !aligned(&r.any_pieces(), size) {
            return Ok(());
        }
        Err(MpiError::new(
            ErrorClass::RmaAttach,
            format!(
                "{func}(target_rank={}, target_disp={:#x}): these bytes lie in memory from MPI_Alloc_mem that other processes update by CPU atomics, but this process reaches them only by cross-memory attach (the memory could not be mapped here, or the access spans several attached regions), which would not be atomic with those updates",
                t.rank, t.disp
            ),
        ))
    }

    /// Take `target`'s accumulate mutex (a UCP compare-and-swap on a target on another
    /// node). The wait makes progress: a holder on another node may need this process's
    /// (UCX may serve its operations on this process's memory with active messages).
    fn acc_lock(&self, target: u32, func: &str) -> MpiResult<AccGuard<'_>> {
        let word = &self.area.ctl(target).acc;
        match self.far_of(target) {
            Some(far) => {
                self.wait_for(|| Ok(far.word(target, word, Amo::Cswap(0), 1, func)? == 0))?
            }
            None if self.far.is_some() => self.wait_until(|| words::try_mutex(word)),
            None => {
                let mut backoff = self.comm.session.instance.backoff();
                while !words::try_mutex(word) {
                    backoff.idle();
                }
            }
        }
        Ok(AccGuard { win: self, target })
    }

    /// `MPI_Put`.
    pub fn put(&self, origin: &Buf, t: &Target, func: &str) -> MpiResult<()> {
        let _op = self.begin_op();
        let r = self.region(t, false, func)?;
        if origin.len() != r.len() {
            return Err(size_mismatch(func, "origin buffer", origin.len(), r.len()));
        }
        r.write(&packed(origin), func)
    }

    /// `MPI_Get`.
    pub fn get(&self, origin: &Buf, t: &Target, func: &str) -> MpiResult<()> {
        let _op = self.begin_op();
        let r = self.region(t, false, func)?;
        if origin.len() != r.len() {
            return Err(size_mismatch(func, "origin buffer", origin.len(), r.len()));
        }
        read_into(&r, origin, func)
    }

    /// `MPI_Accumulate`: target = origin `op` target, atomically per target.
    pub fn accumulate(
        &self,
        origin: &Buf,
        t: &Target,
        op: &Reduction,
        func: &str,
    ) -> MpiResult<()> {
        let _op = self.begin_op();
        let r = self.region(t, true, func)?;
        if is(op, OpKind::NoOp) {
            return Ok(());
        }
        if origin.len() != r.len() {
            return Err(size_mismatch(func, "origin buffer", origin.len(), r.len()));
        }
        let input = packed(origin);
        let aop = if is(op, OpKind::Replace) {
            AtomicOp::Replace
        } else {
            AtomicOp::Apply(op)
        };
        if self.atomic_update(&r, op.extent, aop, &input, None) {
            return Ok(());
        }
        self.check_reachable(&r, op.extent, t, func)?;
        self.check_not_strict(op_name(op), t, func)?;
        let _held = self.acc_lock(t.rank, func)?;
        if is(op, OpKind::Replace) {
            return r.write(&input, func);
        }
        // In pieces of whole elements that stay in the cache between read, op and write.
        let step = (ACC_CHUNK / op.extent).max(1) * op.extent;
        let mut cur = vec![0u8; step.min(r.len())];
        let mut at = 0;
        while at < r.len() {
            let n = step.min(r.len() - at);
            let piece = &mut cur[..n];
            r.read_at(at, piece, func)?;
            op.apply(&input[at..at + n], piece);
            r.write_at(at, piece, func)?;
            at += n;
        }
        Ok(())
    }

    /// `MPI_Get_accumulate` (and `MPI_Fetch_and_op`): `result` receives the target's
    /// data as it was, then target = origin `op` target, atomically per target. `origin` is
    /// unused for `MPI_NO_OP`.
    pub fn get_accumulate(
        &self,
        origin: &Buf,
        result: &Buf,
        t: &Target,
        op: &Reduction,
        func: &str,
    ) -> MpiResult<()> {
        let _op = self.begin_op();
        let r = self.region(t, true, func)?;
        if result.len() != r.len() {
            return Err(size_mismatch(func, "result buffer", result.len(), r.len()));
        }
        let noop = is(op, OpKind::NoOp);
        if !noop && origin.len() != r.len() {
            return Err(size_mismatch(func, "origin buffer", origin.len(), r.len()));
        }
        let input = if noop {
            Vec::new().into()
        } else {
            packed(origin)
        };
        let mut cur = vec![0u8; r.len()];
        let aop = if noop {
            AtomicOp::NoOp
        } else if is(op, OpKind::Replace) {
            AtomicOp::Replace
        } else {
            AtomicOp::Apply(op)
        };
        if self.atomic_update(&r, op.extent, aop, &input, Some(&mut cur)) {
            result.unpack(0, &cur);
            return Ok(());
        }
        self.check_reachable(&r, op.extent, t, func)?;
        self.check_not_strict(op_name(op), t, func)?;
        {
            let _held = self.acc_lock(t.rank, func)?;
            r.read(&mut cur, func)?;
            if !noop {
                if is(op, OpKind::Replace) {
                    r.write(&input, func)?;
                } else {
                    let mut next = cur.clone();
                    op.apply(&input, &mut next);
                    r.write(&next, func)?;
                }
            }
        }
        result.unpack(0, &cur);
        Ok(())
    }

    /// `MPI_Compare_and_swap`: `result` receives the target element; it becomes `origin`
    /// where it equalled `compare`. One element of a predefined type.
    pub fn compare_and_swap(
        &self,
        origin: &Buf,
        compare: &Buf,
        result: &Buf,
        t: &Target,
        func: &str,
    ) -> MpiResult<()> {
        let _op = self.begin_op();
        let r = self.region(t, true, func)?;
        let (o, c) = (packed(origin), packed(compare));
        let mut cur = vec![0u8; r.len()];
        if self.atomic_update(&r, r.len(), AtomicOp::Cas(&c), &o, Some(&mut cur)) {
            result.unpack(0, &cur);
            return Ok(());
        }
        self.check_reachable(&r, r.len(), t, func)?;
        self.check_not_strict("cas", t, func)?;
        {
            let _held = self.acc_lock(t.rank, func)?;
            r.read(&mut cur, func)?;
            if cur[..] == c[..] {
                r.write(&o, func)?;
            }
        }
        result.unpack(0, &cur);
        Ok(())
    }
}

fn is(op: &Reduction, kind: OpKind) -> bool {
    matches!(op.op, Op::Predefined(k) if k == kind)
}

/// Read region `r` into `origin`: straight into its bytes when contiguous.
fn read_into(r: &Region, origin: &Buf, func: &str) -> MpiResult<()> {
    if origin.is_contiguous() {
        origin.with_bytes_mut(|b| r.read(b, func))
    } else {
        let mut v = vec![0u8; r.len()];
        r.read(&mut v, func)?;
        origin.unpack(0, &v);
        Ok(())
    }
}
