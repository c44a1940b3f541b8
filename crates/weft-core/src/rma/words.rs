//! The lock-free protocols on the words of a window's segment, which every process of the
//! window updates with CPU atomics (issue #16), with their loom models:
//!
//! - The passive-target lock word: 0 free, `WRITER` an exclusive holder, else the number of
//!   shared holders. Exclusive: compare-and-swap 0 -> `WRITER` (acquire); release: store 0
//!   (release). Shared: load, and if no writer, compare-and-swap n -> n + 1 (acquire);
//!   release: subtract 1 (release). A holder's writes to the window happen before the next
//!   holder's reads (release/acquire on the word).
//! - The accumulate mutex: compare-and-swap 0 -> 1 (acquire), store 0 (release).
//! - Counters (post, complete, notifications): a release add after the data; the waiter's
//!   acquire load that sees the count sees the data.
// The loom models read and write loom's tracked cells, which takes `unsafe`.
#![cfg_attr(not(loom), forbid(unsafe_code))]

use crate::sync::atomic::{AtomicU64, Ordering};
use crate::transport::shm::win_area::WRITER;

/// One attempt to take the lock word exclusively (`true`: taken).
pub fn try_exclusive(word: &AtomicU64) -> bool {
    word.compare_exchange(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
}

/// One attempt to take the lock word shared.
pub fn try_shared(word: &AtomicU64) -> bool {
    let v = word.load(Ordering::Relaxed);
    v & WRITER == 0
        && word
            .compare_exchange(v, v + 1, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
}

/// Release an exclusive hold.
pub fn release_exclusive(word: &AtomicU64) {
    word.store(0, Ordering::Release);
}

/// Release a shared hold.
pub fn release_shared(word: &AtomicU64) {
    word.fetch_sub(1, Ordering::Release);
}

/// One attempt to take an accumulate mutex.
pub fn try_mutex(word: &AtomicU64) -> bool {
    word.compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
}

/// Release an accumulate mutex.
pub fn release_mutex(word: &AtomicU64) {
    word.store(0, Ordering::Release);
}

/// Count one event (a post, a complete, a notification) after the data it announces.
pub fn count(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Release);
}

/// Whether a counter reached `want` (and, if so, the data counted before it is visible).
pub fn reached(counter: &AtomicU64, want: u64) -> bool {
    counter.load(Ordering::Acquire) >= want
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::cell::UnsafeCell as Tracked;
    use loom::sync::Arc;

    /// Two exclusive lockers and a shared one (bounded tries): never a writer with anyone
    /// else inside (loom reports the conflicting accesses), and each holder sees the
    /// previous holders' writes.
    #[test]
    fn loom_lock_word_excludes_and_hands_over() {
        crate::sync::loom_model(|| {
            let word = Arc::new(AtomicU64::new(0));
            let data = Arc::new(Tracked::new(0u64));
            let worker = |word: Arc<AtomicU64>, data: Arc<Tracked<u64>>, shared: bool| {
                for _ in 0..2 {
                    let ok = if shared {
                        try_shared(&word)
                    } else {
                        try_exclusive(&word)
                    };
                    if !ok {
                        loom::thread::yield_now();
                        continue;
                    }
                    if shared {
                        // SAFETY: loom checks this access; a reader holds the lock.
                        data.with(|v| unsafe { assert!(*v <= 2) });
                        release_shared(&word);
                    } else {
                        // SAFETY: loom checks this access; the writer holds the lock.
                        data.with_mut(|v| unsafe { *v += 1 });
                        release_exclusive(&word);
                    }
                    return true;
                }
                false
            };
            let (w2, d2) = (word.clone(), data.clone());
            let t = loom::thread::spawn(move || worker(w2, d2, false));
            let (w3, d3) = (word.clone(), data.clone());
            let r = loom::thread::spawn(move || worker(w3, d3, true));
            let mine = worker(word.clone(), data.clone(), false);
            let theirs = t.join().unwrap();
            r.join().unwrap();
            let n = mine as u64 + theirs as u64;
            // SAFETY: every thread has finished.
            data.with(|v| assert_eq!(unsafe { *v }, n));
            assert_eq!(word.load(Ordering::Relaxed), 0);
        });
    }

    /// Two accumulates under the mutex: both increments land.
    #[test]
    fn loom_accumulate_mutex_serialises() {
        crate::sync::loom_model(|| {
            let word = Arc::new(AtomicU64::new(0));
            let data = Arc::new(Tracked::new(0u64));
            let acc = |word: Arc<AtomicU64>, data: Arc<Tracked<u64>>| {
                for _ in 0..3 {
                    if try_mutex(&word) {
                        // SAFETY: loom checks this access; the mutex is held.
                        data.with_mut(|v| unsafe { *v += 1 });
                        release_mutex(&word);
                        return 1;
                    }
                    loom::thread::yield_now();
                }
                0
            };
            let (w2, d2) = (word.clone(), data.clone());
            let t = loom::thread::spawn(move || acc(w2, d2));
            let n = acc(word.clone(), data.clone()) + t.join().unwrap();
            // SAFETY: both threads have finished.
            data.with(|v| assert_eq!(unsafe { *v }, n));
        });
    }

    /// A counter hands data over: post/complete/notify.
    #[test]
    fn loom_counter_publishes_data() {
        crate::sync::loom_model(|| {
            let counter = Arc::new(AtomicU64::new(0));
            let data = Arc::new(Tracked::new(0u64));
            let (c2, d2) = (counter.clone(), data.clone());
            let t = loom::thread::spawn(move || {
                // SAFETY: loom checks this access; written before the count.
                d2.with_mut(|v| unsafe { *v = 7 });
                count(&c2);
            });
            for _ in 0..3 {
                if reached(&counter, 1) {
                    // SAFETY: loom checks this access; read after the count was seen.
                    data.with(|v| assert_eq!(unsafe { *v }, 7));
                    break;
                }
                loom::thread::yield_now();
            }
            t.join().unwrap();
        });
    }
}
