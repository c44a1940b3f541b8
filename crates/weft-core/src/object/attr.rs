//! Attribute caching: keyvals and the attribute lists of communicators, datatypes and
//! windows. The core stores callbacks as opaque addresses (only the ABI layer calls them)
//! and never holds a lock while one runs: callers take a snapshot, call, then update.
//!
//! A keyval's int value encodes the object kind, a slot and the slot's generation, so a
//! keyval of another kind, a freed one or garbage is recognised:
//! `0x4000_0000 | kind << 28 | generation << 20 | slot` (all above the predefined keyvals).
#![forbid(unsafe_code)]

use std::any::Any;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{fail, ErrorClass, MpiResult};

/// The object kind a keyval is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrKind {
    Comm = 1,
    Type = 2,
    Win = 3,
}

impl AttrKind {
    pub fn name(self) -> &'static str {
        match self {
            AttrKind::Comm => "communicator",
            AttrKind::Type => "datatype",
            AttrKind::Win => "window",
        }
    }
}

/// Copy callback value meaning "do not copy" (`MPI_*_NULL_COPY_FN`).
pub const NULL_COPY: usize = 0;
/// Copy callback value meaning "copy the value" (`MPI_*_DUP_FN`).
pub const DUP_COPY: usize = 1;
/// Delete callback value meaning "nothing to do" (`MPI_*_NULL_DELETE_FN`).
pub const NULL_DELETE: usize = 0;

/// A keyval: what to do with attributes stored under it when their object is duplicated
/// or freed.
#[derive(Debug)]
pub struct Keyval {
    pub id: i32,
    pub kind: AttrKind,
    /// `NULL_COPY`, `DUP_COPY` or a C function address (interpreted by the ABI layer).
    pub copy: usize,
    /// `NULL_DELETE` or a C function address.
    pub delete: usize,
    pub extra_state: usize,
    /// Dropped with the keyval, never under the registry's lock (an `_x` extension's
    /// destructor runs then, and may call MPI).
    pub guard: Option<Box<dyn Any + Send + Sync>>,
}

const MARK: i32 = 0x4000_0000;
const SLOT_BITS: u32 = 20;
const SLOT_MASK: i32 = (1 << SLOT_BITS) - 1;
const GEN_SHIFT: u32 = 20;
const GEN_MASK: i32 = 0xff;
const KIND_SHIFT: u32 = 28;

/// One keyval slot: generation, the keyval, and whether the program freed it (a freed
/// keyval stays, usable for the attributes stored under it, until no attribute holds it).
struct Registry {
    slots: Vec<(u8, Option<Arc<Keyval>>, bool)>,
    free: Vec<u32>,
}

impl Registry {
    /// Give back slot `slot` if its keyval was freed and no attribute holds it any more; the
    /// keyval is returned for the caller to drop once the lock is released.
    fn reclaim(&mut self, slot: usize) -> Option<Arc<Keyval>> {
        let e = &mut self.slots[slot];
        if e.2 && e.1.as_ref().is_some_and(|k| Arc::strong_count(k) == 1) {
            e.2 = false;
            self.free.push(slot as u32);
            return e.1.take();
        }
        None
    }
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    slots: Vec::new(),
    free: Vec::new(),
});

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Why a keyval was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadKeyval {
    /// Not a keyval at all.
    Invalid,
    /// A keyval of another object kind.
    WrongKind(AttrKind),
    /// Freed with `MPI_*_free_keyval`.
    Freed,
}

impl BadKeyval {
    pub fn describe(self) -> String {
        match self {
            BadKeyval::Invalid => "not a valid keyval".to_owned(),
            BadKeyval::WrongKind(k) => format!("a {} keyval", k.name()),
            BadKeyval::Freed => "the keyval was already freed".to_owned(),
        }
    }
}

/// Create a keyval.
pub fn create_keyval(
    kind: AttrKind,
    copy: usize,
    delete: usize,
    extra_state: usize,
    guard: Option<Box<dyn Any + Send + Sync>>,
) -> MpiResult<i32> {
    // Declared before the lock's guard, so dropped after it.
    let mut gone = Vec::new();
    let mut r = registry();
    if r.free.is_empty() {
        for i in 0..r.slots.len() {
            gone.extend(r.reclaim(i));
        }
    }
    let slot = match r.free.pop() {
        Some(s) => s,
        None => {
            if r.slots.len() > SLOT_MASK as usize {
                return fail(ErrorClass::NoMem, "too many keyvals exist (free some)");
            }
            r.slots.push((0, None, false));
            (r.slots.len() - 1) as u32
        }
    };
    let entry = &mut r.slots[slot as usize];
    entry.0 = entry.0.wrapping_add(1).max(1);
    let id = MARK
        | ((kind as i32) << KIND_SHIFT)
        | (((entry.0 as i32) & GEN_MASK) << GEN_SHIFT)
        | slot as i32;
    entry.1 = Some(Arc::new(Keyval {
        id,
        kind,
        copy,
        delete,
        extra_state,
        guard,
    }));
    Ok(id)
}

