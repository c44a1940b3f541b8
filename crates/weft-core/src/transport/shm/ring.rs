//! A bounded multi-producer/single-consumer queue of cells in shared memory.
//!
//! Each cell carries a sequence number (the Vyukov bounded-queue scheme): cell i of a ring of
//! capacity C is free for the producer that claimed position p when its sequence equals p,
//! full (readable by the consumer at position p) when it equals p+1, and is handed back for
//! position p+C by the consumer. Producers claim positions with one CAS on the shared tail;
//! a ring known to have a single producer (`pair`) may claim with a plain store instead
//! (`try_push_single`). The consumer's position is private to it. Message bytes are written straight into the
//! cell by the producer and read straight out of it by the consumer: two copies in all.
//!
//! A cell stores its sequence minus its own index, so zero-filled memory (a fresh segment)
//! is an empty ring: nobody has to touch every cell, and every page of the segment, at
//! start-up.
//!
//! A cell is a 128-byte slot (the sequence, the payload's length, `WIRE_HEADER_BYTES` of header,
//! then a payload of up to `INLINE_MAX` bytes) plus a bulk area of `cell_size` bytes for
//! larger payloads. The slots lie side by side, so small messages walk through 128-byte steps
//! of one or two pages rather than one page per cell (fewer TLB entries in flight, fewer
//! first-touch page faults at start-up). What the header's bytes mean is the ring user's
//! business (the point-to-point protocol's wire header): the ring only copies them.
//!
//! Roles are types: `Ring` is a view any number of producers share (`try_push`); the one
//! consumer owns a `Consumer` (its position), which is neither `Sync` nor `Clone`, so
//! `try_pop` cannot run from two threads on one position. A view borrows the mapping it
//! lies in (`'m`), so it cannot outlive it.
//!
//! Why it is correct (the sequence protocol, per cell, positions p of one lap):
//! - Claim: a producer reads seq(p) with acquire; only when it equals p (the cell was handed
//!   back for this lap) does it try CAS(tail, p, p+1). The CAS succeeds for exactly one
//!   producer per position, so a cell has at most one writer per lap.
//! - Publish: the producer writes header and payload, then stores seq = p+1 with release.
//!   The consumer reads seq with acquire and reads the cell only when it equals p+1, so it
//!   sees every byte the producer wrote (release/acquire on the same location).
//! - Hand back: after reading, the consumer stores seq = p+C with release; the producer of
//!   position p+C reads it with acquire before writing, so the consumer's reads happen before
//!   the next lap's writes.
//! - Full: seq(p) < p means the consumer has not handed the cell back from the previous lap;
//!   the producer reports full without claiming. seq(p) > p means another producer claimed p
//!   meanwhile; it reloads the tail.
//! The loom models (`tests::loom_*`, run with `RUSTFLAGS="--cfg loom"`) check these claims
//! over every interleaving of two producers and the consumer on a two-cell ring.

use std::marker::PhantomData;

use crate::sync::atomic::{AtomicU64, Ordering};

/// Bytes of the header a cell carries before its payload (the user's encoding).
pub const WIRE_HEADER_BYTES: usize = 28;

/// The start of every slot: the sequence (the only field accessed concurrently), the
/// payload's length, the user's header.
#[repr(C)]
struct Slot {
    seq: AtomicU64,
    len: u32,
    header: [u8; WIRE_HEADER_BYTES],
}

/// Bytes of a cell's slot in the slot array (a multiple of the cache line).
const SLOT_BYTES: usize = 128;

/// Where an inline payload starts inside a slot: right after the header, so a small
/// message's bytes share the header's cache line.
const INLINE_OFFSET: usize = std::mem::size_of::<Slot>();

/// The largest payload kept in the slot itself.
pub const INLINE_MAX: usize = SLOT_BYTES - INLINE_OFFSET;

