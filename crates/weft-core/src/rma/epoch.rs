//! Synchronisation: which access epochs this process has open, and the calls that open and
//! close them. Operations complete at the call, so closing an epoch has no data to wait
//! for: a fence is a barrier; a passive-target lock is the target's lock word in the
//! window's segment (an exclusive holder, or a count of shared ones); post/start/complete/wait
//! are counters there (the target counts its posts for each origin; an origin counts the
//! completes it sent to each target). Waits spin with progress on this process's VCIs (a
//! peer may be waiting for a message from this process before it releases what is awaited).
//!
//! The epochs live under a mutex, taken only by the calls that open and close them; each
//! change is published as one flag byte per target (`ACCESS`: an operation may reach it,
//! `PASSIVE`: a flush may), so the operations and flushes check their epoch with one load
//! and no lock (no cross-thread lock on the flush path). A process-scope flush also waits
//! for the operations other threads have in progress on the window (`scope`: per-thread
//! counters, no lock); a thread-scope one (`mpi_win_scope=thread`) does not.
#![forbid(unsafe_code)]

use std::sync::atomic::{fence, AtomicU8, Ordering};

use super::far::Far;
use super::words;
use super::WinRma;
use crate::coll;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::instance::calls_may_overlap;
use crate::progress;
use crate::transport::shm::win_area::WRITER;
use crate::transport::Amo;

/// Flag bit: an access epoch to the target is open (operations may reach it).
pub const ACCESS: u8 = 1;
/// Flag bit: a passive-target epoch to the target is open (flushes may name it).
pub const PASSIVE: u8 = 2;

/// The published epoch flags of one window, one byte per target.
pub fn new_flags(n: usize) -> Vec<AtomicU8> {
    (0..n).map(|_| AtomicU8::new(0)).collect()
}

/// A passive-target lock type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockType {
    Exclusive,
    Shared,
}

/// Fence assertions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FenceAssert {
    pub noprecede: bool,
    pub nosucceed: bool,
}

/// The epochs this process has open on one window.
#[derive(Debug)]
pub struct Epochs {
    /// Between fences that open an epoch (a fence without `MPI_MODE_NOSUCCEED`).
    fence: bool,
    /// Passive-target locks this process holds, by target; `nocheck` ones took no lock.
    locks: Vec<Option<(LockType, bool)>>,
    /// `MPI_Win_lock_all` (and whether with `MPI_MODE_NOCHECK`).
    lock_all: Option<bool>,
    /// The targets of the access epoch `MPI_Win_start` opened.
    started: Option<Vec<u32>>,
    /// Posts of each target consumed by this process's starts.
    posts_seen: Vec<u64>,
    /// The origins of the exposure epoch `MPI_Win_post` opened.
    posted: Option<Vec<u32>>,
    /// Completes this process must have received when its exposure epoch ends.
    completes_due: u64,
}

impl Epochs {
    pub fn new(n: usize) -> Epochs {
        Epochs {
            fence: false,
            locks: vec![None; n],
            lock_all: None,
            started: None,
            posts_seen: vec![0; n],
            posted: None,
            completes_due: 0,
        }
    }

    fn passive(&self) -> bool {
        self.lock_all.is_some() || self.locks.iter().any(|l| l.is_some())
    }

    /// The flag byte of `target`.
    fn flags(&self, target: u32) -> u8 {
        let t = target as usize;
        let passive = self.lock_all.is_some() || self.locks[t].is_some();
        let access =
            passive || self.fence || self.started.as_ref().is_some_and(|g| g.contains(&target));
        (access as u8 * ACCESS) | (passive as u8 * PASSIVE)
    }
}

/// A flush outside a passive-target epoch (`flush`'s error, built out of its hot path).
#[cold]
#[inline(never)]
fn no_passive_epoch(target: Option<u32>, func: &str) -> MpiError {
    sync_error(format!(
        "{func}: no passive-target epoch (MPI_Win_lock or MPI_Win_lock_all) is open{}",
        target.map_or(String::new(), |t| format!(" to rank {t}"))
    ))
}

fn sync_error(msg: String) -> MpiError {
    MpiError::new(ErrorClass::RmaSync, msg)
}

impl WinRma {
    /// Publish the epochs' flags (the caller holds the epochs' mutex).
    fn publish(&self, e: &Epochs) {
        for (t, f) in self.flags.iter().enumerate() {
            f.store(e.flags(t as u32), Ordering::Release);
        }
    }

