//! The shared memory of one communicator's node-level collectives (the algorithms are in
//! `coll/shm.rs`). Each rank has, written only by itself, an arrival line, a ring of `TURNS`
//! slot lines and a ring of payload regions (`regions`).
//!
//! A slot line holds a sequence number, a length and up to `INLINE` payload bytes, so a small
//! contribution travels with its flag in one cache-line transfer; a larger payload goes to a
//! region of `payload_max` bytes. Every line and region is 128-byte aligned: the adjacent-line
//! prefetcher fetches 128-byte pairs, and a pair must not span two ranks' data.
//!
//! Protocol. The collectives of the communicator that use the area take consecutive turns
//! s = 1, 2, ... (the same on every rank: all call them in the same order). Entering turn s, a
//! rank stores s into its arrival line (release): it has returned from turn s-1, so it is done
//! reading everything of earlier turns. Turn s uses slot s % TURNS and, for a large payload,
//! region s % R (R regions); a payload is published by writing it and then storing s into
//! the slot's sequence number (release); readers wait for a value >= s (acquire) and then
//! read. Before writing a payload at turn s a rank waits until every rank has arrived at
//! s - TURNS + 1, or s - R + 1 for a region (`Turn::contribute`), so nobody still reads what
//! turn s - TURNS (s - R) left there; when it has to wait, it waits until they are at most
//! half a ring behind, so it reads their arrival lines once per half ring, not every turn.
//! Hence nobody overwrites a payload a reader has not finished with, and since sequence
//! numbers only grow, ">= s" is a sound test. With many turns in flight a broadcast root runs
//! ahead of slow readers instead of waiting for each of them every time, which matters most
//! when ranks share cores (measured at 4 ranks on 2 cores: 8-byte bcast 0.57 us with 8 turns,
//! 0.17 us with 32; 2 KiB: 0.99 us with 4 regions, 0.35 us with 16). A scan, where every rank
//! writes and waits, gets 64 turns (the slot lines cost 8 KiB per rank, touched as turns use
//! them). Regions are big, so their number follows from a memory budget.
//!
//! Memory. Slot lines and regions are laid out turn-major (turn 0 of every rank, then turn 1
//! of every rank, ...), after the header and the arrival lines. Pages are only allocated when
//! first touched, so a communicator that runs a few small collectives costs a few pages for
//! all its ranks together (at 8 ranks one page holds the header, the arrival lines and two
//! turns of every rank): its proportional set size per rank is a few KiB / ranks instead of a
//! page of slot lines per rank (`bench/comm_mem.py`).

use super::segment::{Segment, HEADER_BYTES};
use crate::datatype::Buf;
use crate::sync::atomic::{AtomicU64, Ordering};
use std::fmt;
use std::io;

/// Payload bytes that fit in a slot's first line, after its sequence number and length.
pub const INLINE: usize = 64 - INLINE_AT;
/// Most ranks an area serves (polling every other rank's line stops paying beyond that).
pub const MAX_RANKS: u32 = 64;
/// Slot lines per rank: how many turns a rank may be ahead of the slowest reader of its
/// small payloads. (Two in the loom model, so that a few turns wrap the ring.)
#[cfg(not(loom))]
const TURNS: u64 = 64;
#[cfg(loom)]
const TURNS: u64 = 2;
/// Bytes of payload regions per rank; their number follows from their size (16 of 4 KiB, the
/// default `WEFT_COLL_SHM_MAX`).
const REGION_BUDGET: usize = 64 * 1024;

