//! A bounded multi-producer/single-consumer queue of cells in shared memory.
//!
//! Each cell carries a sequence number (the Vyukov bounded-queue scheme): cell i of a ring of
//! capacity C is free for the producer that claimed position p when its sequence equals p,
//! full (readable by the consumer at position p) when it equals p+1, and is handed back for
//! position p+C by the consumer. Producers claim positions with one CAS on the shared tail;
//! the consumer's position is private to it. Message bytes are written straight into the
//! cell by the producer and read straight out of it by the consumer: two copies in all.
//!
//! A cell stores its sequence minus its own index, so zero-filled memory (a fresh segment)
//! is an empty ring: nobody has to touch every cell, and every page of the segment, at
//! start-up.
//!
//! A cell is a 128-byte slot (the header, then a payload of up to `INLINE_MAX` bytes) plus a
//! bulk area of `cell_size` bytes for larger payloads. The slots lie side by side, so small
//! messages walk through 128-byte steps of one or two pages rather than one page per cell
//! (fewer TLB entries in flight, fewer first-touch page faults at start-up).

use std::sync::atomic::{AtomicU64, Ordering};

/// Fields every cell starts with. `seq` is the only one accessed concurrently.
#[repr(C)]
pub struct CellHeader {
    seq: AtomicU64,
    pub kind: u16,
    pub flags: u16,
    /// The sender's rank in the communicator.
    pub src: u32,
    pub context: u32,
    pub tag: i32,
    /// Payload bytes in this cell.
    pub len: u32,
    /// The sender's rank in the job (where replies go).
    pub origin: u32,
    /// An id the receiver echoes back (the sender's request) or looks up (its own).
    pub token: u64,
}

/// Bytes of a cell's slot in the slot array (a multiple of the cache line).
const SLOT_BYTES: usize = 128;

/// Where an inline payload starts inside a slot: right after the header, so a small
/// message's bytes share the header's cache line.
const INLINE_OFFSET: usize = std::mem::size_of::<CellHeader>();

/// The largest payload kept in the slot itself.
pub const INLINE_MAX: usize = SLOT_BYTES - INLINE_OFFSET;

/// Bytes of `cell_size` that a payload cannot use (the configuration's cell size counts
/// the header, as when header and payload shared one area).
pub const PAYLOAD_OFFSET: usize = INLINE_OFFSET;

/// The envelope of one cell, as plain values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Envelope {
    pub kind: u16,
    pub flags: u16,
    pub src: u32,
    pub context: u32,
    pub tag: i32,
    pub origin: u32,
    pub token: u64,
}

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

/// A view of one ring inside a mapped segment.
#[derive(Clone, Copy)]
pub struct Ring {
    header: *const RingHeader,
    slots: *mut u8,
    bulk: *mut u8,
    mask: u64,
    cell_size: usize,
}

// SAFETY: the ring lives in shared memory that outlives every view (the owning transport
// keeps the segment mapped); concurrent access goes through the sequence protocol.
unsafe impl Send for Ring {}
// SAFETY: as above.
unsafe impl Sync for Ring {}