    /// Publish after a lock or unlock of `target`: only its flag changed, unless the call
    /// also ended a fence epoch (`was_fence`), which every target's flag shows. A lock and
    /// unlock cost one store, not one per rank of the window.
    fn publish_lock(&self, e: &Epochs, target: u32, was_fence: bool) {
        if was_fence {
            self.publish(e);
        } else {
            self.flags[target as usize].store(e.flags(target), Ordering::Release);
        }
    }

    /// Whether `target` has `bit` set (one load, no lock).
    #[inline(always)]
    pub fn epoch_allows(&self, target: u32, bit: u8) -> bool {
        self.flags[target as usize].load(Ordering::Acquire) & bit != 0
    }

    /// Wait until `ready()` holds, making progress meanwhile.
    pub(super) fn wait_until(&self, mut ready: impl FnMut() -> bool) {
        let inst = &self.comm.session.instance;
        let mut backoff = inst.backoff();
        while !ready() {
            if progress::poke_all(inst) {
                backoff.reset();
            } else {
                backoff.idle();
            }
        }
    }

    /// Run `try_once` until it succeeds, making progress; a UCX failure ends the wait.
    pub(super) fn wait_for(&self, mut try_once: impl FnMut() -> MpiResult<bool>) -> MpiResult<()> {
        let mut failed = None;
        self.wait_until(|| match try_once() {
            Ok(done) => done,
            Err(e) => {
                failed = Some(e);
                true
            }
        });
        failed.map_or(Ok(()), Err)
    }

    /// The window's UCX side when `target` is on another node.
    #[inline]
    pub(super) fn far_of(&self, target: u32) -> Option<&Far> {
        self.far.as_deref().filter(|f| f.is_far(target))
    }

    /// On a window spanning nodes, make progress once: UCX may serve other nodes'
    /// operations on this process's memory with active messages, which only progress answers,
    /// and a program may spin on RMA calls (a compare-and-swap lock on its own memory) while
    /// a far holder waits for that answer. Every operation and flush calls it.
    #[inline]
    pub(super) fn serve_far(&self) {
        if self.far.is_some() {
            progress::poke_all(&self.comm.session.instance);
        }
    }

    /// Count one event on `counter`, a word of `owner`'s control state (on its node).
    pub(super) fn count_at(
        &self,
        owner: u32,
        counter: &crate::sync::atomic::AtomicU64,
        func: &str,
    ) -> MpiResult<()> {
        match self.far_of(owner) {
            Some(far) => far.word(owner, counter, Amo::Add, 1, func).map(drop),
            None => {
                words::count(counter);
                Ok(())
            }
        }
    }

    /// Refuse an operation on `target` outside an access epoch (`MPI_ERR_RMA_SYNC`).
    pub fn check_access(&self, target: u32, func: &str) -> MpiResult<()> {
        self.check_handle(target, func)?;
        if self.epoch_allows(target, ACCESS) {
            return Ok(());
        }
        Err(sync_error(format!(
            "{func}(target_rank={target}): no access epoch to this target is open (call MPI_Win_fence, MPI_Win_lock, MPI_Win_lock_all or MPI_Win_start first)"
        )))
    }

    /// `MPI_Win_fence`.
    pub fn fence(&self, a: FenceAssert, func: &str) -> MpiResult<()> {
        self.refuse_handle_sync(func)?;
        {
            let e = self.epochs();
            if e.passive() || e.started.is_some() || e.posted.is_some() {
                return Err(sync_error(format!(
                    "{func}: a lock or post/start epoch is open on this window"
                )));
            }
        }
        fence(Ordering::SeqCst);
        // Operations completed at their calls: the barrier orders them before every
        // process's next epoch. With both assertions no operation precedes or follows it
        // in this process, but others may still need this process at the barrier.
        coll::barrier(&self.comm)?;
        let mut e = self.epochs();
        e.fence = !a.nosucceed;
        self.publish(&e);
        Ok(())
    }