const ALIGN: usize = 128;
/// The area's first line (after the segment's header) holds its `payload_max`, so ranks that
/// disagree on it fail to attach; the ranks' lines follow.
const LAYOUT_AT: usize = HEADER_BYTES;
const START: usize = LAYOUT_AT + ALIGN;
/// Where a slot line keeps the length of what its rank published in that turn, right after
/// the sequence number (loom's atomics are larger than 8 bytes): written before the sequence
/// number's release store and read after its acquire load, like the payload, so ranks can
/// compare what they passed (an erroneous program passes different counts) before moving
/// any data. It shares the first 64-byte line with the sequence number and the inline
/// payload, so a small turn still costs one cache-line transfer (in the line's second half it
/// cost a second one per turn).
const LEN_AT: usize = std::mem::size_of::<AtomicU64>().next_multiple_of(8);
/// Where the inline payload starts in a slot line (after the sequence number and length).
const INLINE_AT: usize = LEN_AT + 8;
/// The length word's top byte holds a mark (`Turn::contribute_marked`).
const MARK_SHIFT: u32 = 56;

/// Where an area's bytes are: the shared segment, or (the loom model) a heap block whose
/// atomics the model constructed.
enum Memory {
    Segment(Segment),
    #[cfg(all(test, loom))]
    Heap(std::sync::Arc<loom_tests::Block>),
}

impl Memory {
    #[inline]
    fn base(&self) -> *mut u8 {
        match self {
            Memory::Segment(segment) => segment.base(),
            #[cfg(all(test, loom))]
            Memory::Heap(block) => block.base,
        }
    }

    /// The loom model's record that `rank` writes (`write`) or reads its payload of `seq`.
    #[cfg(all(test, loom))]
    fn touch(&self, rank: u32, seq: u64, write: bool) {
        if let Memory::Heap(block) = self {
            block.touch(rank, seq, write);
        }
    }
}

/// One communicator's arrival lines and slots, mapped into this process.
pub struct CollArea {
    memory: Memory,
    size: u32,
    rank: u32,
    payload_max: usize,
    /// Bytes of one region.
    region: usize,
    /// Regions per rank.
    regions: u64,
    /// The turn the next collective takes (process-local, like everything below).
    next: AtomicU64,
    /// Every rank is known to have arrived at least at this turn.
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

/// Bytes of a region for payloads of up to `payload_max` bytes (none when all fit inline).
fn region_bytes(payload_max: usize) -> usize {
    if payload_max > INLINE {
        payload_max.next_multiple_of(ALIGN)
    } else {
        0
    }
}

/// Regions per rank: how many turns a rank may be ahead of the slowest reader of its large
/// payloads; as many as the budget holds, at least 2, at most `TURNS`.
fn regions(payload_max: usize) -> u64 {
    let fit = REGION_BUDGET / region_bytes(payload_max).max(1);
    fit.clamp(2, TURNS as usize) as u64
}

impl CollArea {
    /// Segment bytes for `size` ranks and payloads of up to `payload_max` bytes.
    fn bytes(size: u32, payload_max: usize) -> usize {
        let n = size as usize;
        START
            + n * ALIGN
            + n * TURNS as usize * ALIGN
            + n * regions(payload_max) as usize * region_bytes(payload_max)
    }

    /// Create the fresh area `name` for `size` ranks (this process is rank 0); the others
    /// `attach` it.
    pub fn create(name: &str, size: u32, payload_max: usize) -> io::Result<CollArea> {
        let segment = Segment::create(name, CollArea::bytes(size, payload_max), size)?;
        let area = CollArea::new(Memory::Segment(segment), size, 0, payload_max);
        // The attachers learn the name only after this (through a message), which orders it.
        area.layout().store(payload_max as u64, Ordering::Relaxed);
        Ok(area)
    }

