//! Event instances for MPI_T's events: the engine records them (only while a tool has asked
//! for the kind) into a bounded buffer of its VCI, under that VCI's lock; the ABI takes them
//! out with no lock held and calls the tool's callbacks. A full buffer drops the event and
//! counts it, for the tool's dropped-event handler.
#![forbid(unsafe_code)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{LazyLock, Mutex};
use std::time::Instant;

use crate::stats::MAX_VCIS;

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

struct Buffer {
    events: VecDeque<Record>,
    dropped: [u64; 2],
}

static BUFFERS: LazyLock<Vec<Mutex<Buffer>>> = LazyLock::new(|| {
    (0..MAX_VCIS)
        .map(|_| {
            Mutex::new(Buffer {
                events: VecDeque::new(),
                dropped: [0; 2],
            })
        })
        .collect()
});

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

fn buffer(vci: usize) -> std::sync::MutexGuard<'static, Buffer> {
    BUFFERS[vci % MAX_VCIS]
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// Record an event of `kind` on `vci` (call only when `enabled(kind)`).
#[cold]
pub fn record(vci: usize, kind: EventKind, fields: [i64; 4]) {
    let mut b = buffer(vci);
    if b.events.len() >= CAPACITY {
        b.dropped[kind as usize] += 1;
        DROPS_SEEN.store(true, Relaxed);
        return;
    }
    b.events.push_back(Record {
        kind,
        timestamp: now(),
        vci,
        fields,
    });
    WAITING.fetch_add(1, Relaxed);
}

/// Take every recorded event, VCI by VCI, and the drops per kind since the last call.
pub fn take() -> (Vec<Record>, [u64; 2]) {
    let mut out = Vec::new();
    let mut dropped = [0; 2];
    if WAITING.load(Relaxed) == 0 && !any_dropped() {
        return (out, dropped);
    }
    for vci in 0..MAX_VCIS {
        let mut b = buffer(vci);
        let n = b.events.len() as u64;
        out.extend(b.events.drain(..));
        WAITING.fetch_sub(n, Relaxed);
        for (d, k) in dropped.iter_mut().zip(b.dropped.iter_mut()) {
            *d += std::mem::take(k);
        }
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
