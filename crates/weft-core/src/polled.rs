//! Polled work that runs outside every internal lock: user callbacks that drive completion
//! (the `poll_fn` of generalized requests) and internal work that needs them.
//!
//! Items register in a per-process list; every completion call (`MPI_Test*`, `MPI_Wait*`
//! loops, `MPIX_Stream_progress`, blocking probes) runs `run()` once per poll. With nothing
//! registered that costs one atomic load. `run()` copies the list (under a mutex only held
//! for the copy), releases it, then calls each item with no lock held, so a callback may call
//! MPI, including functions that progress again (a thread-local guard stops the nested
//! `run()`, and each item is polled by one thread at a time).
//!
//! Work that only the registering thread completes (a thread communicator's requests: the
//! thread is their rank) goes to that thread's own list instead (`register_local`), which
//! `run()` polls with no lock and no copy: threads of a parallel region polling their
//! requests share nothing.
#![forbid(unsafe_code)]

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A piece of polled work.
pub trait Polled: Send + Sync {
    /// Do some work; return true when finished (the item is then dropped from the list).
    fn poll(&self) -> bool;
}

struct List {
    items: Mutex<Vec<Arc<dyn Polled>>>,
    len: AtomicUsize,
}

static LIST: List = List {
    items: Mutex::new(Vec::new()),
    len: AtomicUsize::new(0),
};

thread_local! {
    static RUNNING: Cell<bool> = const { Cell::new(false) };
    /// This thread's own items (`register_local`).
    static LOCAL: RefCell<Vec<Arc<dyn Polled>>> = const { RefCell::new(Vec::new()) };
}

fn items() -> std::sync::MutexGuard<'static, Vec<Arc<dyn Polled>>> {
    LIST.items.lock().unwrap_or_else(|p| p.into_inner())
}

/// Add an item; it is polled until it reports finished.
pub fn register(item: Arc<dyn Polled>) {
    let mut list = items();
    list.push(item);
    LIST.len.store(list.len(), Ordering::Release);
}

/// Add an item that only this thread polls (its `run()` calls); it is polled until it
/// reports finished.
pub fn register_local(item: Arc<dyn Polled>) {
    LOCAL.with(|l| l.borrow_mut().push(item));
}

/// Whether this thread has items of its own.
fn any_local() -> bool {
    LOCAL.with(|l| l.try_borrow().map_or(true, |l| !l.is_empty()))
}

/// Whether any item is registered that this thread's `run()` polls.
pub fn any() -> bool {
    LIST.len.load(Ordering::Acquire) != 0 || any_local()
}

/// Poll this thread's own items once (inside `run`): whether one finished. Items registered
/// meanwhile (by a poll calling MPI) are kept.
fn run_local() -> bool {
    let mut items = LOCAL.with(|l| std::mem::take(&mut *l.borrow_mut()));
    let before = items.len();
    items.retain(|i| !i.poll());
    let finished = items.len() != before;
    LOCAL.with(|l| {
        let mut l = l.borrow_mut();
        items.append(&mut l);
        *l = items;
    });
    finished
}

/// Poll every item once (unless this thread is already inside `run`). Returns whether an
/// item finished.
pub fn run() -> bool {
    if !any() || RUNNING.with(|r| r.replace(true)) {
        return false;
    }
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            RUNNING.with(|r| r.set(false));
        }
    }
    let _reset = Reset;
    let local = any_local() && run_local();
    if LIST.len.load(Ordering::Acquire) == 0 {
        return local;
    }
    let snapshot: Vec<Arc<dyn Polled>> = items().clone();
    let done: Vec<&Arc<dyn Polled>> = snapshot.iter().filter(|i| i.poll()).collect();
    if done.is_empty() {
        return local;
    }
    let mut list = items();
    list.retain(|i| !done.iter().any(|d| Arc::ptr_eq(d, i)));
    LIST.len.store(list.len(), Ordering::Release);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    struct Countdown(AtomicU32);
    impl Polled for Countdown {
        fn poll(&self) -> bool {
            self.0.fetch_sub(1, Ordering::Relaxed) == 1
        }
    }

    #[test]
    fn items_run_until_finished() {
        let item = Arc::new(Countdown(AtomicU32::new(3)));
        register(item.clone());
        assert!(any());
        let mut finished = 0;
        for _ in 0..5 {
            finished += run() as u32;
        }
        assert_eq!(finished, 1);
        assert_eq!(item.0.load(Ordering::Relaxed), 0);
    }

    /// A local item is polled by its own thread's `run()` only, without the shared list.
    #[test]
    fn local_items_run_on_their_thread() {
        let item = Arc::new(Countdown(AtomicU32::new(2)));
        register_local(item.clone());
        std::thread::spawn(|| {
            assert!(!any_local());
            run();
        })
        .join()
        .unwrap();
        assert_eq!(item.0.load(Ordering::Relaxed), 2);
        assert!(any());
        run();
        assert!(run());
        assert_eq!(item.0.load(Ordering::Relaxed), 0);
        assert!(!any_local());
    }
}