    /// Attach the area `name` that rank 0 created, as `rank`.
    pub fn attach(name: &str, size: u32, rank: u32, payload_max: usize) -> io::Result<CollArea> {
        let segment = Segment::attach(name, CollArea::bytes(size, payload_max), size)?;
        let area = CollArea::new(Memory::Segment(segment), size, rank, payload_max);
        let theirs = area.layout().load(Ordering::Relaxed);
        if theirs != payload_max as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("collective area {name} is for payloads of {theirs} bytes, expected {payload_max}: ranks disagree on WEFT_COLL_SHM_MAX"),
            ));
        }
        Ok(area)
    }

    /// The word holding the creator's `payload_max`.
    fn layout(&self) -> &AtomicU64 {
        // The area's first line lies inside the mapping (`bytes` counts it), 128-byte aligned in
        // the page-aligned mapping, which lives as long as `self`.
        // SAFETY: it is only accessed atomically.
        unsafe { &*self.memory.base().add(LAYOUT_AT).cast::<AtomicU64>() }
    }

    fn new(memory: Memory, size: u32, rank: u32, payload_max: usize) -> CollArea {
        assert!((1..=MAX_RANKS).contains(&size) && rank < size);
        CollArea {
            memory,
            size,
            rank,
            payload_max,
            region: region_bytes(payload_max),
            regions: regions(payload_max),
            // A fresh segment is zero-filled: every rank has "arrived at turn 0".
            next: AtomicU64::new(1),
            all_arrived: AtomicU64::new(0),
        }
    }

    /// Remove the name if some rank has not attached (setup is being abandoned).
    pub fn release_name(&self) {
        match &self.memory {
            Memory::Segment(segment) => segment.unlink_if_pending(),
            #[cfg(all(test, loom))]
            Memory::Heap(_) => {}
        }
    }

    /// Largest payload one turn carries.
    pub fn payload_max(&self) -> usize {
        self.payload_max
    }

    /// Start the next collective on the area. Turns must be taken one at a time and in the
    /// same order on every rank (MPI's rule for collectives on one communicator).
    pub fn begin(&self) -> Turn<'_> {
        // One turn at a time: a plain increment, no read-modify-write instruction.
        let seq = self.next.load(Ordering::Relaxed);
        self.next.store(seq + 1, Ordering::Relaxed);
        Turn { area: self, seq }
    }

    /// Every rank is known to have arrived at turn `seq`.
    fn all_arrived_at(&self, seq: u64) {
        if self.all_arrived.load(Ordering::Relaxed) < seq {
            self.all_arrived.store(seq, Ordering::Relaxed);
        }
    }

    /// `rank`'s arrival line.
    #[inline]
    fn arrival(&self, rank: u32) -> &AtomicU64 {
        assert!(rank < self.size);
        let at = START + rank as usize * ALIGN;
        // Inside the mapping (`bytes` counts one line per rank after the header), 128-byte aligned
        // in the page-aligned mapping, which lives as long as `self`.
        // SAFETY: the line is only accessed atomically.
        unsafe { &*self.memory.base().add(at).cast::<AtomicU64>() }
    }

    /// `rank`'s slot line for turn `seq`.
    #[inline]
    fn slot(&self, rank: u32, seq: u64) -> *mut u8 {
        assert!(rank < self.size);
        let n = self.size as usize;
        // Turn-major: the ranks' lines of one turn are adjacent, so a communicator that takes
        // few turns touches few pages (memory per communicator, see the module doc).
        let index = (seq % TURNS) as usize * n + rank as usize;
        // In bounds: `bytes` counts TURNS lines per rank after the arrival lines.
        self.memory
            .base()
            .wrapping_add(START + n * ALIGN + index * ALIGN)
    }

    /// `rank`'s payload region for turn `seq` (turn-major, like the slots).
    #[inline]
    fn region(&self, rank: u32, seq: u64) -> *mut u8 {
        assert!(rank < self.size);
        let n = self.size as usize;
        let index = ((seq % self.regions) * self.size as u64 + rank as u64) as usize;
        let regions = START + n * ALIGN + n * TURNS as usize * ALIGN;
        // In bounds: `bytes` counts `regions` regions per rank after the slot lines.
        self.memory
            .base()
            .wrapping_add(regions + index * self.region)
    }

    /// The sequence number of `rank`'s slot for turn `seq`.
    #[inline]
    fn published(&self, rank: u32, seq: u64) -> &AtomicU64 {
        // A slot starts with an 8-byte sequence number, 128-byte aligned inside the mapping, which
        // lives as long as `self`.
        // SAFETY: it is only accessed atomically.
        unsafe { &*self.slot(rank, seq).cast::<AtomicU64>() }
    }

    /// Where a payload of `len` bytes of `rank` for turn `seq` lies.
    #[inline]
    fn payload(&self, rank: u32, seq: u64, len: usize) -> *mut u8 {
        assert!(
            len <= self.payload_max,
            "payload larger than the area's regions"
        );
        if len <= INLINE {
            self.slot(rank, seq).wrapping_add(INLINE_AT)
        } else {
            self.region(rank, seq)
        }
    }

    /// Wait (calling `idle` between polls) until `flag` reaches `seq`; returns its value.
    fn wait(flag: &AtomicU64, seq: u64, idle: &mut impl FnMut()) -> u64 {
        loop {
            let v = flag.load(Ordering::Acquire);
            if v >= seq {
                return v;
            }
            idle();
        }
    }

    /// Wait until every other rank has arrived at `seq`, and remember what was seen.
    fn wait_arrived(&self, seq: u64, idle: &mut impl FnMut()) {
        let mut seen = u64::MAX;
        for r in (0..self.size).filter(|&r| r != self.rank) {
            seen = seen.min(CollArea::wait(self.arrival(r), seq, idle));
        }
        self.all_arrived_at(seen);
    }
}

