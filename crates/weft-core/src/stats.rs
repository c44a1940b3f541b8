//! Performance counters (what MPI_T's performance variables, `WEFT_STATS` and `weft-info
//! --pvars` read): one set per VCI, process-wide so they outlive an instance.
//!
//! Each VCI's counters are written only by the holder of that VCI's lock (or the one thread
//! that uses a stream VCI), so an update is a relaxed load and a relaxed store of a counter
//! in this VCI's own cache lines: no read-modify-write, no lock, no line shared with another
//! VCI. Readers (a tool, on any thread) load them without the lock: a value may be one
//! update old, never torn. Counters are never reset: a tool's reset keeps an offset.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

/// The most VCIs an instance has: `WEFT_NUM_VCIS` (at most 64) + `WEFT_MAX_STREAMS` (at
/// most 128).
pub const MAX_VCIS: usize = 64 + 128;

/// What a VCI counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Counter {
    /// Messages sent to this process / to other processes of the node (shared memory).
    SentSelf,
    SentShm,
    BytesSentSelf,
    BytesSentShm,
    /// Messages that arrived from this process / through shared memory.
    RecvSelf,
    RecvShm,
    BytesRecvSelf,
    BytesRecvShm,
    /// Sends by protocol.
    EagerSends,
    RendezvousSends,
    /// Arrivals that found no posted receive.
    UnexpectedArrivals,
    /// Messages in the unexpected queue now, and the most ever.
    UnexpectedLen,
    UnexpectedHigh,
    /// Receives in the posted queue now, and the most ever.
    PostedLen,
    PostedHigh,
    /// Progress passes, and those that found nothing to do.
    Polls,
    EmptyPolls,
    /// Large messages received with one copy (cross-memory attach, `WEFT_SHM_LARGE`).
    SingleCopyReceives,
    /// Sends that found the peer's ring full (and waited in the VCI's queue).
    RingFull,
}

/// Number of counters per VCI.
pub const COUNTERS: usize = Counter::RingFull as usize + 1;

/// The counters of one VCI, on cache lines of their own.
#[repr(align(128))]
pub struct VciStats {
    counters: [AtomicU64; COUNTERS],
}

impl VciStats {
    const fn new() -> VciStats {
        VciStats {
            counters: [const { AtomicU64::new(0) }; COUNTERS],
        }
    }
}

static STATS: [VciStats; MAX_VCIS] = [const { VciStats::new() }; MAX_VCIS];

#[inline]
fn cell(vci: usize, c: Counter) -> &'static AtomicU64 {
    &STATS[vci % MAX_VCIS].counters[c as usize]
}

/// Add `n` to counter `c` of `vci`. The caller holds `vci`'s lock (see the module docs).
#[inline]
pub fn add(vci: usize, c: Counter, n: u64) {
    let a = cell(vci, c);
    a.store(a.load(Relaxed).wrapping_add(n), Relaxed);
}

/// Set level counter `level` of `vci` to `value` and raise its high-water mark `high` to
/// it. The caller holds `vci`'s lock.
#[inline]
pub fn set_level(vci: usize, level: Counter, high: Counter, value: u64) {
    cell(vci, level).store(value, Relaxed);
    let h = cell(vci, high);
    if value > h.load(Relaxed) {
        h.store(value, Relaxed);
    }
}

/// A message of `bytes` handed to the engine for job rank `dest` (`to_self`: this process).
#[inline]
pub fn sent(vci: usize, to_self: bool, bytes: u64, eager: bool) {
    let (m, b) = if to_self {
        (Counter::SentSelf, Counter::BytesSentSelf)
    } else {
        (Counter::SentShm, Counter::BytesSentShm)
    };
    add(vci, m, 1);
    add(vci, b, bytes);
    add(
        vci,
        if eager {
            Counter::EagerSends
        } else {
            Counter::RendezvousSends
        },
        1,
    );
}

/// A message of `bytes` arrived (`from_self`: sent by this process).
#[inline]
pub fn received(vci: usize, from_self: bool, bytes: u64) {
    let (m, b) = if from_self {
        (Counter::RecvSelf, Counter::BytesRecvSelf)
    } else {
        (Counter::RecvShm, Counter::BytesRecvShm)
    };
    add(vci, m, 1);
    add(vci, b, bytes);
}

/// Counter `c` of `vci`.
pub fn read(vci: usize, c: Counter) -> u64 {
    cell(vci, c).load(Relaxed)
}

/// Counter `c` over every VCI: summed, or the largest for high-water marks.
pub fn total(c: Counter) -> u64 {
    let all = (0..MAX_VCIS).map(|v| read(v, c));
    match c {
        Counter::UnexpectedHigh | Counter::PostedHigh => all.max().unwrap_or(0),
        _ => all.fold(0, u64::wrapping_add),
    }
}

/// Slots of `AlgoCounts`: one per (collective, algorithm) pair (`coll::choice` numbers them).
pub const ALGO_SLOTS: usize = 48;

/// How many times a communicator ran each collective algorithm.
#[derive(Debug)]
pub struct AlgoCounts {
    slots: [AtomicU64; ALGO_SLOTS],
}

impl Default for AlgoCounts {
    fn default() -> AlgoCounts {
        AlgoCounts {
            slots: [const { AtomicU64::new(0) }; ALGO_SLOTS],
        }
    }
}