impl Ring {
    /// A view of the ring at `base`: zero-filled memory, or a ring used with the same geometry.
    ///
    /// # Safety
    /// `base` must point to `ring_bytes(cells, cell_size)` bytes aligned to 128 that stay
    /// mapped while the view is used, with `cells` a power of two and `cell_size` a multiple
    /// of 64 larger than the header.
    pub unsafe fn attach(base: *mut u8, cells: usize, cell_size: usize) -> Ring {
        debug_assert!(cells.is_power_of_two() && cell_size % 64 == 0 && cell_size > PAYLOAD_OFFSET);
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
        }
    }

    /// Payload bytes a cell can carry.
    pub fn payload_capacity(&self) -> usize {
        self.cell_size - PAYLOAD_OFFSET
    }

    fn cell(&self, pos: u64) -> *mut CellHeader {
        // SAFETY: the index is masked into the ring's slots.
        unsafe {
            self.slots
                .add((pos & self.mask) as usize * SLOT_BYTES)
                .cast()
        }
    }

    /// Where the `len`-byte payload of the cell of position `pos` (whose slot is `cell`)
    /// lies: inside the slot when it fits, else in the cell's bulk area.
    #[inline]
    fn payload(&self, pos: u64, cell: *mut CellHeader, len: usize) -> *mut u8 {
        // SAFETY: both places lie inside the ring: the slot has room for `INLINE_MAX` bytes
        // after the header, the bulk area of a masked index for `cell_size` bytes.
        unsafe {
            if len <= INLINE_MAX {
                cell.cast::<u8>().add(INLINE_OFFSET)
            } else {
                self.bulk.add((pos & self.mask) as usize * self.cell_size)
            }
        }
    }

    fn seq(&self, cell: *mut CellHeader) -> &AtomicU64 {
        // SAFETY: the cell lies in the mapping, which outlives the view; zero is a valid seq.
        unsafe { &(*cell).seq }
    }

    /// What a cell stores for sequence `seq` when it is the cell of position `pos`: the
    /// sequence minus the cell's index (`pos & mask`), i.e. relative to `pos`'s lap.
    fn stored(&self, pos: u64, seq_minus_pos: u64) -> u64 {
        (pos & !self.mask).wrapping_add(seq_minus_pos)
    }

    /// Claim a cell, let `fill` write `len` payload bytes into it, and publish it. Returns
    /// false (and does nothing) when the ring is full.
    pub fn try_push(&self, env: &Envelope, len: usize, fill: impl FnOnce(&mut [u8])) -> bool {
        assert!(len <= self.payload_capacity(), "payload larger than a cell");
        // SAFETY: the header is initialised shared memory.
        let tail = unsafe { &(*self.header).tail };
        let mut pos = tail.load(Ordering::Relaxed);
        let cell = loop {
            let cell = self.cell(pos);
            let seq = self.seq(cell).load(Ordering::Acquire);
            let diff = seq.wrapping_sub(self.stored(pos, 0)) as i64;
            if diff == 0 {
                match tail.compare_exchange_weak(pos, pos + 1, Ordering::Relaxed, Ordering::Relaxed)
                {
                    Ok(_) => break cell,
                    Err(now) => pos = now,
                }
            } else if diff < 0 {
                return false;
            } else {
                pos = tail.load(Ordering::Relaxed);
            }
        };
        // SAFETY: this producer owns the cell from the successful CAS until it publishes the
        // new sequence; nobody else reads or writes it meanwhile.
        unsafe {
            (*cell).kind = env.kind;
            (*cell).flags = env.flags;
            (*cell).src = env.src;
            (*cell).context = env.context;
            (*cell).tag = env.tag;
            (*cell).len = len as u32;
            (*cell).origin = env.origin;
            (*cell).token = env.token;
            let payload = std::slice::from_raw_parts_mut(self.payload(pos, cell, len), len);
            fill(payload);
        }
        self.seq(cell).store(self.stored(pos, 1), Ordering::Release);
        true
    }

    /// If the cell at the consumer's position `*head` is full, hand its envelope and payload
    /// to `consume`, release the cell and advance `*head`. Only the ring's single consumer
    /// may call this. Returns whether a cell was consumed.
    pub fn try_pop(&self, head: &mut u64, consume: impl FnOnce(&Envelope, &[u8])) -> bool {
        let pos = *head;
        let cell = self.cell(pos);
        if self.seq(cell).load(Ordering::Acquire) != self.stored(pos, 1) {
            return false;
        }
        // SAFETY: the producer published this cell (acquire above) and will not touch it again
        // until the consumer hands it back below.
        unsafe {
            let env = Envelope {
                kind: (*cell).kind,
                flags: (*cell).flags,
                src: (*cell).src,
                context: (*cell).context,
                tag: (*cell).tag,
                origin: (*cell).origin,
                token: (*cell).token,
            };
            let len = ((*cell).len as usize).min(self.payload_capacity());
            let payload = std::slice::from_raw_parts(self.payload(pos, cell, len), len);
            consume(&env, payload);
        }
        self.seq(cell)
            .store(self.stored(pos, self.mask + 1), Ordering::Release);
        *head = pos + 1;
        true
    }

    /// Whether the consumer at `head` would find a message (a cheap poll).
    pub fn has_message(&self, head: u64) -> bool {
        self.seq(self.cell(head)).load(Ordering::Acquire) == self.stored(head, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::{alloc_zeroed, dealloc, Layout};

    struct Mem(*mut u8, Layout);
    impl Drop for Mem {
        fn drop(&mut self) {
            // SAFETY: allocated in `ring` with this layout.
            unsafe { dealloc(self.0, self.1) }
        }
    }

    fn ring(cells: usize, cell_size: usize) -> (Mem, Ring) {
        let layout = Layout::from_size_align(ring_bytes(cells, cell_size), 128).unwrap();
        // SAFETY: non-zero size; freed by Mem.
        let base = unsafe { alloc_zeroed(layout) };
        // SAFETY: fresh zero-filled memory of the right size and alignment.
        let ring = unsafe { Ring::attach(base, cells, cell_size) };
        (Mem(base, layout), ring)
    }

    #[test]
    fn fifo_and_full_and_wraparound() {
        let (_mem, ring) = ring(4, 128);
        let mut head = 0;
        for round in 0..3u32 {
            for i in 0..4u32 {
                let env = Envelope {
                    tag: (round * 10 + i) as i32,
                    ..Default::default()
                };
                assert!(ring.try_push(&env, 4, |p| p.copy_from_slice(&i.to_le_bytes())));
            }
            assert!(!ring.try_push(&Envelope::default(), 0, |_| {}), "full");
            for i in 0..4u32 {
                let mut got = None;
                assert!(ring.try_pop(&mut head, |env, p| got = Some((env.tag, p.to_vec()))));
                assert_eq!(
                    got,
                    Some(((round * 10 + i) as i32, i.to_le_bytes().to_vec()))
                );
            }
            assert!(!ring.try_pop(&mut head, |_, _| panic!("empty")));
        }
    }

    #[test]
    fn inline_and_bulk_payloads_round_trip_over_laps() {
        let (_mem, ring) = ring(4, 256);
        let cap = ring.payload_capacity();
        let lens = [0, 1, INLINE_MAX - 1, INLINE_MAX, INLINE_MAX + 1, cap];
        let mut head = 0;
        for round in 0..3 {
            for (i, &len) in lens.iter().enumerate() {
                let byte = (round * 16 + i) as u8;
                let env = Envelope {
                    tag: len as i32,
                    ..Default::default()
                };
                assert!(ring.try_push(&env, len, |p| p.fill(byte)));
                let mut got = None;
                assert!(ring.try_pop(&mut head, |env, p| got = Some((env.tag, p.to_vec()))));
                assert_eq!(got, Some((len as i32, vec![byte; len])), "len {len}");
            }
        }
        // A bulk payload does not disturb the inline bytes of the neighbouring slots.
        assert!(ring.try_push(&Envelope::default(), 4, |p| p.fill(1)));
        assert!(ring.try_push(&Envelope::default(), cap, |p| p.fill(2)));
        assert!(ring.try_push(&Envelope::default(), INLINE_MAX, |p| p.fill(3)));
        for want in [vec![1; 4], vec![2; cap], vec![3; INLINE_MAX]] {
            let mut got = Vec::new();
            assert!(ring.try_pop(&mut head, |_, p| got = p.to_vec()));
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
                        let env = Envelope {
                            src: p,
                            token: i as u64,
                            ..Default::default()
                        };
                        while !ring.try_push(&env, 0, |_| {}) {
                            std::hint::spin_loop();
                        }
                    }
                })
            })
            .collect();
        let mut next = [0u64; 3];
        let mut head = 0;
        let mut seen = 0;
        while seen < 3 * PER {
            if ring.try_pop(&mut head, |env, _| {
                assert_eq!(env.token, next[env.src as usize], "per-producer order");
                next[env.src as usize] += 1;
            }) {
                seen += 1;
            }
        }
        producers.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(next, [PER as u64; 3]);
    }
}
