//! Process-scope and thread-scope flushes (`mpi_win_scope`, issue #18). Every operation
//! completes at its call, so a thread's own operations are complete at any flush it makes.
//! What a process-scope flush adds is the operations other threads of the process have in
//! progress on the window when it starts: it waits for them (MPI 4.1 §12.5.4: a flush
//! completes the operations the calling *process* issued). A thread-scope flush completes
//! only the calling thread's operations, so it waits for nobody.
//!
//! Tracking (`Tracker`, one per window, shared by its views): `LANES` lanes, one per thread
//! of the process (a process-wide index each thread takes at its first tracked operation and
//! gives back when it exits). A lane is two counters only its thread writes: `started`
//! before an operation moves data, `finished` (release) after it. Threads beyond `LANES`
//! share `overflow`, a count of their operations in flight (read-modify-writes). Operations
//! are tracked only while calls may overlap (`MPI_THREAD_MULTIPLE`): below it no other
//! thread can be inside an operation.
//!
//! Proof sketch. Writer: its thread's operations on a lane run one after another, the `n`th
//! stores `started = n` before moving data and `finished = n` (release) after, so
//! `finished` never passes `started` and `finished >= n` means the `n`th operation ended.
//! Flush: it loads a lane's `started` (`s`) and waits for `finished >= s`; the acquire load
//! that sees it synchronises with the release store of the `s`th end (or a later one, of
//! the same thread, which comes after it), so that operation's data moves happen before the
//! flush returns. The wait ends once the operation in progress at the load ends (later
//! operations of the lane only raise `finished`): no starvation. An operation whose
//! `started` the load did not see is concurrent with the flush, which the standard leaves
//! unordered. Overflow: each end is a release decrement; an acquire load that reads 0 reads
//! the last decrement, and every earlier one heads a release sequence that the later
//! read-modify-writes continue, so every ended operation's moves happen before it (a load
//! of 0 can wait on a busy counter: only with more than `LANES` threads). Model:
//! `loom_process_flush_sees_other_threads_operations`.
#![forbid(unsafe_code)]

use std::sync::Mutex;

use crate::sync::atomic::{AtomicU64, Ordering};

/// Threads with a lane of their own in every window; more share the overflow counter.
pub const LANES: usize = 64;

/// One thread's operations on one window: written by that thread only.
#[repr(align(64))]
struct Lane {
    started: AtomicU64,
    finished: AtomicU64,
}

/// The operations in progress on one window, by thread.
pub struct Tracker {
    lanes: Box<[Lane]>,
    overflow: AtomicU64,
}

impl std::fmt::Debug for Tracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tracker")
    }
}

/// An operation in progress (its end is recorded when dropped).
pub enum InFlight<'a> {
    Lane(&'a AtomicU64, u64),
    Overflow(&'a AtomicU64),
}

impl Drop for InFlight<'_> {
    #[inline]
    fn drop(&mut self) {
        match self {
            InFlight::Lane(finished, n) => finished.store(*n, Ordering::Release),
            InFlight::Overflow(count) => {
                count.fetch_sub(1, Ordering::Release);
            }
        }
    }
}

impl Tracker {
    pub fn new() -> Tracker {
        Self::with_lanes(LANES)
    }

    fn with_lanes(n: usize) -> Tracker {
        let lane = |_| Lane {
            started: AtomicU64::new(0),
            finished: AtomicU64::new(0),
        };
        Tracker {
            lanes: (0..n).map(lane).collect(),
            overflow: AtomicU64::new(0),
        }
    }

    /// An operation of the calling thread, which holds lane `lane`, begins.
    #[inline]
    fn begin_on(&self, lane: usize) -> InFlight<'_> {
        match self.lanes.get(lane) {
            Some(l) => {
                // Only this thread writes the lane: a load and a store, no read-modify-write.
                let n = l.started.load(Ordering::Relaxed) + 1;
                l.started.store(n, Ordering::Relaxed);
                InFlight::Lane(&l.finished, n)
            }
            None => {
                self.overflow.fetch_add(1, Ordering::Relaxed);
                InFlight::Overflow(&self.overflow)
            }
        }
    }

    /// An operation of the calling thread begins; it ends when the guard is dropped.
    #[inline]
    pub fn begin(&self) -> InFlight<'_> {
        self.begin_on(thread_lane())
    }

    /// Wait, with `wait` (which spins until its argument answers true), for every operation
    /// another thread has in progress on the first `in_use` lanes and the overflow.
    fn wait_others_on(&self, in_use: usize, mut wait: impl FnMut(&mut dyn FnMut() -> bool)) {
        for l in &self.lanes[..in_use.min(self.lanes.len())] {
            let s = l.started.load(Ordering::Acquire);
            if l.finished.load(Ordering::Acquire) < s {
                wait(&mut || l.finished.load(Ordering::Acquire) >= s);
            }
        }
        if self.overflow.load(Ordering::Acquire) != 0 {
            wait(&mut || self.overflow.load(Ordering::Acquire) == 0);
        }
    }

    /// The process-scope flush's wait: every operation in progress on the window when it
    /// starts (the caller's own are complete: it is not inside one).
    pub fn wait_others(&self, wait: impl FnMut(&mut dyn FnMut() -> bool)) {
        self.wait_others_on(lanes_in_use(), wait)
    }
}

