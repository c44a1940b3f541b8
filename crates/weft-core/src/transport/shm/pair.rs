//! Pair rings: single-producer rings from one VCI of one process to one VCI of another
//! process of the node, for MPIX streams (and, pushed as multi-producer rings, the rings to
//! processes of other jobs: `foreign`).
//!
//! A stream's VCI is used by one thread at a time (the stream's serial contract), and its
//! state, where these rings are kept, is in hand whenever it sends. So the ring from stream
//! VCI `a` of process P to stream VCI `x` of process L has exactly one producer and one
//! consumer, and a push claims its position with a plain store (`Ring::try_push_single`):
//! the send path of a stream executes no atomic read-modify-write. (The node segment's ring
//! of a VCI is shared by every sender to it, so its pushes need a compare-exchange.)
//!
//! Each pair ring is a small segment of its own, named after both ends: job ranks, VCIs
//! and each end's instance nonce, so that a process which started a new MPI instance never
//! meets a ring of an earlier one. Both ends open it with create-or-attach while they
//! create a stream communicator, and the name is removed once both have mapped it. A VCI
//! keeps its pair rings until its instance ends: a later stream on the same VCI reuses them
//! (still one producer), and messages in flight are never cut off.

use std::io;

use super::ring::{ring_bytes, RingPlace};
use super::segment::{Segment, HEADER_BYTES};
use super::{Consumer, Geometry, Ring, WIRE_HEADER_BYTES};

/// One pair ring, mapped.
pub struct PairRing {
    /// Keeps the mapping that `place` lies in.
    _segment: Segment,
    place: RingPlace,
}

impl PairRing {
    /// Create or attach the pair ring `name` (a job segment name both ends compute alike).
    pub fn open(name: &str, geometry: Geometry) -> io::Result<PairRing> {
        let len = HEADER_BYTES + ring_bytes(geometry.cells, geometry.cell_size);
        let segment = Segment::create_or_attach_by(name, len, 2)?;
        // It is zero-filled or used by the other end with the same geometry (the size check of
        // `Segment::open` catches disagreement).
        // SAFETY: the ring lies inside the segment right after its header, 128-byte aligned.
        let place = unsafe {
            RingPlace::new(
                segment.base().add(HEADER_BYTES),
                geometry.cells,
                geometry.cell_size,
            )
        };
        Ok(PairRing {
            _segment: segment,
            place,
        })
    }

    fn ring(&self) -> Ring<'_> {
        // SAFETY: the segment stays mapped while `self` lives, which the view borrows.
        unsafe { self.place.view() }
    }

    /// Push one message with the multi-producer push (a ring any VCI of this process may
    /// push into: `foreign`); false when it is full.
    pub fn try_push_shared(
        &self,
        header: &[u8; WIRE_HEADER_BYTES],
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> bool {
        self.ring().try_push(header, len, fill)
    }
}

/// One end of a pair: the peer's job rank, its VCI and its instance nonce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairEnd {
    pub job_rank: u32,
    pub vci: u8,
    pub nonce: u64,
}

/// The pair rings a VCI pushes into.
#[derive(Default)]
pub struct PairsOut {
    rings: Vec<(PairEnd, PairRing)>,
}

impl PairsOut {
    pub fn is_empty(&self) -> bool {
        self.rings.is_empty()
    }

    /// The ring this VCI pushes into to reach VCI `vci` of job rank `dest`, if there is one.
    #[inline]
    pub fn index_of(&self, dest: u32, vci: u8) -> Option<u16> {
        self.rings
            .iter()
            .position(|(end, _)| end.job_rank == dest && end.vci == vci)
            .map(|i| i as u16)
    }

    /// Whether the ring to `end` (the same peer instance) is open already.
    pub fn has(&self, end: PairEnd) -> bool {
        self.rings.iter().any(|(e, _)| *e == end)
    }

    /// Add the ring to `end`, replacing one to an earlier instance of the same peer VCI.
    pub fn add(&mut self, end: PairEnd, ring: PairRing) {
        self.rings
            .retain(|(e, _)| !(e.job_rank == end.job_rank && e.vci == end.vci));
        self.rings.push((end, ring));
    }

