//! What the `ucx` transport knows about failed peers: UCP reports a lost peer through an
//! endpoint's error handler or a failed request; the transport records it here instead of
//! stopping, and the engine, seeing the failure count grow, fails the operations that wait on
//! the network (`vci::engine::fail_network_waits`). Lock-free: each peer's state is one
//! atomic status, written once (first failure wins).
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicI8, AtomicU64, Ordering};

use super::ffi::{ucs_status_t, UCS_OK};

/// Failures seen, per job rank, and in all.
pub struct Health {
    /// For each job rank, `UCS_OK` while it is reachable, else the status that lost it.
    peers: Box<[AtomicI8]>,
    /// A failure no single peer can be blamed for (a receive that failed), else `UCS_OK`.
    general: AtomicI8,
    /// How many failures were recorded (only grows).
    count: AtomicU64,
    /// The process is finalizing: peers that are done end and close their endpoints, which
    /// UCX reports like deaths; none is recorded from then on.
    closing: AtomicBool,
}

impl Health {
    pub fn new(job_size: u32) -> Health {
        Health {
            peers: (0..job_size).map(|_| AtomicI8::new(UCS_OK)).collect(),
            general: AtomicI8::new(UCS_OK),
            count: AtomicU64::new(0),
            closing: AtomicBool::new(false),
        }
    }

    /// Record that job rank `rank` (or, with `None`, some peer) was lost with `status`.
    /// True the first time for that peer (the caller then reports it once).
    pub fn record(&self, rank: Option<u32>, status: ucs_status_t) -> bool {
        if self.closing.load(Ordering::Acquire) {
            return false;
        }
        let status = if status == UCS_OK { -1 } else { status };
        let slot = match rank.and_then(|r| self.peers.get(r as usize)) {
            Some(slot) => slot,
            None => &self.general,
        };
        let first = slot
            .compare_exchange(UCS_OK, status, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if first {
            self.count.fetch_add(1, Ordering::Release);
        }
        first
    }

    /// From now on peers are expected to end (see `closing`).
    pub fn close(&self) {
        self.closing.store(true, Ordering::Release);
    }

    /// The status that lost job rank `rank`, if it was lost.
    pub fn lost(&self, rank: u32) -> Option<ucs_status_t> {
        let s = self.peers.get(rank as usize)?.load(Ordering::Acquire);
        (s != UCS_OK).then_some(s)
    }

    /// How many failures were recorded so far.
    pub fn failures(&self) -> u64 {
        self.count.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_is_recorded_once_and_counted() {
        let h = Health::new(4);
        assert_eq!(h.failures(), 0);
        assert_eq!(h.lost(2), None);
        assert!(h.record(Some(2), -25));
        assert!(!h.record(Some(2), -20), "the first failure wins");
        assert_eq!(h.lost(2), Some(-25));
        assert_eq!(h.failures(), 1);
        assert!(h.record(None, -3));
        assert!(!h.record(Some(9), -3), "an unknown rank counts as general");
        assert_eq!(h.failures(), 2);
        assert_eq!(h.lost(0), None);
        h.close();
        assert!(!h.record(Some(0), -25), "peers end while finalizing");
        assert_eq!((h.lost(0), h.failures()), (None, 2));
    }
}