/// Lane indices: how many were ever handed out, and those given back by exited threads.
static LANE_IDS: Mutex<(usize, Vec<usize>)> = Mutex::new((0, Vec::new()));
/// The first lane index never handed out (flushes look at the lanes below it).
static IN_USE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn lane_ids() -> std::sync::MutexGuard<'static, (usize, Vec<usize>)> {
    LANE_IDS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A thread's lane index, given back when the thread exits. The mutex hands a reused index
/// over: the exited thread's last stores to the lanes happen before the next holder's loads.
struct LaneId(usize);

impl LaneId {
    fn take() -> LaneId {
        let mut ids = lane_ids();
        if let Some(i) = ids.1.pop() {
            return LaneId(i);
        }
        let i = ids.0;
        ids.0 += 1;
        IN_USE.store(ids.0, std::sync::atomic::Ordering::Release);
        LaneId(i)
    }
}

impl Drop for LaneId {
    fn drop(&mut self) {
        lane_ids().1.push(self.0);
    }
}

thread_local! {
    static LANE: LaneId = LaneId::take();
}

/// The calling thread's lane (past the lanes while its thread-local storage is being torn
/// down: the overflow counter then).
#[inline]
fn thread_lane() -> usize {
    LANE.try_with(|l| l.0).unwrap_or(usize::MAX)
}

fn lanes_in_use() -> usize {
    IN_USE.load(std::sync::atomic::Ordering::Acquire)
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    /// A thread puts (on a lane, or on the overflow counter) while another, once it has seen
    /// the operation begin, flushes with process scope: when the flush returns, it sees the
    /// put's data.
    fn flush_sees(lane: usize) {
        crate::sync::loom_model(move || {
            let t = Arc::new(Tracker::with_lanes(1));
            let data = Arc::new(AtomicU64::new(0));
            let (t2, d2) = (t.clone(), data.clone());
            let op = loom::thread::spawn(move || {
                let _op = t2.begin_on(lane);
                d2.store(7, Ordering::Relaxed);
            });
            let begun = || match lane {
                0 => t.lanes[0].started.load(Ordering::Relaxed) == 1,
                _ => t.overflow.load(Ordering::Relaxed) == 1,
            };
            let seen = (0..3).any(|_| {
                begun() || {
                    loom::thread::yield_now();
                    false
                }
            });
            let mut waited = true;
            t.wait_others_on(1, |done| {
                waited = (0..3).any(|_| {
                    done() || {
                        loom::thread::yield_now();
                        false
                    }
                });
            });
            if seen && waited {
                assert_eq!(data.load(Ordering::Relaxed), 7);
            }
            op.join().unwrap();
        });
    }

    #[test]
    fn loom_process_flush_sees_other_threads_operations() {
        flush_sees(0);
        flush_sees(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_finished_operations_are_not_waited_for() {
        let t = Tracker::new();
        drop(t.begin());
        drop(t.begin_on(LANES + 3));
        t.wait_others(|_| panic!("nothing is in progress"));
    }

    #[test]
    fn an_operation_in_progress_is_waited_for() {
        let t = Tracker::new();
        let op = t.begin();
        let mut asked = 0;
        t.wait_others_on(LANES, |done| {
            asked += 1;
            assert!(!done());
        });
        assert_eq!(asked, 1);
        drop(op);
        t.wait_others_on(LANES, |_| panic!("it ended"));
        let over = t.begin_on(LANES);
        let mut asked = 0;
        t.wait_others_on(0, |done| {
            asked += 1;
            assert!(!done());
        });
        assert_eq!(asked, 1);
        drop(over);
    }
}