    /// Push one message into ring `index` (from `index_of`); false when it is full.
    #[inline]
    pub fn try_push(
        &self,
        index: u16,
        header: &[u8; WIRE_HEADER_BYTES],
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> bool {
        let ring = self.rings[index as usize].1.ring();
        // The name carries this process's job rank, VCI and instance nonce, and nothing else opens
        // it to push; pushing takes that state by reference, so one push runs at a time.
        // SAFETY: this ring's only producer is the VCI whose state holds this `PairsOut`.
        unsafe { ring.try_push_single(header, len, fill) }
    }
}

/// The pair rings a VCI drains, with its position in each.
#[derive(Default)]
pub struct PairsIn {
    rings: Vec<(PairEnd, PairRing, Consumer)>,
}

impl PairsIn {
    pub fn is_empty(&self) -> bool {
        self.rings.is_empty()
    }

    /// Whether the ring from `end` (the same peer instance) is open already.
    pub fn has(&self, end: PairEnd) -> bool {
        self.rings.iter().any(|(e, _, _)| *e == end)
    }

    /// Add the ring from `end` (a fresh one: position 0), replacing one from an earlier
    /// instance of the same peer VCI.
    pub fn add(&mut self, end: PairEnd, ring: PairRing) {
        self.rings
            .retain(|(e, _, _)| !(e.job_rank == end.job_rank && e.vci == end.vci));
        self.rings.push((end, ring, Consumer::at(0)));
    }

    /// Take arrivals, at most `budget` in all, handing each sender's job rank (or foreign
    /// id), header and payload to `consume`. Returns whether anything arrived.
    pub fn drain(
        &mut self,
        budget: usize,
        mut consume: impl FnMut(u32, &[u8; WIRE_HEADER_BYTES], &[u8]),
    ) -> bool {
        let mut got = 0;
        for (end, ring, consumer) in &mut self.rings {
            let ring = ring.ring();
            let from = end.job_rank;
            while got < budget && ring.try_pop(consumer, |h, p| consume(from, h, p)) {
                got += 1;
            }
        }
        got > 0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Both ends open the ring by one name (here in one process, as two mappings): what one
    /// pushes, the other drains, in order; a full ring refuses; the name is gone once both
    /// mapped it.
    #[test]
    fn two_ends_of_one_name_share_the_ring() {
        let name = format!("/weft.test-pair-{}", std::process::id());
        let geometry = Geometry {
            cells: 4,
            cell_size: 256,
        };
        let end = PairEnd {
            job_rank: 1,
            vci: 3,
            nonce: 7,
        };
        let mut out = PairsOut::default();
        out.add(end, PairRing::open(&name, geometry).unwrap());
        let mut inbound = PairsIn::default();
        inbound.add(end, PairRing::open(&name, geometry).unwrap());
        let path = format!("/dev/shm{name}");
        assert!(!std::path::Path::new(&path).exists(), "name removed");
        let i = out.index_of(1, 3).unwrap();
        assert_eq!(out.index_of(1, 4), None);
        for k in 0..4u8 {
            assert!(out.try_push(i, &[k; WIRE_HEADER_BYTES], 1, |c| c[0] = k * 2));
        }
        assert!(!out.try_push(i, &[9; WIRE_HEADER_BYTES], 1, |_| {}), "full");
        let mut got = Vec::new();
        assert!(inbound.drain(3, |_, h, p| got.push((h[0], p[0]))));
        assert_eq!(got, vec![(0, 0), (1, 2), (2, 4)], "budget of 3, in order");
        assert!(out.try_push(i, &[4; WIRE_HEADER_BYTES], 1, |c| c[0] = 8));
        got.clear();
        assert!(inbound.drain(64, |_, h, p| got.push((h[0], p[0]))));
        assert_eq!(got, vec![(3, 6), (4, 8)]);
        assert!(!inbound.drain(64, |_, _, _| panic!("empty")));
    }
}
