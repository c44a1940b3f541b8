//! The shared segment of one RMA window: the synchronisation state every process of the
//! window reaches with CPU atomics (each rank's lock word, its accumulate mutex and its
//! post/complete counters) and, for windows whose memory the library allocates
//! (`MPI_Win_allocate`, `MPI_Win_allocate_shared`), every rank's memory, so that a put or a
//! get is a copy between mapped addresses and needs nothing from the target.
//!
//! Layout after the segment header: one cache line per rank (`RankCtl`), then an `n x n`
//! matrix of post counters (`post[target][origin]`), then each rank's notification counters
//! and memory-handle slots (`RankExtra`, seed 004's extensions), then each rank's table of
//! regions attached to a dynamic window (`RankAttach`), then the ranks' memory from a page
//! boundary: back to back (contiguous, the default of `MPI_Win_allocate_shared`) or each from
//! its own page (`alloc_shared_noncontig`, and `MPI_Win_allocate`).

use crate::sync::atomic::AtomicU64;
use std::io;

use super::segment::{Segment, HEADER_BYTES};

const PAGE: usize = 4096;

/// One rank's synchronisation state.
#[repr(C, align(64))]
pub struct RankCtl {
    /// The passive-target lock: `WRITER` for an exclusive holder, else the number of
    /// shared holders.
    pub lock: AtomicU64,
    /// The accumulate mutex (0 free, 1 held): accumulate-type operations on this rank's
    /// memory run under it, which makes them atomic with each other.
    pub acc: AtomicU64,
    /// `MPI_Win_complete` calls that reached this rank as target, ever.
    pub complete: AtomicU64,
}

/// Notification indices per rank (`MPIX_Put_notify` and friends).
pub const NOTIFY_SLOTS: usize = 16;
/// Memory-handle slots per rank (`MPIX_Memhandle_create` on a dynamic window).
pub const MEMHANDLE_SLOTS: usize = 48;

/// One rank's notification counters and memory-handle slots.
#[repr(C, align(64))]
pub struct RankExtra {
    /// Notifications received on each index, ever.
    pub notify: [AtomicU64; NOTIFY_SLOTS],
    /// Each memory-handle slot's state: `generation << 1 | live`. A handle names a slot and a
    /// generation; releasing it clears `live` and the next registration advances the
    /// generation, so a released handle never matches again.
    pub memhandle: [AtomicU64; MEMHANDLE_SLOTS],
}

/// Where one memory-handle slot lies in a window segment (`WinArea::memhandle_at`).
#[derive(Clone, Copy, Debug)]
pub struct MemhandleAt(usize);

/// Regions of a dynamic window one rank publishes to the others (`rma::attach_table`): a
/// region attached while all are taken is not published and is reached by cross-memory
/// attach. The table's pages are touched only as far as slots are used.
pub const ATTACH_SLOTS: usize = 1024;
/// Words per published region: base, size, shareable block's descriptor + 1 (0: none), the
/// region's offset in that block, the block's inode, the generation of its UCX key (0: none;
/// windows spanning nodes, see `far_key`).
pub const ATTACH_ENTRY: usize = 6;
/// Words of one published region's UCX key (windows spanning nodes): the generation, the
/// packed key's length in bytes, then its bytes (a longer key is not published).
pub const FAR_KEY_WORDS: usize = 64;
/// Words before the entries: the number of regions attached, the number of slots in use
/// (the last used one + 1).
pub const ATTACH_HEAD: usize = 2;
/// Words of a published table: the head, then the entries.
pub const ATTACH_WORDS: usize = ATTACH_HEAD + ATTACH_SLOTS * ATTACH_ENTRY;

/// The regions one rank attached to a dynamic window, as a sequence lock: `seq` is odd while
/// the rank rewrites `words` (see `rma::attach_table` for the protocol).
#[repr(C, align(64))]
pub struct RankAttach {
    pub seq: AtomicU64,
    pub words: [AtomicU64; ATTACH_WORDS],
}

/// The exclusive holder's bit in `RankCtl::lock`.
pub const WRITER: u64 = 1 << 63;

