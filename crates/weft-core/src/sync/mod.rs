//! Synchronisation building blocks. The only place in the core, with the transports, that
//! uses `unsafe`: each structure states the invariant that makes it sound.

pub mod backoff;
pub mod opt_lock;

pub use backoff::Backoff;

/// Atomics for the lock-free structures: `std`'s, or loom's when the crate is built for the
/// loom models (`--cfg loom`), which then explore every interleaving of their threads.
pub mod atomic {
    #[cfg(loom)]
    pub use loom::sync::atomic::{AtomicU64, Ordering};
    #[cfg(not(loom))]
    pub use std::sync::atomic::{AtomicU64, Ordering};
}
pub use opt_lock::{OptGuard, OptLock};
