//! `OptLock`: a lock that really locks only when several threads may call MPI at once.
//!
//! Under `MPI_THREAD_SINGLE`, `FUNNELED` and `SERIALIZED` the application guarantees one
//! caller at a time, so taking a lock is pure overhead; DESIGN.md point 5 says none is taken.
//! The guard then only sets a borrow flag with plain stores (no atomic read-modify-write), which
//! still turns an accidental re-entry (a library bug) into a panic instead of aliased `&mut`.
//! Under `MPI_THREAD_MULTIPLE` it is a test-and-test-and-set spinlock that yields the CPU
//! after a short spin, since critical sections are short and threads may outnumber cores.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

/// Spins before a waiting thread starts yielding its core.
const SPINS_BEFORE_YIELD: u32 = 64;

pub struct OptLock<T> {
    held: AtomicBool,
    /// Switched on (never off) when a session asks for `MPI_THREAD_MULTIPLE`; that happens
    /// inside an initialization call, when by the lower levels' rules no other thread is in
    /// the library.
    threaded: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: access to `value` is serialised: by the spinlock when `threaded`, and by the
// application's own guarantee of one caller at a time otherwise (the MPI thread level).
unsafe impl<T: Send> Sync for OptLock<T> {}
// SAFETY: moving the lock moves the value; no thread-affine state is kept.
unsafe impl<T: Send> Send for OptLock<T> {}

impl<T> OptLock<T> {
    pub fn new(value: T, threaded: bool) -> OptLock<T> {
        OptLock {
            held: AtomicBool::new(false),
            threaded: AtomicBool::new(threaded),
            value: UnsafeCell::new(value),
        }
    }

    /// Whether this lock really locks.
    pub fn is_threaded(&self) -> bool {
        self.threaded.load(Ordering::Relaxed)
    }

    /// Make the lock really lock from now on.
    pub fn enable_threads(&self) {
        self.threaded.store(true, Ordering::SeqCst);
    }

    pub fn lock(&self) -> OptGuard<'_, T> {
        let threaded = self.is_threaded();
        if threaded {
            let mut spins = 0;
            while self.held.swap(true, Ordering::Acquire) {
                while self.held.load(Ordering::Relaxed) {
                    if spins < SPINS_BEFORE_YIELD {
                        spins += 1;
                        std::hint::spin_loop();
                    } else {
                        std::thread::yield_now();
                    }
                }
            }
        } else {
            assert!(
                !self.held.load(Ordering::Relaxed),
                "OptLock re-entered: a library bug"
            );
            self.held.store(true, Ordering::Relaxed);
        }
        OptGuard {
            lock: self,
            threaded,
        }
    }

    /// Take the lock if it is free (threaded mode); in unthreaded mode, if not re-entered.
    pub fn try_lock(&self) -> Option<OptGuard<'_, T>> {
        let threaded = self.is_threaded();
        if threaded {
            if self.held.swap(true, Ordering::Acquire) {
                return None;
            }
        } else if self.held.load(Ordering::Relaxed) {
            return None;
        } else {
            self.held.store(true, Ordering::Relaxed);
        }
        Some(OptGuard {
            lock: self,
            threaded,
        })
    }
}

pub struct OptGuard<'a, T> {
    lock: &'a OptLock<T>,
    /// How the lock was taken (it must be released the same way).
    threaded: bool,
}

impl<T> Deref for OptGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while the lock (or the borrow flag) is held.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for OptGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as above, and the guard is unique.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for OptGuard<'_, T> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // A panic inside the critical section may have left the state half-updated; it
            // must never be resumed (DESIGN.md point 8).
            eprintln!("weft: internal panic while holding a VCI lock; aborting");
            std::process::abort();
        }
        let order = if self.threaded {
            Ordering::Release
        } else {
            Ordering::Relaxed
        };
        self.lock.held.store(false, order);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn threaded_lock_serialises_increments() {
        let lock = Arc::new(OptLock::new(0u64, true));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        *lock.lock() += 1;
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(*lock.lock(), 40_000);
    }

    #[test]
    fn unthreaded_lock_detects_reentry() {
        let lock = OptLock::new(1, false);
        let guard = lock.lock();
        assert!(lock.try_lock().is_none());
        drop(guard);
        assert_eq!(*lock.try_lock().unwrap(), 1);
    }
}
