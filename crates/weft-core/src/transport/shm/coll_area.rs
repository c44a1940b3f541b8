//! The shared memory of one communicator's node-level collectives (the algorithms are in
//! `coll/shm.rs`): for each rank and parity p in {0, 1} a slot that only that rank writes.
//!
//! A slot is a 64-byte line holding a sequence number and up to `INLINE` payload bytes (so a
//! small contribution travels with its flag in one cache-line transfer), followed by a region
//! for larger payloads. Slots are 128-byte aligned: the adjacent-line prefetcher fetches
//! 128-byte pairs, and a pair must not span two ranks' slots.
//!
//! Protocol. The collectives of the communicator that use the area take consecutive turns
//! s = 1, 2, ... (the same on every rank: all call them in the same order) and turn s uses
//! slots of parity s % 2. A rank publishes turn s by storing s into its slot (release) after
//! writing any payload; readers wait for a value >= s (acquire) and then read the payload.
//! A rank arriving at turn s has returned from turn s-1 and hence has finished reading
//! everything of turn s-2, the last one to use parity s % 2; so before writing a payload at
//! turn s a rank waits until every rank has published turn s-1 (`Turn::contribute`). Nobody
//! can thus be two turns ahead of a reader of its payload, and sequence numbers only grow,
//! so ">= s" is a sound test.

use std::fmt;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use super::segment::{Segment, HEADER_BYTES};
use crate::datatype::Buf;

/// Payload bytes that fit in a slot's first line, after its sequence number.
pub const INLINE: usize = 56;
/// Most ranks an area serves (polling every other rank's line stops paying beyond that).
pub const MAX_RANKS: u32 = 64;

const LINE: usize = 64;
const SLOT_ALIGN: usize = 128;
/// Offsets inside a slot.
const INLINE_AT: usize = 8;
const REGION_AT: usize = LINE;

/// One communicator's slots, mapped into this process.
pub struct CollArea {
    segment: Segment,
    size: u32,
    rank: u32,
    payload_max: usize,
    stride: usize,
    /// The turn the next collective takes (process-local, like everything below).
    next: AtomicU64,
    /// Every rank is known to have published at least this turn.
    all_arrived: AtomicU64,
}

impl fmt::Debug for CollArea {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CollArea")
            .field("size", &self.size)
            .field("payload_max", &self.payload_max)
            .finish()
    }
}

/// Bytes between consecutive slots for payloads of up to `payload_max` bytes.
fn stride(payload_max: usize) -> usize {
    let region = if payload_max > INLINE {
        payload_max.next_multiple_of(LINE)
    } else {
        0
    };
    (LINE + region).next_multiple_of(SLOT_ALIGN)
}

impl CollArea {
    /// Segment bytes for `size` ranks and payloads of up to `payload_max` bytes.
    fn bytes(size: u32, payload_max: usize) -> usize {
        HEADER_BYTES + 2 * size as usize * stride(payload_max)
    }

    /// Create the fresh area `name` for `size` ranks (this process is rank 0); the others
    /// `attach` it.
    pub fn create(name: &str, size: u32, payload_max: usize) -> io::Result<CollArea> {
        let segment = Segment::create(name, CollArea::bytes(size, payload_max), size)?;
        Ok(CollArea::new(segment, size, 0, payload_max))
    }

    /// Attach the area `name` that rank 0 created, as `rank`.
    pub fn attach(name: &str, size: u32, rank: u32, payload_max: usize) -> io::Result<CollArea> {
        let segment = Segment::attach(name, CollArea::bytes(size, payload_max), size)?;
        Ok(CollArea::new(segment, size, rank, payload_max))
    }

    fn new(segment: Segment, size: u32, rank: u32, payload_max: usize) -> CollArea {
        assert!((1..=MAX_RANKS).contains(&size) && rank < size);
        CollArea {
            segment,
            size,
            rank,
            payload_max,
            stride: stride(payload_max),
            // A fresh segment is zero-filled: every rank has "published turn 0".
            next: AtomicU64::new(1),
            all_arrived: AtomicU64::new(0),
        }
    }

    /// Remove the name if some rank has not attached (setup is being abandoned).
    pub fn release_name(&self) {
        self.segment.unlink_if_pending();
    }

    /// Largest payload one turn carries.
    pub fn payload_max(&self) -> usize {
        self.payload_max
    }

    /// Start the next collective on the area. Turns must be taken one at a time and in the
    /// same order on every rank (MPI's rule for collectives on one communicator).
    pub fn begin(&self) -> Turn<'_> {
        let seq = self.next.fetch_add(1, Ordering::Relaxed);
        Turn { area: self, seq }
    }

    fn slot(&self, rank: u32, parity: u64) -> *mut u8 {
        assert!(rank < self.size);
        let index = rank as usize * 2 + parity as usize;
        // In bounds: `bytes` counts 2 * size slots after the header.
        self.segment
            .base()
            .wrapping_add(HEADER_BYTES + index * self.stride)
    }

    fn seq(&self, rank: u32, parity: u64) -> &AtomicU64 {
        // SAFETY: a slot starts with an 8-byte sequence number, 128-byte aligned inside the
        // page-aligned mapping, which lives as long as `self`; it is only accessed atomically.
        unsafe { &*self.slot(rank, parity).cast::<AtomicU64>() }
    }

    /// Where a payload of `len` bytes lies in `rank`'s slot of `parity`.
    fn payload(&self, rank: u32, parity: u64, len: usize) -> *mut u8 {
        assert!(
            len <= self.payload_max,
            "payload larger than the area's slots"
        );
        let at = if len <= INLINE { INLINE_AT } else { REGION_AT };
        self.slot(rank, parity).wrapping_add(at)
    }

    /// Wait (calling `idle` between polls) until `rank` has published turn `seq` or later.
    fn wait_seq(&self, rank: u32, seq: u64, idle: &mut impl FnMut()) {
        let flag = self.seq(rank, seq % 2);
        while flag.load(Ordering::Acquire) < seq {
            idle();
        }
    }
}