/// Bytes of `cell_size` that a payload cannot use (the configuration's cell size counts the
/// slot's fixed part, as when header and payload shared one area).
pub const PAYLOAD_OFFSET: usize = INLINE_OFFSET;

/// The producer-shared tail, alone in its cache line(s) to avoid false sharing.
#[repr(C, align(128))]
struct RingHeader {
    tail: AtomicU64,
}

/// Bytes a ring of `cells` cells of `cell_size` bytes occupies: its header, the slot
/// array, the bulk areas.
pub fn ring_bytes(cells: usize, cell_size: usize) -> usize {
    std::mem::size_of::<RingHeader>() + cells * (SLOT_BYTES + cell_size)
}

/// Where one ring lies inside a mapping, without a lifetime (what the transport stores;
/// `view` makes a view that borrows the mapping).
#[derive(Clone, Copy)]
pub struct RingPlace {
    base: *mut u8,
    cells: usize,
    cell_size: usize,
}

// SAFETY: a place is an address and a geometry; using it takes `view`, which is unsafe.
unsafe impl Send for RingPlace {}
// SAFETY: as above.
unsafe impl Sync for RingPlace {}

impl RingPlace {
    /// The ring at `base`.
    ///
    /// # Safety
    /// `base` must point to `ring_bytes(cells, cell_size)` bytes aligned to 128 of zero-filled
    /// memory or of a ring used with the same geometry, with `cells` a power of two and
    /// `cell_size` a multiple of 64 larger than `PAYLOAD_OFFSET`.
    pub unsafe fn new(base: *mut u8, cells: usize, cell_size: usize) -> RingPlace {
        debug_assert!(cells.is_power_of_two() && cell_size.is_multiple_of(64));
        RingPlace {
            base,
            cells,
            cell_size,
        }
    }

    /// A view of the ring, borrowing the mapping for `'m`.
    ///
    /// # Safety
    /// The memory must stay mapped for `'m`.
    pub unsafe fn view<'m>(&self) -> Ring<'m> {
        // SAFETY: forwarded contract of `new` (the areas lie inside the ring's memory).
        unsafe { Ring::attach(self.base, self.cells, self.cell_size) }
    }
}

/// A producer's view of one ring inside a mapped segment (any number may share it).
#[derive(Clone, Copy)]
pub struct Ring<'m> {
    header: *const RingHeader,
    slots: *mut u8,
    bulk: *mut u8,
    mask: u64,
    cell_size: usize,
    _mapping: PhantomData<&'m [u8]>,
}

// SAFETY: the ring lives in shared memory that outlives the view ('m); concurrent access goes
// through the sequence protocol.
unsafe impl Send for Ring<'_> {}
// SAFETY: as above.
unsafe impl Sync for Ring<'_> {}

/// The one consumer's position in a ring. Not `Sync` (one thread pops at a time, with the
/// VCI's lock held) and not `Clone` (no second consumer of the same position).
pub struct Consumer {
    head: u64,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

impl Consumer {
    /// A consumer at position `head` (0 for a fresh ring; a position handed on otherwise).
    pub fn at(head: u64) -> Consumer {
        Consumer {
            head,
            _not_sync: PhantomData,
        }
    }

    /// The position, to hand on to a later consumer of the same ring.
    pub fn position(&self) -> u64 {
        self.head
    }
}

impl<'m> Ring<'m> {
    /// A view of the ring at `base`: zero-filled memory, or a ring used with the same geometry.
    ///
    /// # Safety
    /// As `RingPlace::new` and `RingPlace::view`.
    pub unsafe fn attach(base: *mut u8, cells: usize, cell_size: usize) -> Ring<'m> {
        debug_assert!(
            cells.is_power_of_two() && cell_size.is_multiple_of(64) && cell_size > PAYLOAD_OFFSET
        );
        // SAFETY: both areas lie inside the ring's memory per the contract.
        let (slots, bulk) = unsafe {
            let slots = base.add(std::mem::size_of::<RingHeader>());
            (slots, slots.add(cells * SLOT_BYTES))
        };
        Ring {
            header: base.cast(),
            slots,
            bulk,
            mask: cells as u64 - 1,
            cell_size,
            _mapping: PhantomData,
        }
    }