fn decode(id: i32) -> Option<(AttrKind, u8, u32)> {
    if id & MARK == 0 || id < 0 {
        return None;
    }
    let kind = match (id >> KIND_SHIFT) & 3 {
        1 => AttrKind::Comm,
        2 => AttrKind::Type,
        3 => AttrKind::Win,
        _ => return None,
    };
    Some((
        kind,
        ((id >> GEN_SHIFT) & GEN_MASK) as u8,
        (id & SLOT_MASK) as u32,
    ))
}

/// The live keyval `id` of kind `kind`, not freed by the program (to set attributes).
pub fn keyval(id: i32, kind: AttrKind) -> Result<Arc<Keyval>, BadKeyval> {
    lookup(id, kind, false)
}

/// The keyval `id` of kind `kind`, also one the program freed while attributes still hold it
/// (to get or delete those attributes, and to free it again, harmlessly).
pub fn keyval_held(id: i32, kind: AttrKind) -> Result<Arc<Keyval>, BadKeyval> {
    lookup(id, kind, true)
}

fn lookup(id: i32, kind: AttrKind, held_ok: bool) -> Result<Arc<Keyval>, BadKeyval> {
    let (k, gen, slot) = decode(id).ok_or(BadKeyval::Invalid)?;
    // Declared before the lock's guard, so dropped after it.
    let _gone;
    let mut r = registry();
    if slot as usize >= r.slots.len() || gen == 0 {
        return Err(BadKeyval::Invalid);
    }
    _gone = r.reclaim(slot as usize);
    let (_, entry, freed) = &r.slots[slot as usize];
    match entry {
        Some(kv) if kv.id == id && (held_ok || !freed) => {
            if k != kind {
                Err(BadKeyval::WrongKind(k))
            } else {
                Ok(kv.clone())
            }
        }
        _ => Err(BadKeyval::Freed),
    }
}

/// Free keyval `id`. Attributes already stored under it keep it (their copy and delete
/// callbacks still run, and the keyval's value still names it for them, e.g. in
/// `MPI_Comm_delete_attr`); it is gone once no attribute holds it. Freeing it again while
/// attributes hold it does nothing (MPICH accepts that too).
pub fn free_keyval(id: i32, kind: AttrKind) -> Result<(), BadKeyval> {
    keyval_held(id, kind)?;
    let (_, _, slot) = decode(id).ok_or(BadKeyval::Invalid)?;
    let mut r = registry();
    r.slots[slot as usize].2 = true;
    let gone = r.reclaim(slot as usize);
    drop(r);
    drop(gone);
    Ok(())
}

/// The attributes cached on one object, in the order they were first set.
#[derive(Debug, Default)]
pub struct AttrList {
    entries: Mutex<Vec<(Arc<Keyval>, usize)>>,
}