/// Where the parts of a window's segment lie.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WinLayout {
    ranks: usize,
    /// Offset of the first rank's UCX key slots (`far_key`), when the layout has them.
    keys: Option<usize>,
    /// Offset of each rank's memory (equal to the next one's when empty).
    data: Vec<usize>,
    len: usize,
}

impl WinLayout {
    /// The layout for `sizes.len()` ranks with `sizes[r]` bytes of memory each (all zero
    /// when the memory is not the library's); `own_pages` starts each rank's memory on a
    /// page of its own; `far_keys`: room for the UCX keys of every rank's attached regions
    /// (a dynamic window spanning nodes; untouched pages cost nothing).
    pub fn new(sizes: &[u64], own_pages: bool, far_keys: bool) -> io::Result<WinLayout> {
        let n = sizes.len();
        let mut ctl = Self::attach_at(n) + n * std::mem::size_of::<RankAttach>();
        let keys = far_keys.then_some(ctl);
        if far_keys {
            ctl += n * ATTACH_SLOTS * FAR_KEY_WORDS * 8;
        }
        let too_big = || io::Error::new(io::ErrorKind::OutOfMemory, "window memory too large");
        let mut at = ctl.next_multiple_of(PAGE);
        let mut data = Vec::with_capacity(n);
        for &s in sizes {
            if own_pages {
                at = at.checked_next_multiple_of(PAGE).ok_or_else(too_big)?;
            }
            data.push(at);
            at = at
                .checked_add(usize::try_from(s).map_err(|_| too_big())?)
                .ok_or_else(too_big)?;
        }
        if at > isize::MAX as usize / 2 {
            return Err(too_big());
        }
        Ok(WinLayout {
            ranks: n,
            keys,
            data,
            len: at.max(HEADER_BYTES + 64),
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Offset of the first `RankExtra` for `n` ranks (after the post matrix, 64-aligned).
    fn extra_at(n: usize) -> usize {
        (HEADER_BYTES + n * std::mem::size_of::<RankCtl>() + n * n * 8).next_multiple_of(64)
    }

    /// Offset of the first `RankAttach` for `n` ranks (after the `RankExtra`s, 64-aligned).
    fn attach_at(n: usize) -> usize {
        Self::extra_at(n) + n * std::mem::size_of::<RankExtra>()
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A window's segment, mapped into this process.
pub struct WinArea {
    segment: Segment,
    layout: WinLayout,
}

impl std::fmt::Debug for WinArea {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WinArea")
            .field("ranks", &self.layout.ranks)
            .field("len", &self.layout.len)
            .finish()
    }
}

impl WinArea {
    /// Create the fresh (zero-filled) segment `name` that `participants` processes of the
    /// window map (all of its `layout.ranks`, or those on one node when the window spans
    /// nodes); the others `attach` it once told its name.
    pub fn create(name: &str, layout: WinLayout, participants: u32) -> io::Result<WinArea> {
        let segment = Segment::create(name, layout.len, participants)?;
        Ok(WinArea { segment, layout })
    }

    /// Attach the segment another process of the window created.
    pub fn attach(name: &str, layout: WinLayout, participants: u32) -> io::Result<WinArea> {
        let segment = Segment::attach(name, layout.len, participants)?;
        Ok(WinArea { segment, layout })
    }

    /// The segment's address and length in this process (to register it for other nodes).
    pub fn span(&self) -> (usize, usize) {
        (self.segment.base() as usize, self.layout.len)
    }

    /// Rank `r`'s synchronisation state.
    pub fn ctl(&self, r: u32) -> &RankCtl {
        assert!((r as usize) < self.layout.ranks, "rank out of range");
        // The layout's length covers them; HEADER_BYTES is a multiple of 64 and the mapping is page
        // aligned; they hold only atomics, which every process uses concurrently, and a zero-filled
        // line is a valid RankCtl.
        // SAFETY: the control lines lie after the header, inside the segment, 64-byte aligned.
        unsafe {
            &*self
                .segment
                .base()
                .add(HEADER_BYTES + r as usize * std::mem::size_of::<RankCtl>())
                .cast::<RankCtl>()
        }
    }

    /// How many times `target` posted an exposure epoch for `origin`, ever.
    pub fn post(&self, target: u32, origin: u32) -> &AtomicU64 {
        let n = self.layout.ranks;
        assert!(
            (target as usize) < n && (origin as usize) < n,
            "rank out of range"
        );
        let at = HEADER_BYTES
            + n * std::mem::size_of::<RankCtl>()
            + (target as usize * n + origin as usize) * 8;
        // Inside the counter matrix of the layout, 8-byte aligned.
        // SAFETY: only atomics live there and zero is a valid AtomicU64.
        unsafe { &*self.segment.base().add(at).cast::<AtomicU64>() }
    }

    /// Rank `r`'s notification counters and memory-handle slots.
    pub fn extra(&self, r: u32) -> &RankExtra {
        assert!((r as usize) < self.layout.ranks, "rank out of range");
        let at =
            WinLayout::extra_at(self.layout.ranks) + r as usize * std::mem::size_of::<RankExtra>();
        // Inside the layout (its length covers every rank's `RankExtra`), 64-byte aligned
        // (`extra_at` rounds up, the mapping is page aligned).
        // SAFETY: only atomics live there and zero-filled memory is a valid `RankExtra`.
        unsafe { &*self.segment.base().add(at).cast::<RankExtra>() }
    }

    /// Where rank `r`'s memory-handle slot `slot` lies in the segment: checked once when a
    /// memory-handle window is made, then read by `memhandle_state` on every operation.
    pub fn memhandle_at(&self, r: u32, slot: usize) -> MemhandleAt {
        assert!(slot < MEMHANDLE_SLOTS, "memory-handle slot out of range");
        let extra = self.extra(r) as *const RankExtra as usize - self.segment.base() as usize;
        MemhandleAt(extra + std::mem::offset_of!(RankExtra, memhandle) + slot * 8)
    }

    /// The state word of a memory-handle slot found by `memhandle_at`.
    #[inline]
    pub fn memhandle_state(&self, at: MemhandleAt) -> &AtomicU64 {
        // A place found in a segment of another layout could lie past this one's end.
        assert!(
            at.0 + 8 <= self.segment.len(),
            "memory-handle slot out of range"
        );
        // In bounds (above), 8-byte aligned (`RankExtra` is 64-aligned, its words 8 bytes).
        // SAFETY: only atomics live there and zero is a valid AtomicU64.
        unsafe { &*self.segment.base().add(at.0).cast::<AtomicU64>() }
    }

    /// The regions rank `r` attached to the window (dynamic windows).
    pub fn attached(&self, r: u32) -> &RankAttach {
        assert!((r as usize) < self.layout.ranks, "rank out of range");
        let at = WinLayout::attach_at(self.layout.ranks)
            + r as usize * std::mem::size_of::<RankAttach>();
        // Inside the layout (its length covers every rank's `RankAttach`), 64-byte aligned
        // (`extra_at` rounds up, `RankExtra` and `RankAttach` are multiples of 64 bytes, the
        // mapping is page aligned); only atomics live there.
        // SAFETY: in bounds and aligned (above); zero-filled memory is an empty `RankAttach`.
        unsafe { &*self.segment.base().add(at).cast::<RankAttach>() }
    }

    /// The UCX key slot of rank `r`'s attached region in slot `slot` (`FAR_KEY_WORDS` words),
    /// or `None` when the layout has no key slots.
    pub fn far_key(&self, r: u32, slot: usize) -> Option<&[AtomicU64; FAR_KEY_WORDS]> {
        assert!(
            (r as usize) < self.layout.ranks && slot < ATTACH_SLOTS,
            "key slot out of range"
        );
        let at = self.layout.keys? + (r as usize * ATTACH_SLOTS + slot) * FAR_KEY_WORDS * 8;
        // Inside the layout (`new` reserved every rank's slots), 8-byte aligned (the slots
        // follow the 64-byte aligned `RankAttach`es); only atomics live there.
        // SAFETY: in bounds and aligned (above); zero-filled words are an empty key slot.
        Some(unsafe {
            &*self
                .segment
                .base()
                .add(at)
                .cast::<[AtomicU64; FAR_KEY_WORDS]>()
        })
    }

    /// Where `word` (a word of this mapping) lies from the segment's start: the same place
    /// in every node's segment of the window (one layout everywhere).
    pub fn offset_of(&self, word: &AtomicU64) -> usize {
        let at = word as *const AtomicU64 as usize - self.segment.base() as usize;
        assert!(at + 8 <= self.layout.len, "word outside the segment");
        at
    }

    /// The address, in this process, of rank `r`'s memory (when the segment holds it).
    pub fn data_addr(&self, r: u32) -> usize {
        self.segment.base() as usize + self.layout.data[r as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn layout_places_memory_back_to_back_or_on_own_pages() {
        let l = WinLayout::new(&[10, 0, 30], false, false).unwrap();
        assert_eq!(l.data[0] % PAGE, 0);
        assert_eq!(l.data[1], l.data[0] + 10);
        assert_eq!(l.data[2], l.data[1]);
        assert_eq!(l.len, l.data[2] + 30);
        let p = WinLayout::new(&[10, 0, 30], true, false).unwrap();
        assert!(p.data.iter().all(|d| d % PAGE == 0));
        assert!(p.data[1] > p.data[0]);
        assert!(WinLayout::new(&[u64::MAX], false, false).is_err());
    }

    #[test]
    fn two_mappings_share_control_and_memory() {
        let name = format!("/weft.test-win-{}", std::process::id());
        let layout = WinLayout::new(&[8, 8], false, false).unwrap();
        let a = WinArea::create(&name, layout.clone(), 2).unwrap();
        let b = WinArea::attach(&name, layout, 2).unwrap();
        a.ctl(1).lock.fetch_add(1, Ordering::AcqRel);
        assert_eq!(b.ctl(1).lock.load(Ordering::Acquire), 1);
        b.post(0, 1).fetch_add(3, Ordering::AcqRel);
        a.extra(1).notify[5].fetch_add(2, Ordering::AcqRel);
        assert_eq!(b.extra(1).notify[5].load(Ordering::Acquire), 2);
        assert_eq!(b.extra(0).notify[5].load(Ordering::Acquire), 0);
        a.attached(1).words[ATTACH_WORDS - 1].store(9, Ordering::Release);
        assert_eq!(
            b.attached(1).words[ATTACH_WORDS - 1].load(Ordering::Acquire),
            9
        );
        assert_eq!(b.attached(0).seq.load(Ordering::Acquire), 0);
        assert_eq!(a.post(0, 1).load(Ordering::Acquire), 3);
        assert_eq!(a.post(1, 0).load(Ordering::Acquire), 0);
        // SAFETY: rank 1's 8 bytes, inside both mappings.
        unsafe {
            *(a.data_addr(1) as *mut u64) = 77;
            assert_eq!(*(b.data_addr(1) as *const u64), 77);
        }
    }

    #[test]
    fn far_key_slots_lie_between_the_attach_tables_and_the_memory() {
        let plain = WinLayout::new(&[8, 8], true, false).unwrap();
        let keyed = WinLayout::new(&[8, 8], true, true).unwrap();
        assert!(keyed.data[0] >= plain.data[0] + 2 * ATTACH_SLOTS * FAR_KEY_WORDS * 8);
        let name = format!("/weft.test-winkeys-{}", std::process::id());
        let a = WinArea::create(&name, keyed.clone(), 2).unwrap();
        let b = WinArea::attach(&name, keyed, 2).unwrap();
        let last = a.far_key(1, ATTACH_SLOTS - 1).unwrap();
        last[FAR_KEY_WORDS - 1].store(5, Ordering::Release);
        let seen = b.far_key(1, ATTACH_SLOTS - 1).unwrap();
        assert_eq!(seen[FAR_KEY_WORDS - 1].load(Ordering::Acquire), 5);
        assert!(a.offset_of(&last[FAR_KEY_WORDS - 1]) + 8 <= a.layout.data[0]);
        assert!(
            a.offset_of(&a.attached(1).words[ATTACH_WORDS - 1])
                < a.offset_of(&a.far_key(0, 0).unwrap()[0])
        );
        assert_eq!(b.offset_of(&seen[0]), a.offset_of(&last[0]));
        let c = WinArea::create(&format!("{name}-plain"), plain, 1).unwrap();
        assert!(c.far_key(0, 0).is_none());
    }
}