    /// `MPI_Win_lock`.
    pub fn lock(&self, kind: LockType, target: u32, nocheck: bool, func: &str) -> MpiResult<()> {
        self.refuse_handle_sync(func)?;
        {
            let mut e = self.epochs();
            if e.locks[target as usize].is_some() || e.lock_all.is_some() {
                return Err(sync_error(format!(
                    "{func}(rank={target}): this process already holds a lock on that target"
                )));
            }
            if e.started.is_some() {
                return Err(sync_error(format!(
                    "{func}(rank={target}): a post/start access epoch is open on this window"
                )));
            }
            let was_fence = std::mem::take(&mut e.fence);
            e.locks[target as usize] = Some((kind, nocheck));
            self.publish_lock(&e, target, was_fence);
        }
        if !nocheck {
            self.acquire(target, kind, func)?;
        }
        Ok(())
    }

    /// Take `target`'s lock word: CPU atomics on this node, UCP atomics on the same word at
    /// a target on another node (the same protocol, `words`).
    fn acquire(&self, target: u32, kind: LockType, func: &str) -> MpiResult<()> {
        let word = &self.area.ctl(target).lock;
        if let Some(far) = self.far_of(target) {
            return self.wait_for(|| match kind {
                LockType::Exclusive => {
                    Ok(far.word(target, word, Amo::Cswap(0), WRITER, func)? == 0)
                }
                LockType::Shared => {
                    let v = far.word(target, word, Amo::Add, 0, func)?;
                    Ok(v & WRITER == 0 && far.word(target, word, Amo::Cswap(v), v + 1, func)? == v)
                }
            });
        }
        let try_once = || match kind {
            LockType::Exclusive => words::try_exclusive(word),
            LockType::Shared => words::try_shared(word),
        };
        self.wait_until(try_once);
        Ok(())
    }

    fn release(&self, target: u32, kind: LockType, func: &str) -> MpiResult<()> {
        let word = &self.area.ctl(target).lock;
        if let Some(far) = self.far_of(target) {
            let (op, value) = match kind {
                LockType::Exclusive => (Amo::Swap, 0),
                LockType::Shared => (Amo::Add, u64::MAX),
            };
            return far.word(target, word, op, value, func).map(drop);
        }
        match kind {
            LockType::Exclusive => words::release_exclusive(word),
            LockType::Shared => words::release_shared(word),
        }
        Ok(())
    }

    /// `MPI_Win_unlock`.
    pub fn unlock(&self, target: u32, func: &str) -> MpiResult<()> {
        self.refuse_handle_sync(func)?;
        let held = {
            let mut e = self.epochs();
            let held = e.locks[target as usize].take();
            self.publish_lock(&e, target, false);
            held
        };
        match held {
            None => Err(sync_error(format!(
                "{func}(rank={target}): this process holds no lock on that target"
            ))),
            Some((kind, nocheck)) => {
                fence(Ordering::SeqCst);
                if !nocheck {
                    self.release(target, kind, func)?;
                }
                Ok(())
            }
        }
    }

    /// `MPI_Win_lock_all`.
    pub fn lock_all(&self, nocheck: bool, func: &str) -> MpiResult<()> {
        self.refuse_handle_sync(func)?;
        {
            let mut e = self.epochs();
            if e.passive() || e.started.is_some() {
                return Err(sync_error(format!(
                    "{func}: a lock or post/start access epoch is already open on this window"
                )));
            }
            e.fence = false;
            e.lock_all = Some(nocheck);
            self.publish(&e);
        }
        if !nocheck {
            for t in 0..self.peers.len() as u32 {
                self.acquire(t, LockType::Shared, func)?;
            }
        }
        Ok(())
    }