impl AttrList {
    pub fn new() -> AttrList {
        AttrList::default()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<(Arc<Keyval>, usize)>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The value stored under keyval `id`.
    pub fn get(&self, id: i32) -> Option<usize> {
        self.lock()
            .iter()
            .find(|(k, _)| k.id == id)
            .map(|(_, v)| *v)
    }

    /// Store `value` under `keyval`; an existing value is replaced in place (keeping its
    /// position in the order). Returns the old value.
    pub fn set(&self, keyval: Arc<Keyval>, value: usize) -> Option<usize> {
        let mut e = self.lock();
        match e.iter_mut().find(|(k, _)| k.id == keyval.id) {
            Some(entry) => Some(std::mem::replace(&mut entry.1, value)),
            None => {
                e.push((keyval, value));
                None
            }
        }
    }

    /// Remove the value stored under keyval `id`.
    pub fn remove(&self, id: i32) -> Option<(Arc<Keyval>, usize)> {
        let mut e = self.lock();
        let i = e.iter().position(|(k, _)| k.id == id)?;
        Some(e.remove(i))
    }

    /// Every attribute, in the order they were set.
    pub fn snapshot(&self) -> Vec<(Arc<Keyval>, usize)> {
        self.lock().clone()
    }

    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyvals_are_checked_by_kind_and_generation() {
        let a = create_keyval(AttrKind::Comm, DUP_COPY, NULL_DELETE, 7, None).unwrap();
        let t = create_keyval(AttrKind::Type, NULL_COPY, NULL_DELETE, 0, None).unwrap();
        assert!(a > 0x1000 && t > 0x1000);
        assert_eq!(keyval(a, AttrKind::Comm).unwrap().extra_state, 7);
        assert_eq!(
            keyval(t, AttrKind::Comm).unwrap_err(),
            BadKeyval::WrongKind(AttrKind::Type)
        );
        assert_eq!(keyval(501, AttrKind::Comm).unwrap_err(), BadKeyval::Invalid);
        assert_eq!(keyval(0, AttrKind::Comm).unwrap_err(), BadKeyval::Invalid);
        let kv = keyval(a, AttrKind::Comm).unwrap();
        // Held by `kv` (as an attribute would hold it): still usable, freeing again is a no-op.
        free_keyval(a, AttrKind::Comm).unwrap();
        assert!(keyval_held(a, AttrKind::Comm).is_ok());
        assert_eq!(keyval(a, AttrKind::Comm).unwrap_err(), BadKeyval::Freed);
        free_keyval(a, AttrKind::Comm).unwrap();
        drop(kv);
        assert_eq!(keyval(a, AttrKind::Comm).unwrap_err(), BadKeyval::Freed);
        assert_eq!(
            free_keyval(a, AttrKind::Comm).unwrap_err(),
            BadKeyval::Freed
        );
        let b = create_keyval(AttrKind::Comm, DUP_COPY, NULL_DELETE, 0, None).unwrap();
        assert_ne!(a, b);
        assert_eq!(keyval(a, AttrKind::Comm).unwrap_err(), BadKeyval::Freed);
        // An attribute keeps its freed keyval.
        let c = create_keyval(AttrKind::Comm, DUP_COPY, NULL_DELETE, 0, None).unwrap();
        let list = AttrList::new();
        list.set(keyval(c, AttrKind::Comm).unwrap(), 5);
        free_keyval(c, AttrKind::Comm).unwrap();
        assert_eq!(list.get(c), Some(5));
        assert!(keyval_held(c, AttrKind::Comm).is_ok());
        list.remove(c);
        assert_eq!(keyval(c, AttrKind::Comm).unwrap_err(), BadKeyval::Freed);
        free_keyval(t, AttrKind::Type).unwrap();
        free_keyval(b, AttrKind::Comm).unwrap();
    }

    #[test]
    fn lists_keep_set_order_and_replace_in_place() {
        let k1 = keyval(
            create_keyval(AttrKind::Comm, NULL_COPY, NULL_DELETE, 0, None).unwrap(),
            AttrKind::Comm,
        )
        .unwrap();
        let k2 = keyval(
            create_keyval(AttrKind::Comm, NULL_COPY, NULL_DELETE, 0, None).unwrap(),
            AttrKind::Comm,
        )
        .unwrap();
        let l = AttrList::new();
        assert_eq!(l.set(k1.clone(), 1), None);
        assert_eq!(l.set(k2.clone(), 2), None);
        assert_eq!(l.set(k1.clone(), 3), Some(1));
        let s: Vec<_> = l.snapshot().iter().map(|(k, v)| (k.id, *v)).collect();
        assert_eq!(s, vec![(k1.id, 3), (k2.id, 2)]);
        assert_eq!(l.remove(k1.id).map(|(_, v)| v), Some(3));
        assert_eq!(l.get(k1.id), None);
        assert_eq!(l.len(), 1);
    }

    #[test]
    fn a_guard_drops_when_the_freed_keyval_is_unused() {
        use std::sync::atomic::{AtomicBool, Ordering};
        struct Flag(Arc<AtomicBool>);
        impl Drop for Flag {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let dropped = Arc::new(AtomicBool::new(false));
        let guard: Box<dyn Any + Send + Sync> = Box::new(Flag(dropped.clone()));
        let k = create_keyval(AttrKind::Win, DUP_COPY, NULL_DELETE, 0, Some(guard)).unwrap();
        let list = AttrList::new();
        list.set(keyval(k, AttrKind::Win).unwrap(), 1);
        free_keyval(k, AttrKind::Win).unwrap();
        assert!(
            !dropped.load(Ordering::SeqCst),
            "an attribute still holds the keyval"
        );
        list.remove(k);
        // The next lookup reclaims the slot.
        assert_eq!(keyval_held(k, AttrKind::Win).unwrap_err(), BadKeyval::Freed);
        assert!(dropped.load(Ordering::SeqCst));
    }
}
