//! Event instances for MPI_T's events: the engine records them (only while a tool has asked
//! for the kind) into a bounded lock-free ring of its VCI (`sync::word_ring`: recording takes
//! no lock, only a compare-exchange and a release store); the ABI takes them out (one taker at
//! a time, off the engine's path) and calls the tool's callbacks. A full ring drops the event
//! and counts it, for the tool's dropped-event handler.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{LazyLock, Mutex, OnceLock};
use std::time::Instant;

use crate::stats::MAX_VCIS;
use crate::sync::word_ring::WordRing;

/// The kinds of event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A message arrived that no posted receive matched.
    UnexpectedArrival,
    /// A send started the rendezvous protocol (its data waits for the receiver).
    RendezvousStart,
}

pub const KINDS: [EventKind; 2] = [EventKind::UnexpectedArrival, EventKind::RendezvousStart];

/// One event: when, on which VCI, and its fields (context id, rank in the communicator of
/// the peer, tag, bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub kind: EventKind,
    pub timestamp: u64,
    pub vci: usize,
    pub fields: [i64; 4],
}

/// Events a VCI keeps before dropping more.
pub const CAPACITY: usize = 1024;

static ENABLED: [AtomicBool; 2] = [const { AtomicBool::new(false) }; 2];

/// Words of a stored event: kind, timestamp, the four fields.
const WORDS: usize = 6;

/// Each VCI's ring, made at its first event.
static RINGS: [OnceLock<WordRing<WORDS>>; MAX_VCIS] = [const { OnceLock::new() }; MAX_VCIS];

/// Events dropped for a full ring, per kind, since the last `take`.
static DROPPED: [AtomicU64; 2] = [const { AtomicU64::new(0) }; 2];

/// Serialises the takers (the ring has one consumer at a time); never taken by the engine.
static TAKER: Mutex<()> = Mutex::new(());

/// Events recorded and not yet taken, over all VCIs (a cheap check for the dispatcher).
static WAITING: AtomicU64 = AtomicU64::new(0);

/// Nanoseconds since the first use of the clock in this process (CLOCK_MONOTONIC): the
/// timestamps of events and of MPI_T's one source.
pub fn now() -> u64 {
    static ORIGIN: LazyLock<Instant> = LazyLock::new(Instant::now);
    ORIGIN.elapsed().as_nanos() as u64
}

/// Whether a tool asked for events of `kind` (one relaxed load on the engine's path).
#[inline]
pub fn enabled(kind: EventKind) -> bool {
    ENABLED[kind as usize].load(Relaxed)
}

/// Start or stop recording `kind`.
pub fn enable(kind: EventKind, on: bool) {
    ENABLED[kind as usize].store(on, Relaxed);
}

/// Record an event of `kind` on `vci` (call only when `enabled(kind)`). Lock-free.
#[cold]
pub fn record(vci: usize, kind: EventKind, fields: [i64; 4]) {
    let ring = RINGS[vci % MAX_VCIS].get_or_init(|| WordRing::new(CAPACITY));
    let [a, b, c, d] = fields.map(|f| f as u64);
    if ring.push([kind as u64, now(), a, b, c, d]) {
        WAITING.fetch_add(1, Relaxed);
    } else {
        DROPPED[kind as usize].fetch_add(1, Relaxed);
        DROPS_SEEN.store(true, Relaxed);
    }
}

/// Take every recorded event, VCI by VCI, and the drops per kind since the last call.
pub fn take() -> (Vec<Record>, [u64; 2]) {
    let mut out = Vec::new();
    let mut dropped = [0; 2];
    if WAITING.load(Relaxed) == 0 && !any_dropped() {
        return (out, dropped);
    }
    let _one_taker = TAKER.lock().unwrap_or_else(|p| p.into_inner());
    for (vci, ring) in RINGS.iter().enumerate() {
        let Some(ring) = ring.get() else { continue };
        let before = out.len();
        out.extend(std::iter::from_fn(|| ring.pop()).map(|w| Record {
            kind: KINDS[w[0] as usize],
            timestamp: w[1],
            vci,
            fields: [w[2] as i64, w[3] as i64, w[4] as i64, w[5] as i64],
        }));
        WAITING.fetch_sub((out.len() - before) as u64, Relaxed);
    }
    for (d, k) in dropped.iter_mut().zip(DROPPED.iter()) {
        *d = k.swap(0, Relaxed);
    }
    (out, dropped)
}

static DROPS_SEEN: AtomicBool = AtomicBool::new(false);

fn any_dropped() -> bool {
    DROPS_SEEN.swap(false, Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_drops_and_takes() {
        let v = MAX_VCIS - 2;
        for i in 0..CAPACITY + 3 {
            record(v, EventKind::RendezvousStart, [0, 1, 2, i as i64]);
        }
        let (events, dropped) = take();
        assert_eq!(events.iter().filter(|e| e.vci == v).count(), CAPACITY);
        assert_eq!(dropped[EventKind::RendezvousStart as usize], 3);
    }
}