    /// `MPI_Win_unlock_all`.
    pub fn unlock_all(&self, func: &str) -> MpiResult<()> {
        self.refuse_handle_sync(func)?;
        let held = {
            let mut e = self.epochs();
            let held = e.lock_all.take();
            self.publish(&e);
            held
        };
        match held {
            None => Err(sync_error(format!(
                "{func}: MPI_Win_lock_all was not called on this window"
            ))),
            Some(nocheck) => {
                fence(Ordering::SeqCst);
                if !nocheck {
                    for t in 0..self.peers.len() as u32 {
                        self.release(t, LockType::Shared, func)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// `MPI_Win_flush*`: the calling thread's operations are complete already; with
    /// `mpi_win_scope=process` (the default) the flush waits for the operations other
    /// threads have in progress on the window (`scope`), with `thread` it does not. Then
    /// memory is ordered. `target` `None` for the `_all` forms. Inlined to the epoch load,
    /// the scope check and the fence (the plain op + flush loop pays for every instruction
    /// here); the error is built out of line.
    #[inline]
    pub fn flush(&self, target: Option<u32>, func: &str) -> MpiResult<()> {
        let ok = match target {
            Some(t) => self.epoch_allows(t, PASSIVE),
            None => (0..self.flags.len() as u32).any(|t| self.epoch_allows(t, PASSIVE)),
        };
        self.serve_far();
        if !ok {
            return Err(no_passive_epoch(target, func));
        }
        if calls_may_overlap() && !self.thread_scope.load(Ordering::Relaxed) {
            self.wait_in_flight();
        }
        fence(Ordering::SeqCst);
        Ok(())
    }

    /// A process-scope flush's wait for the operations other threads have in progress on
    /// the window: each moves data at its call, so it ends without this thread's help (no
    /// progress pass, except the one a window spanning nodes needs to serve its peers).
    fn wait_in_flight(&self) {
        let mut backoff = self.comm.session.instance.backoff();
        self.in_flight.wait_others(|done| {
            while !done() {
                self.serve_far();
                backoff.idle();
            }
        });
    }

    /// `MPI_Win_post`: expose this process's memory to `origins` (window ranks).
    pub fn post(&self, origins: Vec<u32>, func: &str) -> MpiResult<()> {
        self.refuse_handle_sync(func)?;
        let mut e = self.epochs();
        if e.posted.is_some() {
            return Err(sync_error(format!(
                "{func}: an exposure epoch is already open on this window"
            )));
        }
        fence(Ordering::SeqCst);
        for &o in &origins {
            self.count_at(o, self.area.post(self.me, o), func)?;
        }
        e.completes_due += origins.len() as u64;
        e.posted = Some(origins);
        Ok(())
    }

    /// `MPI_Win_start`: open an access epoch to `targets` once each has posted.
    pub fn start(&self, targets: Vec<u32>, func: &str) -> MpiResult<()> {
        self.refuse_handle_sync(func)?;
        let seen = {
            let e = self.epochs();
            if e.started.is_some() || e.passive() {
                return Err(sync_error(format!(
                    "{func}: an access epoch is already open on this window"
                )));
            }
            e.posts_seen.clone()
        };
        for &t in &targets {
            let counter = self.area.post(t, self.me);
            let want = seen[t as usize] + 1;
            self.wait_until(|| words::reached(counter, want));
        }
        let mut e = self.epochs();
        for &t in &targets {
            e.posts_seen[t as usize] += 1;
        }
        e.fence = false;
        e.started = Some(targets);
        self.publish(&e);
        Ok(())
    }

    /// `MPI_Win_complete`: end the access epoch; each target learns it.
    pub fn complete(&self, func: &str) -> MpiResult<()> {
        self.refuse_handle_sync(func)?;
        let targets = {
            let mut e = self.epochs();
            let t = e.started.take();
            self.publish(&e);
            t
        }
        .ok_or_else(|| {
            sync_error(format!(
                "{func}: no MPI_Win_start epoch is open on this window"
            ))
        })?;
        fence(Ordering::SeqCst);
        for t in targets {
            self.count_at(t, &self.area.ctl(t).complete, func)?;
        }
        Ok(())
    }

    /// `MPI_Win_wait` (`block`) or `MPI_Win_test`: whether the exposure epoch ended
    /// (every origin called `MPI_Win_complete`).
    pub fn wait(&self, block: bool, func: &str) -> MpiResult<bool> {
        self.refuse_handle_sync(func)?;
        let due = {
            let e = self.epochs();
            if e.posted.is_none() {
                return Err(sync_error(format!(
                    "{func}: no MPI_Win_post epoch is open on this window"
                )));
            }
            e.completes_due
        };
        let counter = &self.area.ctl(self.me).complete;
        let done = || words::reached(counter, due);
        if block {
            self.wait_until(done);
        } else {
            // MPI_Win_test in a loop is this process's only MPI call: the origins' operations
            // on other nodes need it to serve them (UCX emulates RMA on memory it did not map).
            self.serve_far();
            if !done() {
                return Ok(false);
            }
        }
        fence(Ordering::SeqCst);
        self.epochs().posted = None;
        Ok(true)
    }

    /// `MPI_Win_sync`: order this process's loads and stores with the window's memory.
    pub fn sync(&self) {
        fence(Ordering::SeqCst);
    }

    /// Whether any epoch is still open (for `MPI_Win_free`).
    pub fn busy(&self) -> bool {
        let e = self.epochs();
        e.passive() || e.started.is_some() || e.posted.is_some()
    }
}