    /// Payload bytes a cell can carry.
    pub fn payload_capacity(&self) -> usize {
        self.cell_size - PAYLOAD_OFFSET
    }

    fn slot(&self, pos: u64) -> *mut Slot {
        // SAFETY: the index is masked into the ring's slots.
        unsafe {
            self.slots
                .add((pos & self.mask) as usize * SLOT_BYTES)
                .cast()
        }
    }

    /// Where the `len`-byte payload of the cell of position `pos` (whose slot is `slot`)
    /// lies: inside the slot when it fits, else in the cell's bulk area.
    #[inline]
    fn payload(&self, pos: u64, slot: *mut Slot, len: usize) -> *mut u8 {
        // The slot has room for `INLINE_MAX` bytes after the header, the bulk area of a masked
        // index for `cell_size` bytes.
        // SAFETY: both places lie inside the ring.
        unsafe {
            if len <= INLINE_MAX {
                slot.cast::<u8>().add(INLINE_OFFSET)
            } else {
                self.bulk.add((pos & self.mask) as usize * self.cell_size)
            }
        }
    }

    fn seq(&self, slot: *mut Slot) -> &AtomicU64 {
        // SAFETY: the slot lies in the mapping, which outlives the view; zero is a valid seq.
        unsafe { &(*slot).seq }
    }

    fn tail(&self) -> &AtomicU64 {
        // SAFETY: the header is initialised shared memory that outlives the view.
        unsafe { &(*self.header).tail }
    }

    /// What a cell stores for sequence `seq` when it is the cell of position `pos`: the
    /// sequence minus the cell's index (`pos & mask`), i.e. relative to `pos`'s lap.
    fn stored(&self, pos: u64, seq_minus_pos: u64) -> u64 {
        (pos & !self.mask).wrapping_add(seq_minus_pos)
    }

