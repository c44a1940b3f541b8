//! Validated handles. A user handle is a pointer-sized value that encodes its kind, a slot in
//! that kind's table and the slot's generation, so that a garbage, freed or wrong-kind handle
//! is recognised and rejected with the right error class instead of being dereferenced.
//!
//! Layout (64 bits): generation (24) | VCI (8) | kind (8) | slot (24). The generation starts at
//! 1, so every user handle is at least 2^40, far above the predefined values (< 0x1000). A
//! slot's generation advances when its object is removed; a slot whose generations are used
//! up is retired rather than wrapped, so a handle value never names two objects.
//!
//! Lookups take no global lock: tables are arrays of chunks that never move once allocated,
//! and each slot has its own reader-writer lock.

use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// Object kinds that have handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Comm = 1,
    Group = 2,
    Datatype = 3,
    Errhandler = 4,
    Info = 5,
    Op = 6,
    Request = 7,
    Session = 8,
    Win = 9,
    File = 10,
    Message = 11,
    Stream = 12,
    GrequestClass = 13,
    /// A request of `MPIX_Isend_enqueue`/`MPIX_Irecv_enqueue` (`api/enqueue.rs`).
    EnqueuedRequest = 14,
}

const SLOT_BITS: u32 = 24;
const KIND_SHIFT: u32 = 24;
const VCI_SHIFT: u32 = 32;
const GEN_SHIFT: u32 = 40;
const SLOT_MASK: usize = (1 << SLOT_BITS) - 1;
const GEN_MASK: u32 = (1 << 24) - 1;
/// Handles below this value are the standard's predefined ones.
pub const FIRST_USER_HANDLE: usize = 1 << GEN_SHIFT;

/// The decoded parts of a user handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoded {
    pub kind: u8,
    pub vci: u8,
    pub slot: u32,
    pub generation: u32,
}

pub fn encode(kind: Kind, vci: u8, slot: u32, generation: u32) -> usize {
    ((generation as usize) << GEN_SHIFT)
        | ((vci as usize) << VCI_SHIFT)
        | ((kind as usize) << KIND_SHIFT)
        | slot as usize
}

/// `kind` in the position a handle carries it.
#[inline]
pub fn kind_bits(kind: Kind) -> usize {
    (kind as usize) << KIND_SHIFT
}

/// Whether `handle` is a user handle of `kind` (what `decode` would accept for it).
#[inline]
pub fn is_user_handle_of(handle: usize, kind: Kind) -> bool {
    handle >= FIRST_USER_HANDLE && (handle >> KIND_SHIFT) as u8 == kind as u8
}

#[inline]
pub fn decode(handle: usize) -> Option<Decoded> {
    if handle < FIRST_USER_HANDLE {
        return None;
    }
    Some(Decoded {
        kind: (handle >> KIND_SHIFT) as u8,
        vci: (handle >> VCI_SHIFT) as u8,
        slot: (handle & SLOT_MASK) as u32,
        generation: (handle >> GEN_SHIFT) as u32 & GEN_MASK,
    })
}

/// Why a handle was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadHandle {
    /// Not a handle of this kind at all (garbage, or another kind's handle).
    Invalid,
    /// A handle of this kind whose object was freed.
    Freed,
}

impl BadHandle {
    pub fn describe(self) -> &'static str {
        match self {
            BadHandle::Invalid => "not a valid handle",
            BadHandle::Freed => "the object was already freed",
        }
    }
}

struct Slot<T> {
    generation: AtomicU32,
    value: RwLock<Option<Arc<T>>>,
    /// The object `value` holds, or null: read by `borrow` without taking the lock.
    raw: AtomicPtr<T>,
}

impl<T> Slot<T> {
    const fn vacant() -> Slot<T> {
        Slot {
            generation: AtomicU32::new(0),
            value: RwLock::new(None),
            raw: AtomicPtr::new(std::ptr::null_mut()),
        }
    }
}