impl AlgoCounts {
    /// One more run of the algorithm of `slot`. A load and a store, not a read-modify-write:
    /// collectives on one communicator never run concurrently (MPI's rule), so nothing is
    /// lost, and a stream communicator's collectives stay free of atomic read-modify-writes.
    #[inline]
    pub fn bump(&self, slot: usize) {
        let cell = &self.slots[slot % ALGO_SLOTS];
        cell.store(cell.load(Relaxed) + 1, Relaxed);
    }

    pub fn read(&self, slot: usize) -> u64 {
        self.slots[slot % ALGO_SLOTS].load(Relaxed)
    }
}

/// The point-to-point messages the user sent on one communicator (MPI_T's variables bound to
/// a communicator): counted only while some tool holds a handle of one (`CommCounting`), so
/// a program without one pays a relaxed load per send.
#[derive(Debug, Default)]
pub struct CommCounts {
    messages: AtomicU64,
    bytes: AtomicU64,
}

/// Handles of communicator message variables that tools hold now.
static COMM_COUNTING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl CommCounts {
    /// A message of `bytes` sent on the communicator (threads may send on one communicator
    /// at once: a read-modify-write, paid only while counting).
    #[inline]
    pub fn sent(&self, bytes: usize) {
        if COMM_COUNTING.load(Relaxed) != 0 {
            self.messages.fetch_add(1, Relaxed);
            self.bytes.fetch_add(bytes as u64, Relaxed);
        }
    }

    /// (messages, bytes) counted so far.
    pub fn read(&self) -> (u64, u64) {
        (self.messages.load(Relaxed), self.bytes.load(Relaxed))
    }
}

/// While one exists, communicators count their messages (`CommCounts`).
#[derive(Debug)]
pub struct CommCounting(());

impl CommCounting {
    #[allow(clippy::new_without_default)]
    pub fn new() -> CommCounting {
        COMM_COUNTING.fetch_add(1, Relaxed);
        CommCounting(())
    }
}

impl Drop for CommCounting {
    fn drop(&mut self) {
        COMM_COUNTING.fetch_sub(1, Relaxed);
    }
}

/// Whether MPI calls and waits are timed (`WEFT_STATS`): off, the only cost is this load.
static TIMING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// Nanoseconds inside MPI calls, and waiting for completion, over all threads.
static MPI_NS: AtomicU64 = AtomicU64::new(0);
static WAIT_NS: AtomicU64 = AtomicU64::new(0);

/// Whether calls are timed.
#[inline]
pub fn timing() -> bool {
    TIMING.load(Relaxed)
}

pub fn set_timing(on: bool) {
    TIMING.store(on, Relaxed);
    set_measured(MEASURED_TIMING, on);
}

/// `MEASURED` bits: calls are timed (`set_timing`), calls are traced (`trace::start`).
pub(crate) const MEASURED_TIMING: u8 = 1;
pub(crate) const MEASURED_TRACE: u8 = 2;

/// Whether calls are timed or traced, in one word: `MPI_Init` reads it to put the ABI
/// layer's measuring links in front of the calls.
static MEASURED: AtomicU8 = AtomicU8::new(0);

/// Whether MPI calls are timed (`timing`) or traced (`trace::on`): one load.
#[inline]
pub fn measured() -> bool {
    MEASURED.load(Relaxed) != 0
}

pub(crate) fn set_measured(bit: u8, on: bool) {
    if on {
        MEASURED.fetch_or(bit, Relaxed);
    } else {
        MEASURED.fetch_and(!bit, Relaxed);
    }
}

/// Time spent inside an MPI call (only while `timing`).
pub fn add_mpi_time(ns: u64) {
    MPI_NS.fetch_add(ns, Relaxed);
}

/// Time spent waiting for a completion (only while `timing`).
pub fn add_wait_time(ns: u64) {
    WAIT_NS.fetch_add(ns, Relaxed);
}

/// Nanoseconds in MPI calls and waiting, so far.
pub fn times() -> (u64, u64) {
    (MPI_NS.load(Relaxed), WAIT_NS.load(Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_marks() {
        // VCI 191 is used by no other test of this process.
        let v = MAX_VCIS - 1;
        let before = total(Counter::SentShm);
        sent(v, false, 100, true);
        sent(v, false, 50, false);
        assert_eq!(read(v, Counter::SentShm), 2);
        assert_eq!(read(v, Counter::BytesSentShm), 150);
        assert_eq!(read(v, Counter::RendezvousSends), 1);
        assert!(total(Counter::SentShm) >= before + 2);
        set_level(v, Counter::UnexpectedLen, Counter::UnexpectedHigh, 5);
        set_level(v, Counter::UnexpectedLen, Counter::UnexpectedHigh, 2);
        assert_eq!(read(v, Counter::UnexpectedLen), 2);
        assert_eq!(read(v, Counter::UnexpectedHigh), 5);
    }

    #[test]
    fn communicators_count_only_while_a_handle_exists() {
        let c = CommCounts::default();
        c.sent(10);
        assert_eq!(c.read(), (0, 0));
        let on = CommCounting::new();
        c.sent(10);
        c.sent(5);
        assert_eq!(c.read(), (2, 15));
        drop(on);
        c.sent(7);
        assert_eq!(c.read(), (2, 15));
    }
}