    /// Claim a cell, store `header` and the length `len`, let `fill` write the `len` payload
    /// bytes into the cell, and publish it. Returns false (and does nothing) when the ring
    /// is full.
    #[inline]
    pub fn try_push(
        &self,
        header: &[u8; WIRE_HEADER_BYTES],
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> bool {
        assert!(len <= self.payload_capacity(), "payload larger than a cell");
        let tail = self.tail();
        let mut pos = tail.load(Ordering::Relaxed);
        let slot = loop {
            let slot = self.slot(pos);
            let seq = self.seq(slot).load(Ordering::Acquire);
            let diff = seq.wrapping_sub(self.stored(pos, 0)) as i64;
            if diff == 0 {
                match tail.compare_exchange_weak(pos, pos + 1, Ordering::Relaxed, Ordering::Relaxed)
                {
                    Ok(_) => break slot,
                    Err(now) => pos = now,
                }
            } else if diff < 0 {
                return false;
            } else {
                pos = tail.load(Ordering::Relaxed);
            }
        };
        // This producer owns the cell from the successful CAS until it publishes the new sequence.
        // SAFETY: nobody else reads or writes it meanwhile (module docs, "Claim").
        unsafe { self.fill_and_publish(pos, slot, header, len, fill) };
        true
    }

    /// `try_push` for a ring with exactly one producer: the position is claimed with a plain
    /// store of the tail instead of a compare-exchange, so a push executes no atomic
    /// read-modify-write (no `lock` instruction). The consumer side is unchanged: it never
    /// reads the tail, only the cells' sequences, which are published as in `try_push`.
    ///
    /// # Safety
    /// No other producer pushes into this ring, ever (with either method): the ring must be
    /// one whose only producer is the caller's owner (`pair::PairRings`: the ring from one
    /// VCI of one process to one VCI of another, pushed only with that VCI's state in hand).
    #[inline]
    pub unsafe fn try_push_single(
        &self,
        header: &[u8; WIRE_HEADER_BYTES],
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> bool {
        assert!(len <= self.payload_capacity(), "payload larger than a cell");
        let tail = self.tail();
        let pos = tail.load(Ordering::Relaxed);
        let slot = self.slot(pos);
        let seq = self.seq(slot).load(Ordering::Acquire);
        if seq != self.stored(pos, 0) {
            // Not handed back from the previous lap yet: full. (No other producer can have
            // claimed it, so a sequence ahead of `pos` cannot occur.)
            return false;
        }
        tail.store(pos + 1, Ordering::Relaxed);
        // The one producer owns the cell from reading its handed-back sequence until it publishes
        // the new one.
        // SAFETY: the caller's contract: nobody else claims positions.
        unsafe { self.fill_and_publish(pos, slot, header, len, fill) };
        true
    }

    /// Write a claimed cell and publish it to the consumer.
    ///
    /// # Safety
    /// The caller owns the cell of `pos` (claimed it, and has not published it yet).
    #[inline]
    unsafe fn fill_and_publish(
        &self,
        pos: u64,
        slot: *mut Slot,
        header: &[u8; WIRE_HEADER_BYTES],
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) {
        // SAFETY: the caller owns the cell; its areas lie inside the ring.
        unsafe {
            std::ptr::addr_of_mut!((*slot).len).write(len as u32);
            std::ptr::addr_of_mut!((*slot).header).write(*header);
            let payload = std::slice::from_raw_parts_mut(self.payload(pos, slot, len), len);
            fill(payload);
        }
        self.seq(slot).store(self.stored(pos, 1), Ordering::Release);
    }

    /// If the cell at the consumer's position is full, hand its header and payload to
    /// `consume`, release the cell and advance the position. Returns whether a cell was
    /// consumed.
    #[inline]
    pub fn try_pop(
        &self,
        consumer: &mut Consumer,
        consume: impl FnOnce(&[u8; WIRE_HEADER_BYTES], &[u8]),
    ) -> bool {
        let pos = consumer.head;
        let slot = self.slot(pos);
        if self.seq(slot).load(Ordering::Acquire) != self.stored(pos, 1) {
            return false;
        }
        // The producer will not touch the cell again until the consumer hands it back below (module
        // docs, "Publish").
        // SAFETY: the producer published this cell (acquire above).
        unsafe {
            let header = std::ptr::addr_of!((*slot).header).read();
            let len =
                (std::ptr::addr_of!((*slot).len).read() as usize).min(self.payload_capacity());
            let payload = std::slice::from_raw_parts(self.payload(pos, slot, len), len);
            consume(&header, payload);
        }
        self.seq(slot)
            .store(self.stored(pos, self.mask + 1), Ordering::Release);
        consumer.head = pos + 1;
        true
    }

    /// Whether the consumer at `head` would find a message (a cheap poll of one cell).
    pub fn has_message(&self, head: u64) -> bool {
        self.seq(self.slot(head)).load(Ordering::Acquire) == self.stored(head, 1)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::alloc::{alloc_zeroed, dealloc, Layout};

    /// A header for tests: a tag, a source and a token.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Hdr {
        tag: i32,
        src: u32,
        token: u64,
    }

    impl Hdr {
        fn bytes(&self) -> [u8; WIRE_HEADER_BYTES] {
            let mut b = [0u8; WIRE_HEADER_BYTES];
            b[0..4].copy_from_slice(&self.tag.to_le_bytes());
            b[4..8].copy_from_slice(&self.src.to_le_bytes());
            b[8..16].copy_from_slice(&self.token.to_le_bytes());
            b
        }

        fn of(b: &[u8; WIRE_HEADER_BYTES]) -> Hdr {
            Hdr {
                tag: i32::from_le_bytes(b[0..4].try_into().unwrap()),
                src: u32::from_le_bytes(b[4..8].try_into().unwrap()),
                token: u64::from_le_bytes(b[8..16].try_into().unwrap()),
            }
        }
    }

    fn tag(tag: i32) -> [u8; WIRE_HEADER_BYTES] {
        Hdr {
            tag,
            ..Hdr::default()
        }
        .bytes()
    }

    const NONE: [u8; WIRE_HEADER_BYTES] = [0; WIRE_HEADER_BYTES];

    struct Mem(*mut u8, Layout);
    impl Drop for Mem {
        fn drop(&mut self) {
            // SAFETY: allocated in `ring` with this layout.
            unsafe { dealloc(self.0, self.1) }
        }
    }

    fn ring(cells: usize, cell_size: usize) -> (Mem, Ring<'static>) {
        let layout = Layout::from_size_align(ring_bytes(cells, cell_size), 128).unwrap();
        // SAFETY: non-zero size; freed by Mem (the tests drop the ring first).
        let base = unsafe { alloc_zeroed(layout) };
        // SAFETY: fresh zero-filled memory of the right size and alignment.
        let ring = unsafe { Ring::attach(base, cells, cell_size) };
        (Mem(base, layout), ring)
    }

    #[test]
    fn fifo_and_full_and_wraparound() {
        let (_mem, ring) = ring(4, 128);
        let mut consumer = Consumer::at(0);
        for round in 0..3u32 {
            for i in 0..4u32 {
                let h = tag((round * 10 + i) as i32);
                assert!(ring.try_push(&h, 4, |p| p.copy_from_slice(&i.to_le_bytes())));
            }
            assert!(!ring.try_push(&NONE, 0, |_| {}), "full");
            for i in 0..4u32 {
                let mut got = None;
                assert!(ring.try_pop(&mut consumer, |h, p| got =
                    Some((Hdr::of(h).tag, p.to_vec()))));
                assert_eq!(
                    got,
                    Some(((round * 10 + i) as i32, i.to_le_bytes().to_vec()))
                );
            }
            assert!(!ring.try_pop(&mut consumer, |_, _| panic!("empty")));
        }
        assert_eq!(consumer.position(), 12);
    }

    #[test]
    fn inline_and_bulk_payloads_round_trip_over_laps() {
        let (_mem, ring) = ring(4, 256);
        let cap = ring.payload_capacity();
        let inline = INLINE_MAX;
        let lens = [0, 1, inline - 1, inline, inline + 1, cap];
        let mut consumer = Consumer::at(0);
        for round in 0..3 {
            for (i, &len) in lens.iter().enumerate() {
                let byte = (round * 16 + i) as u8;
                assert!(ring.try_push(&tag(len as i32), len, |p| p.fill(byte)));
                let mut got = None;
                assert!(ring.try_pop(&mut consumer, |h, p| got =
                    Some((Hdr::of(h).tag, p.to_vec()))));
                assert_eq!(got, Some((len as i32, vec![byte; len])), "len {len}");
            }
        }
        // A bulk payload does not disturb the inline bytes of the neighbouring slots.
        assert!(ring.try_push(&NONE, 4, |p| p.fill(1)));
        assert!(ring.try_push(&NONE, cap, |p| p.fill(2)));
        assert!(ring.try_push(&NONE, inline, |p| p.fill(3)));
        for want in [vec![1; 4], vec![2; cap], vec![3; inline]] {
            let mut got = Vec::new();
            assert!(ring.try_pop(&mut consumer, |_, p| got = p.to_vec()));
            assert_eq!(got, want);
        }
    }

    #[test]
    fn many_producers_one_consumer_keep_per_producer_order() {
        let (_mem, ring) = ring(8, 128);
        const PER: u32 = 20_000;
        let producers: Vec<_> = (0..3u32)
            .map(|p| {
                std::thread::spawn(move || {
                    for i in 0..PER {
                        let h = Hdr {
                            src: p,
                            token: i as u64,
                            ..Hdr::default()
                        }
                        .bytes();
                        while !ring.try_push(&h, 0, |_| {}) {
                            std::hint::spin_loop();
                        }
                    }
                })
            })
            .collect();
        let mut next = [0u64; 3];
        let mut consumer = Consumer::at(0);
        let mut seen = 0;
        while seen < 3 * PER {
            if ring.try_pop(&mut consumer, |h, _| {
                let h = Hdr::of(h);
                assert_eq!(h.token, next[h.src as usize], "per-producer order");
                next[h.src as usize] += 1;
            }) {
                seen += 1;
            }
        }
        producers.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(next, [PER as u64; 3]);
    }
}

/// The loom models (module docs, "Why it is correct"): on a two-cell ring, two producers and
/// the consumer in every interleaving. Each message's bytes are checked, per-producer order
/// is checked, and a loom-tracked cell per slot checks that a producer's write of a cell
/// happens before the consumer's read of it (publish) and the consumer's read before the
/// next lap's write (hand back).
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::sync::atomic::AtomicU64;
    use loom::cell::UnsafeCell as Tracked;
    use loom::sync::Arc;
    use std::alloc::{alloc_zeroed, dealloc, Layout};

    const CELLS: usize = 2;
    const CELL_SIZE: usize = 128;

    /// Ring memory with loom's atomics constructed where the ring keeps its sequences.
    struct Model {
        base: *mut u8,
        layout: Layout,
        /// One tracked cell per slot.
        shadow: Vec<Tracked<()>>,
    }

    // SAFETY: the memory is shared by design (the ring protocol orders its accesses).
    unsafe impl Send for Model {}
    // SAFETY: as above.
    unsafe impl Sync for Model {}

    impl Model {
        fn new() -> Model {
            let layout = Layout::from_size_align(ring_bytes(CELLS, CELL_SIZE), 128).unwrap();
            // SAFETY: non-zero size; freed in drop.
            let base = unsafe { alloc_zeroed(layout) };
            // SAFETY: the tail and each slot's sequence lie inside the block, aligned.
            unsafe {
                base.cast::<AtomicU64>().write(AtomicU64::new(0));
                let slots = base.add(std::mem::size_of::<RingHeader>());
                for i in 0..CELLS {
                    slots
                        .add(i * SLOT_BYTES)
                        .cast::<AtomicU64>()
                        .write(AtomicU64::new(0));
                }
            }
            Model {
                base,
                layout,
                shadow: (0..CELLS).map(|_| Tracked::new(())).collect(),
            }
        }

        fn ring(&self) -> Ring<'_> {
            // SAFETY: the block is a ring of this geometry and outlives the view.
            unsafe { Ring::attach(self.base, CELLS, CELL_SIZE) }
        }

        /// The slot an inline payload at `p` lies in.
        fn slot_of(&self, p: *const u8) -> usize {
            let slots = self.base as usize + std::mem::size_of::<RingHeader>();
            (p as usize - slots) / SLOT_BYTES
        }
    }

