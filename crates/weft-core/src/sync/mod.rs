//! Synchronisation building blocks. The only place in the core, with the transports, that
//! uses `unsafe`: each structure states the invariant that makes it sound.

pub mod opt_lock;

pub use opt_lock::{OptGuard, OptLock};
