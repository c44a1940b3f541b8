//! Synchronisation building blocks. The only place in the core, with the transports, that
//! uses `unsafe`: each structure states the invariant that makes it sound.

pub mod backoff;
pub mod opt_lock;
pub mod word_ring;

pub use backoff::Backoff;

/// Atomics for the lock-free structures: `std`'s, or loom's when the crate is built for the
/// loom models (`RUSTFLAGS="--cfg loom" cargo test -p weft-core --lib loom`), which then
/// explore every interleaving of the modelled threads and check the memory orderings.
pub mod atomic {
    #[cfg(loom)]
    pub use loom::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
    #[cfg(not(loom))]
    pub use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
}

/// One step of a busy wait for another thread: a spin hint (under loom, a yield, so that the
/// model schedules the thread being waited for).
#[inline]
pub fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

/// Give the core to another thread (under loom, a modelled yield).
#[inline]
pub fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}
pub use opt_lock::{OptGuard, OptLock};

/// Run a loom model with the bound every model here uses: at most 3 preemptions per
/// execution (the bugs loom is known to find need few). The models wait only in bounded
/// loops: loom lets a load in a thread left spinning alone return a stale value forever.
#[cfg(all(test, loom))]
pub(crate) fn loom_model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}