/// One collective's turn on the area.
pub struct Turn<'a> {
    area: &'a CollArea,
    seq: u64,
}

impl Turn<'_> {
    /// Reading payloads is sound only during the current turn (see the module's protocol).
    #[inline]
    fn assert_current(&self) {
        assert_eq!(
            self.area.next.load(Ordering::Relaxed),
            self.seq + 1,
            "a collective turn used after the next one began"
        );
    }

    /// Publish this rank's arrival at this turn.
    #[inline]
    pub fn arrive(&self) {
        let a = self.area;
        a.arrival(a.rank).store(self.seq, Ordering::Release);
    }

    /// Arrive and publish `data` (at most `payload_max` bytes, any layout: it is packed) as
    /// this rank's payload, once no rank can still be reading the slot's previous payload.
    pub fn contribute(&self, data: &Buf, idle: &mut impl FnMut()) {
        self.contribute_marked(data, 0, idle);
    }

    /// `contribute`, publishing `mark` with the length (what else the ranks must agree on,
    /// e.g. a reduction's op: `len_and_mark_of`).
    pub fn contribute_marked(&self, data: &Buf, mark: u8, idle: &mut impl FnMut()) {
        self.contribute_with(data.len(), mark, idle, |out| data.pack(0, out));
    }

    /// `contribute_marked` of a `len`-byte payload (at most `payload_max`) that `fill` writes
    /// into the slot: a payload assembled from several buffers without a copy in between.
    pub fn contribute_with(
        &self,
        len: usize,
        mark: u8,
        idle: &mut impl FnMut(),
        fill: impl FnOnce(&mut [u8]),
    ) {
        self.contribute_part(len, len, mark, idle, fill);
    }

    /// `contribute_with` of a `len`-byte part of a message of `whole` bytes, which the length
    /// word carries instead of `len` (a message streamed through several turns, one part per
    /// turn: `coll/shm_stream.rs`); readers `read` it with the same `len`.
    pub fn contribute_part(
        &self,
        whole: usize,
        len: usize,
        mark: u8,
        idle: &mut impl FnMut(),
        fill: impl FnOnce(&mut [u8]),
    ) {
        self.assert_current();
        self.arrive();
        let a = self.area;
        let ring = if len <= INLINE { TURNS } else { a.regions };
        self.make_room(ring, idle);
        self.write_len(whole, mark);
        let dst = a.payload(a.rank, self.seq, len);
        // `dst..dst+len` lies inside this rank's own slot line or region (`payload` checked `len`);
        // only this rank writes it, and every rank has arrived at turn seq-ring+1, so none still
        // reads what turn seq-ring left there (module doc).
        // SAFETY: nobody reads this payload before the release store below.
        let out = unsafe { std::slice::from_raw_parts_mut(dst, len) };
        #[cfg(all(test, loom))]
        a.memory.touch(a.rank, self.seq, true);
        fill(out);
        a.published(a.rank, self.seq)
            .store(self.seq, Ordering::Release);
    }

    /// Arrive and publish only a length (`contribute` without a payload: the data of this
    /// collective goes by point-to-point), once no rank can still be reading the slot.
    pub fn announce(&self, len: usize, idle: &mut impl FnMut()) {
        self.announce_marked(len, 0, idle);
    }

    /// `announce` with a mark, as `contribute_marked`.
    pub fn announce_marked(&self, len: usize, mark: u8, idle: &mut impl FnMut()) {
        self.assert_current();
        self.arrive();
        let a = self.area;
        self.make_room(TURNS, idle);
        self.write_len(len, mark);
        a.published(a.rank, self.seq)
            .store(self.seq, Ordering::Release);
    }

    /// Wait until this rank may rewrite its payload of a ring of `ring` turns: every rank
    /// has arrived at seq - ring + 1, so none still reads what turn seq - ring left there.
    /// When it has to wait, it waits for the others to be at most half a ring behind (but
    /// never for a turn later than seq - 1, which they reach without this rank), so the next
    /// turns find room without reading their arrival lines: a rank ahead of a slow reader
    /// meets it once every half ring instead of on every turn, and their lines stop
    /// bouncing between cores.
    fn make_room(&self, ring: u64, idle: &mut impl FnMut()) {
        let a = self.area;
        let reused = (self.seq + 1).saturating_sub(ring);
        if a.all_arrived.load(Ordering::Relaxed) < reused {
            let ahead = (self.seq + 1).saturating_sub((ring / 2).max(2));
            a.wait_arrived(ahead.max(reused), idle);
        }
    }

    /// The length word: the length, with the mark in its top byte.
    #[inline]
    fn write_len(&self, len: usize, mark: u8) {
        debug_assert!((len as u64) < 1 << MARK_SHIFT);
        let a = self.area;
        let at = a.slot(a.rank, self.seq).wrapping_add(LEN_AT).cast::<u64>();
        // Only this rank writes it; nobody reads the previous turn's value any more (the caller
        // waited as for a payload) and nobody reads this one before the release store of the
        // sequence number that follows.
        // SAFETY: in this rank's own slot line (LEN_AT + 8 <= INLINE_AT), 8-byte aligned.
        unsafe { at.write(len as u64 | u64::from(mark) << MARK_SHIFT) };
    }

    /// The length `rank` published in this turn (after `wait_for` or `wait_all`).
    #[inline]
    pub fn len_of(&self, rank: u32) -> usize {
        (self.len_word(rank) & ((1 << MARK_SHIFT) - 1)) as usize
    }

    /// The length and the mark (0 when it gave none) `rank` published in this turn.
    #[inline]
    pub fn len_and_mark_of(&self, rank: u32) -> (usize, u8) {
        let word = self.len_word(rank);
        (
            (word & ((1 << MARK_SHIFT) - 1)) as usize,
            (word >> MARK_SHIFT) as u8,
        )
    }

    #[inline]
    fn len_word(&self, rank: u32) -> u64 {
        self.assert_current();
        let a = self.area;
        assert!(
            a.published(rank, self.seq).load(Ordering::Acquire) >= self.seq,
            "length read before it was published"
        );
        let at = a.slot(rank, self.seq).wrapping_add(LEN_AT).cast::<u64>();
        // The acquire load above saw it published, so the value written before the release store is
        // visible, and `rank` rewrites it only after this rank arrives at a later turn (as for
        // `read`).
        // SAFETY: inside `rank`'s slot line, 8-byte aligned.
        unsafe { at.read() }
    }

    /// Wait until every rank has arrived at this turn (this rank must have arrived).
    pub fn wait_all_arrived(&self, idle: &mut impl FnMut()) {
        self.area.wait_arrived(self.seq, idle);
    }

    /// Wait until `rank` has published its payload of this turn.
    #[inline]
    pub fn wait_for(&self, rank: u32, idle: &mut impl FnMut()) {
        CollArea::wait(self.area.published(rank, self.seq), self.seq, idle);
    }

    /// Wait until every rank has published its payload of this turn (this rank included).
    pub fn wait_all(&self, idle: &mut impl FnMut()) {
        let a = self.area;
        for r in (0..a.size).filter(|&r| r != a.rank) {
            self.wait_for(r, idle);
        }
        // Publishing implies arriving.
        a.all_arrived_at(self.seq);
    }

    /// Run `f` on the `len`-byte payload `rank` published in this turn (after `wait_for` or
    /// `wait_all`).
    pub fn read<R>(&self, rank: u32, len: usize, f: impl FnOnce(&[u8]) -> R) -> R {
        self.assert_current();
        let a = self.area;
        assert!(
            a.published(rank, self.seq).load(Ordering::Acquire) >= self.seq,
            "payload read before it was published"
        );
        let src = a.payload(rank, self.seq, len);
        // The acquire load above saw this turn published, so the payload's bytes are visible;
        // `rank` rewrites them only after this rank arrives at a later turn, which it cannot do
        // while this turn is current (checked above).
        // SAFETY: inside `rank`'s slot (`payload` checked `len`).
        let bytes = unsafe { std::slice::from_raw_parts(src, len) };
        #[cfg(all(test, loom))]
        a.memory.touch(rank, self.seq, false);
        f(bytes)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn name(what: &str) -> String {
        format!("/weft.test-coll-{}-{what}", std::process::id())
    }

    #[test]
    fn geometry_keeps_ranks_apart() {
        // The inline payload shares the first 64-byte line with the sequence number and the
        // length: 48 bytes.
        assert_eq!(INLINE, 48);
        assert_eq!(region_bytes(INLINE), 0);
        assert_eq!(region_bytes(INLINE + 1), 128);
        assert_eq!(region_bytes(2048), 2048);
        assert_eq!(
            (
                regions(INLINE),
                regions(2048),
                regions(4096),
                regions(65536)
            ),
            (64, 32, 16, 2)
        );
        assert_eq!(
            CollArea::bytes(2, 4096),
            HEADER_BYTES + 128 + 2 * 128 + 2 * 64 * 128 + 2 * 16 * 4096
        );
    }

    #[test]
    fn two_ranks_exchange_inline_and_region_payloads_round_the_rings() {
        let n = name("xchg");
        let a = CollArea::create(&n, 2, 1024).unwrap();
        let b = CollArea::attach(&n, 2, 1, 1024).unwrap();
        let mut idle = || std::thread::yield_now();
        // More rounds than slots and regions: both rings wrap.
        for round in 0..100 {
            let len = [8usize, 56, 57, 1024, 3][round % 5];
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
    fn parts_of_a_streamed_message_carry_its_whole_length() {
        let n = name("parts");
        let a = CollArea::create(&n, 2, 1024).unwrap();
        let b = CollArea::attach(&n, 2, 1, 1024).unwrap();
        let mut idle = || std::thread::yield_now();
        // 40 parts: more than the regions (and the slots), so both rings wrap; the last part
        // is short enough to travel inline.
        let whole = 39 * 1024 + 40;
        let message: Vec<u8> = (0..whole).map(|i| (i * 7 % 251) as u8).collect();
        let mut got = Vec::new();
        for at in (0..whole).step_by(1024) {
            let len = 1024.min(whole - at);
            let (ta, tb) = (a.begin(), b.begin());
            ta.contribute_part(whole, len, 3, &mut idle, |out| {
                out.copy_from_slice(&message[at..at + len])
            });
            tb.arrive();
            tb.wait_for(0, &mut idle);
            assert_eq!(tb.len_and_mark_of(0), (whole, 3));
            tb.read(0, len, |part| got.extend_from_slice(part));
        }
        assert_eq!(got, message);
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

/// The loom model of the protocol (module docs): two ranks take four broadcast turns on an
/// area with two slots per rank (so the slots are reused). Every payload read is the one
/// written for that turn, and a loom-tracked cell per (rank, slot) checks that each write
/// happens after the reads of the slot's previous turn (the arrival wait) and before this
/// turn's reads (the publish store).
#[cfg(all(test, loom))]
pub(crate) mod loom_tests {
    use super::*;
    use loom::cell::UnsafeCell as Tracked;
    use std::alloc::{alloc_zeroed, dealloc, Layout};
    use std::sync::Arc;

    const SIZE: u32 = 2;
    const PAYLOAD_MAX: usize = 8;

    /// An area's bytes on the heap, with loom's atomics constructed where the protocol keeps
    /// them, and one tracked cell per (rank, slot).
    pub(crate) struct Block {
        pub(crate) base: *mut u8,
        layout: Layout,
        shadow: Vec<Tracked<()>>,
    }

    // SAFETY: shared memory by design; the protocol orders its accesses.
    unsafe impl Send for Block {}
    // SAFETY: as above.
    unsafe impl Sync for Block {}

    impl Block {
        fn new() -> Block {
            let layout =
                Layout::from_size_align(CollArea::bytes(SIZE, PAYLOAD_MAX), ALIGN).unwrap();
            // SAFETY: non-zero size; freed in drop.
            let base = unsafe { alloc_zeroed(layout) };
            let mut atomics = vec![LAYOUT_AT];
            let n = SIZE as usize;
            atomics.extend((0..n).map(|r| START + r * ALIGN));
            atomics.extend((0..n * TURNS as usize).map(|i| START + n * ALIGN + i * ALIGN));
            for at in atomics {
                // SAFETY: inside the block, 128-byte aligned.
                unsafe { base.add(at).cast::<AtomicU64>().write(AtomicU64::new(0)) };
            }
            let shadow = (0..n * TURNS as usize).map(|_| Tracked::new(())).collect();
            Block {
                base,
                layout,
                shadow,
            }
        }

        pub(crate) fn touch(&self, rank: u32, seq: u64, write: bool) {
            let cell = &self.shadow[rank as usize * TURNS as usize + (seq % TURNS) as usize];
            if write {
                cell.with_mut(|_| ());
            } else {
                cell.with(|_| ());
            }
        }
    }

    impl Drop for Block {
        fn drop(&mut self) {
            // SAFETY: allocated in `new` with this layout.
            unsafe { dealloc(self.base, self.layout) }
        }
    }

    /// Four broadcasts from rank 0: the root contributes its value each turn, the other
    /// rank arrives, waits for it and reads it (the pattern in which the root runs ahead and
    /// the arrival wait alone keeps it from overwriting a slot being read).
    fn rank_takes_turns(block: Arc<Block>, rank: u32) {
        let area = CollArea::new(Memory::Heap(block), SIZE, rank, PAYLOAD_MAX);
        let mut idle = loom::thread::yield_now;
        for turn in 1..=4u64 {
            let t = area.begin();
            if rank == 0 {
                let mut value = (turn * 10).to_le_bytes();
                // SAFETY: `value` outlives the call (contribute packs it at once).
                let data = unsafe { Buf::new(value.as_mut_ptr() as usize, 8) };
                t.contribute(&data, &mut idle);
            } else {
                t.arrive();
                t.wait_for(0, &mut idle);
                let got = t.read(0, 8, |b| u64::from_le_bytes(b.try_into().unwrap()));
                assert_eq!(got, turn * 10, "turn {turn}");
            }
        }
    }

    #[test]
    fn loom_broadcast_reuses_slots_safely() {
        crate::sync::loom_model(|| {
            let block = Arc::new(Block::new());
            let peer = {
                let block = block.clone();
                loom::thread::spawn(move || rank_takes_turns(block, 1))
            };
            rank_takes_turns(block, 0);
            peer.join().unwrap();
        });
    }
}