    impl Drop for Model {
        fn drop(&mut self) {
            // SAFETY: allocated in `new` with this layout.
            unsafe { dealloc(self.base, self.layout) }
        }
    }

    /// Producer `p`'s message `seq`: its header and its four payload bytes.
    fn message(p: u8, seq: u8) -> ([u8; WIRE_HEADER_BYTES], u8) {
        let mut h = [0u8; WIRE_HEADER_BYTES];
        h[0] = p;
        h[1] = seq;
        (h, p * 16 + seq)
    }

    /// Two producers push two messages each into the two-cell ring (so it fills and wraps)
    /// while the consumer pops; every wait is a bounded loop (`sync::loom_model`): a producer
    /// that finds the ring full three times stops, the consumer gives up after a few empty
    /// polls, joins the producers and then drains the ring. Whatever was pushed arrives,
    /// once, in each producer's order, with its bytes.
    #[test]
    fn loom_two_producers_one_consumer() {
        crate::sync::loom_model(|| {
            let m = Arc::new(Model::new());
            const PER: u8 = 2;
            let producers: Vec<_> = (0..2u8)
                .map(|p| {
                    let m = m.clone();
                    loom::thread::spawn(move || {
                        let ring = m.ring();
                        for seq in 0..PER {
                            let (h, byte) = message(p, seq);
                            let fill = |cell: &mut [u8]| {
                                m.shadow[m.slot_of(cell.as_ptr())].with_mut(|_| ());
                                cell.fill(byte);
                            };
                            let mut tries = 0;
                            while !ring.try_push(&h, 4, fill) {
                                tries += 1;
                                if tries == 3 {
                                    return seq;
                                }
                                loom::thread::yield_now();
                            }
                        }
                        PER
                    })
                })
                .collect();
            let ring = m.ring();
            let mut consumer = Consumer::at(0);
            let mut next = [0u8; 2];
            let mut pop = |consumer: &mut Consumer| {
                ring.try_pop(consumer, |h, payload| {
                    m.shadow[m.slot_of(payload.as_ptr())].with(|_| ());
                    let (p, seq) = (h[0], h[1]);
                    assert_eq!(seq, next[p as usize], "per-producer order");
                    assert_eq!(payload, [message(p, seq).1; 4], "payload of {p}/{seq}");
                    next[p as usize] += 1;
                })
            };
            for _ in 0..4 {
                if !pop(&mut consumer) {
                    loom::thread::yield_now();
                }
            }
            let pushed: Vec<u8> = producers.into_iter().map(|t| t.join().unwrap()).collect();
            while pop(&mut consumer) {}
            assert_eq!(next.to_vec(), pushed, "every pushed message arrived once");
        });
    }