/// Chunk k holds `FIRST_CHUNK << k` slots; 19 chunks cover the 24-bit slot space. The
/// slots of chunk 0 live in the table itself (`Table::first`): most programs never need
/// more, and a lookup there is one comparison and an index.
const FIRST_CHUNK: usize = 64;
const CHUNKS: usize = 19;

#[inline]
fn locate(slot: u32) -> (usize, usize) {
    let n = slot as usize / FIRST_CHUNK + 1;
    let chunk = (usize::BITS - 1 - n.leading_zeros()) as usize;
    let start = FIRST_CHUNK * ((1 << chunk) - 1);
    (chunk, slot as usize - start)
}

/// The objects of one kind, by slot.
pub struct Table<T> {
    kind: Kind,
    /// Chunk 0.
    first: [Slot<T>; FIRST_CHUNK],
    /// Chunks 1.. (index 0 stays empty).
    chunks: [OnceLock<Box<[Slot<T>]>>; CHUNKS],
    /// Slot allocation (object creation and freeing only, never lookups).
    free: Mutex<FreeList>,
}

struct FreeList {
    released: Vec<u32>,
    next: u32,
}

impl<T> Table<T> {
    pub const fn new(kind: Kind) -> Table<T> {
        Table {
            kind,
            first: [const { Slot::vacant() }; FIRST_CHUNK],
            chunks: [const { OnceLock::new() }; CHUNKS],
            free: Mutex::new(FreeList {
                released: Vec::new(),
                next: 0,
            }),
        }
    }

    #[inline(always)]
    fn slot(&self, slot: u32) -> Option<&Slot<T>> {
        if let Some(first) = self.first.get(slot as usize) {
            return Some(first);
        }
        let (chunk, offset) = locate(slot);
        self.chunks.get(chunk)?.get()?.get(offset)
    }

    fn slot_or_create(&self, slot: u32) -> &Slot<T> {
        if let Some(first) = self.first.get(slot as usize) {
            return first;
        }
        let (chunk, offset) = locate(slot);
        let slots = self.chunks[chunk]
            .get_or_init(|| (0..FIRST_CHUNK << chunk).map(|_| Slot::vacant()).collect());
        &slots[offset]
    }

    /// Store an object and return its new handle.
    pub fn insert(&self, value: Arc<T>) -> usize {
        self.insert_on_vci(value, 0)
    }

    /// Store an object owned by a VCI (requests) and return its handle.
    pub fn insert_on_vci(&self, value: Arc<T>, vci: u8) -> usize {
        let index = {
            let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
            match free.released.pop() {
                Some(index) => index,
                None => {
                    assert!(
                        (free.next as usize) < SLOT_MASK,
                        "handle table for {:?} is full",
                        self.kind
                    );
                    free.next += 1;
                    free.next - 1
                }
            }
        };
        let slot = self.slot_or_create(index);
        let mut guard = slot.value.write().unwrap_or_else(|p| p.into_inner());
        // A released slot's generation was advanced when it was released; a new one starts
        // at 1.
        let generation = slot.generation.load(Ordering::Relaxed).max(1);
        debug_assert!(generation <= GEN_MASK, "a retired slot is never reused");
        slot.generation.store(generation, Ordering::Release);
        slot.raw
            .store(Arc::as_ptr(&value).cast_mut(), Ordering::Release);
        *guard = Some(value);
        encode(self.kind, vci, index, generation)
    }

    /// Ends the current generation of slot `index` (its handles become stale) and gives the
    /// slot back for reuse, unless its generation would wrap: a slot whose 2^24 - 1
    /// generations are used up is retired for good (its generation is left at 2^24, which no
    /// handle carries), since starting over would make its oldest handles valid again. The
    /// caller holds the slot's write lock.
    fn release(&self, index: u32, slot: &Slot<T>) {
        let next = slot.generation.load(Ordering::Relaxed) + 1;
        slot.generation.store(next, Ordering::Release);
        if next <= GEN_MASK {
            self.free
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .released
                .push(index);
        }
    }