/// One collective's turn on the area.
pub struct Turn<'a> {
    area: &'a CollArea,
    seq: u64,
}

impl Turn<'_> {
    fn parity(&self) -> u64 {
        self.seq % 2
    }

    /// Reading payloads is sound only during the current turn (see the module's protocol).
    fn assert_current(&self) {
        assert_eq!(
            self.area.next.load(Ordering::Relaxed),
            self.seq + 1,
            "a collective turn used after the next one began"
        );
    }

    /// Publish this rank's arrival, with no payload.
    pub fn arrive(&self) {
        let a = self.area;
        a.seq(a.rank, self.parity())
            .store(self.seq, Ordering::Release);
    }

    /// Publish `data` (at most `payload_max` bytes, any layout: it is packed) as this rank's
    /// payload, once no rank can still be reading the slot's previous payload.
    pub fn contribute(&self, data: &Buf, idle: &mut impl FnMut()) {
        self.assert_current();
        let a = self.area;
        let prev = self.seq - 1;
        if a.all_arrived.load(Ordering::Relaxed) < prev {
            for r in (0..a.size).filter(|&r| r != a.rank) {
                a.wait_seq(r, prev, idle);
            }
            a.all_arrived.fetch_max(prev, Ordering::Relaxed);
        }
        let len = data.len();
        let dst = a.payload(a.rank, self.parity(), len);
        // SAFETY: `dst..dst+len` lies inside this rank's own slot (`payload` checked `len`);
        // only this rank writes it, and every rank has published turn seq-1, so none is still
        // reading the payload of turn seq-2 (module doc); nobody reads this one before the
        // release store below.
        let out = unsafe { std::slice::from_raw_parts_mut(dst, len) };
        data.pack(0, out);
        self.arrive();
    }

    /// Wait until `rank` has published this turn.
    pub fn wait_for(&self, rank: u32, idle: &mut impl FnMut()) {
        self.area.wait_seq(rank, self.seq, idle);
    }

    /// Wait until every rank has published this turn (this rank must have published it).
    pub fn wait_all(&self, idle: &mut impl FnMut()) {
        let a = self.area;
        for r in (0..a.size).filter(|&r| r != a.rank) {
            a.wait_seq(r, self.seq, idle);
        }
        a.all_arrived.fetch_max(self.seq, Ordering::Relaxed);
    }

    /// Run `f` on the `len`-byte payload `rank` contributed in this turn (after `wait_for`
    /// or `wait_all`).
    pub fn read<R>(&self, rank: u32, len: usize, f: impl FnOnce(&[u8]) -> R) -> R {
        self.assert_current();
        let a = self.area;
        assert!(
            a.seq(rank, self.parity()).load(Ordering::Acquire) >= self.seq,
            "payload read before it was published"
        );
        let src = a.payload(rank, self.parity(), len);
        // SAFETY: inside `rank`'s slot (`payload` checked `len`). The acquire load above saw
        // this turn published, so the payload's bytes are visible; `rank` rewrites them only
        // after this rank publishes the next turn, which it cannot do while this turn is
        // current (checked above).
        let bytes = unsafe { std::slice::from_raw_parts(src, len) };
        f(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(what: &str) -> String {
        format!("/weft.test-coll-{}-{what}", std::process::id())
    }

    #[test]
    fn geometry_keeps_slots_apart() {
        assert_eq!(stride(8), 128);
        assert_eq!(stride(56), 128);
        assert_eq!(stride(57), 128);
        assert_eq!(stride(100), 256);
        assert_eq!(stride(2048), 2176);
        assert_eq!(CollArea::bytes(2, 2048), HEADER_BYTES + 4 * 2176);
    }

    #[test]
    fn two_ranks_exchange_inline_and_region_payloads() {
        let n = name("xchg");
        let a = CollArea::create(&n, 2, 1024).unwrap();
        let b = CollArea::attach(&n, 2, 1, 1024).unwrap();
        let mut idle = || std::thread::yield_now();
        for (round, len) in [8usize, 56, 57, 1024, 3].into_iter().enumerate() {
            let mut mine: Vec<u8> = (0..len).map(|i| (i + round) as u8).collect();
            let mut theirs: Vec<u8> = (0..len).map(|i| (i * 3 + round) as u8).collect();
            // SAFETY: the vectors outlive the turns that read them.
            let (ma, tb) = unsafe {
                (
                    Buf::new(mine.as_mut_ptr() as usize, len),
                    Buf::new(theirs.as_mut_ptr() as usize, len),
                )
            };
            let (ta, tb_turn) = (a.begin(), b.begin());
            ta.contribute(&ma, &mut idle);
            tb_turn.contribute(&tb, &mut idle);
            ta.wait_all(&mut idle);
            tb_turn.wait_all(&mut idle);
            assert_eq!(ta.read(1, len, |x| x.to_vec()), theirs);
            assert_eq!(tb_turn.read(0, len, |x| x.to_vec()), mine);
        }
        assert!(!std::path::Path::new(&format!("/dev/shm{n}")).exists());
    }

    #[test]
    fn attaching_with_other_settings_fails() {
        let n = name("mismatch");
        let a = CollArea::create(&n, 2, 1024).unwrap();
        assert!(CollArea::attach(&n, 2, 1, 4096).is_err());
        a.release_name();
        assert!(!std::path::Path::new(&format!("/dev/shm{n}")).exists());
    }
}