    /// The single-producer push (`try_push_single`, a plain store of the tail): one producer
    /// pushes three messages into the two-cell ring (so it fills and wraps) while the consumer
    /// pops, bounded as above. Whatever was pushed arrives once, in order, with its bytes, and
    /// loom's tracked cells see no write racing a read.
    #[test]
    fn loom_single_producer_plain_tail() {
        crate::sync::loom_model(|| {
            let m = Arc::new(Model::new());
            const N: u8 = 3;
            let producer = {
                let m = m.clone();
                loom::thread::spawn(move || {
                    let ring = m.ring();
                    for seq in 0..N {
                        let (h, byte) = message(0, seq);
                        let fill = |cell: &mut [u8]| {
                            m.shadow[m.slot_of(cell.as_ptr())].with_mut(|_| ());
                            cell.fill(byte);
                        };
                        let mut tries = 0;
                        // SAFETY: this thread is the ring's only producer.
                        while !unsafe { ring.try_push_single(&h, 4, fill) } {
                            tries += 1;
                            if tries == 3 {
                                return seq;
                            }
                            loom::thread::yield_now();
                        }
                    }
                    N
                })
            };
            let ring = m.ring();
            let mut consumer = Consumer::at(0);
            let mut next = 0u8;
            let mut pop = |consumer: &mut Consumer| {
                ring.try_pop(consumer, |h, payload| {
                    m.shadow[m.slot_of(payload.as_ptr())].with(|_| ());
                    assert_eq!(h[1], next, "order");
                    assert_eq!(payload, [message(0, next).1; 4], "payload of {next}");
                    next += 1;
                })
            };
            for _ in 0..4 {
                if !pop(&mut consumer) {
                    loom::thread::yield_now();
                }
            }
            let pushed = producer.join().unwrap();
            while pop(&mut consumer) {}
            assert_eq!(next, pushed, "every pushed message arrived once");
        });
    }
}