    /// The object a handle names.
    pub fn get(&self, handle: usize) -> Result<Arc<T>, BadHandle> {
        let d = decode(handle).ok_or(BadHandle::Invalid)?;
        if d.kind != self.kind as u8 {
            return Err(BadHandle::Invalid);
        }
        let slot = self.slot(d.slot).ok_or(BadHandle::Invalid)?;
        let guard = slot.value.read().unwrap_or_else(|p| p.into_inner());
        let current = slot.generation.load(Ordering::Acquire);
        match guard.as_ref() {
            Some(value) if current == d.generation => Ok(value.clone()),
            _ if current == 0 || d.generation == 0 || d.generation > current => {
                Err(BadHandle::Invalid)
            }
            _ => Err(BadHandle::Freed),
        }
    }

    /// The object a handle names, borrowed without a lock or a reference count (the send and
    /// receive paths). Errors are those of `get`.
    ///
    /// # Safety
    /// The object must not be removed from the table and dropped while the reference lives:
    /// the caller knows no other thread calls MPI at the same time (thread level below
    /// `MPI_THREAD_MULTIPLE`) and defers the drop of objects removed while it may hold one
    /// (see `objects::CommRef`).
    #[inline(always)]
    pub unsafe fn borrow(&self, handle: usize) -> Result<&T, BadHandle> {
        if let Some(d) = decode(handle) {
            if d.kind == self.kind as u8 {
                if let Some(slot) = self.slot(d.slot) {
                    let raw = slot.raw.load(Ordering::Acquire);
                    if !raw.is_null() && slot.generation.load(Ordering::Acquire) == d.generation {
                        // `raw` is the object an `Arc` in the slot keeps alive.
                        // SAFETY: by the caller's contract it is not dropped while borrowed.
                        return Ok(unsafe { &*raw });
                    }
                }
            }
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { self.borrow_locked(handle) }
    }

    /// `borrow` of a bad handle (or one filled since the quick check): the locked lookup
    /// decides. Kept out of line so that the quick check inlines into the hot paths.
    ///
    /// # Safety
    /// As for `borrow`.
    #[cold]
    #[inline(never)]
    unsafe fn borrow_locked(&self, handle: usize) -> Result<&T, BadHandle> {
        let value = self.get(handle)?;
        // The slot's `Arc` keeps the object alive.
        // SAFETY: by the caller's contract it is not dropped while borrowed.
        Ok(unsafe { &*Arc::as_ptr(&value) })
    }

    /// Remove the object a handle names; the handle (and copies of it) become invalid.
    pub fn remove(&self, handle: usize) -> Result<Arc<T>, BadHandle> {
        let d = decode(handle).ok_or(BadHandle::Invalid)?;
        if d.kind != self.kind as u8 {
            return Err(BadHandle::Invalid);
        }
        let slot = self.slot(d.slot).ok_or(BadHandle::Invalid)?;
        let mut guard = slot.value.write().unwrap_or_else(|p| p.into_inner());
        if slot.generation.load(Ordering::Acquire) != d.generation || guard.is_none() {
            return Err(BadHandle::Freed);
        }
        slot.raw.store(std::ptr::null_mut(), Ordering::Release);
        let value = guard.take().expect("checked above");
        self.release(d.slot, slot);
        Ok(value)
    }

    /// Whether `handle` is this table's handle of a live object (what
    /// `MPI_X_toint` may name).
    pub fn is_current(&self, handle: usize) -> bool {
        let Some(d) = decode(handle) else {
            return false;
        };
        d.kind == self.kind as u8
            && self.slot(d.slot).is_some_and(|slot| {
                let _guard = slot.value.read().unwrap_or_else(|p| p.into_inner());
                slot.generation.load(Ordering::Acquire) == d.generation
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_slots_without_gaps() {
        assert_eq!(locate(0), (0, 0));
        assert_eq!(locate(63), (0, 63));
        assert_eq!(locate(64), (1, 0));
        assert_eq!(locate(191), (1, 127));
        assert_eq!(locate(192), (2, 0));
        let (chunk, offset) = locate(SLOT_MASK as u32 - 1);
        assert!(chunk < CHUNKS && offset < FIRST_CHUNK << chunk);
    }

    #[test]
    fn insert_get_remove_and_reuse() {
        let table: Table<String> = Table::new(Kind::Info);
        let h = table.insert(Arc::new("a".into()));
        assert!(h >= FIRST_USER_HANDLE);
        assert_eq!(*table.get(h).unwrap(), "a");
        assert_eq!(table.remove(h).map(|v| (*v).clone()), Ok("a".to_string()));
        assert_eq!(table.get(h).err(), Some(BadHandle::Freed));
        assert_eq!(table.remove(h).err(), Some(BadHandle::Freed));
        let h2 = table.insert(Arc::new("b".into()));
        assert_ne!(h, h2, "a reused slot gets a new generation");
        assert_eq!(table.get(h).err(), Some(BadHandle::Freed));
        assert_eq!(*table.get(h2).unwrap(), "b");
    }

    #[test]
    fn garbage_and_wrong_kind_are_invalid() {
        let infos: Table<u8> = Table::new(Kind::Info);
        let comms: Table<u8> = Table::new(Kind::Comm);
        let h = infos.insert(Arc::new(1));
        assert_eq!(comms.get(h).err(), Some(BadHandle::Invalid));
        assert_eq!(infos.get(0x101).err(), Some(BadHandle::Invalid));
        assert_eq!(infos.get(usize::MAX).err(), Some(BadHandle::Invalid));
        assert_eq!(infos.get(0xdead_beef_0000).err(), Some(BadHandle::Invalid));
    }

    /// Test hook: make slot `index`'s next occupant get `generation`, as if the slot had
    /// been reused that many times.
    fn age_slot<T>(table: &Table<T>, index: u32, generation: u32) {
        table
            .slot_or_create(index)
            .generation
            .store(generation, Ordering::Release);
    }

    #[test]
    fn a_slot_is_retired_instead_of_wrapping_its_generation() {
        let table: Table<u32> = Table::new(Kind::Op);
        let first = table.insert(Arc::new(0));
        assert_eq!(decode(first).map(|d| (d.slot, d.generation)), Some((0, 1)));
        table.remove(first).unwrap();
        // Slot 0 has been reused until its next occupant takes the last generation.
        age_slot(&table, 0, GEN_MASK);
        let last = table.insert(Arc::new(1));
        assert_eq!(
            decode(last).map(|d| (d.slot, d.generation)),
            Some((0, GEN_MASK))
        );
        assert!(table.is_current(last));
        table.remove(last).unwrap();
        assert!(!table.is_current(last));
        assert_eq!(table.get(last).err(), Some(BadHandle::Freed));
        // Wrapping to generation 1 would hand out `first` again: the slot is retired.
        let next = table.insert(Arc::new(2));
        assert_ne!(next, first);
        assert_ne!(
            decode(next).map(|d| d.slot),
            Some(0),
            "slot 0 is never reused"
        );
        assert_eq!(table.get(first).err(), Some(BadHandle::Freed));
        assert_eq!(table.get(last).err(), Some(BadHandle::Freed));
        assert_eq!(*table.get(next).unwrap(), 2);
        for k in 0..10 {
            let h = table.insert(Arc::new(k));
            assert_ne!(decode(h).map(|d| d.slot), Some(0));
            table.remove(h).unwrap();
        }
    }

    #[test]
    fn many_handles_span_chunks() {
        let table: Table<u32> = Table::new(Kind::Op);
        let handles: Vec<usize> = (0..1000).map(|i| table.insert(Arc::new(i))).collect();
        for (i, h) in handles.iter().enumerate() {
            assert_eq!(*table.get(*h).unwrap(), i as u32);
        }
    }
}
