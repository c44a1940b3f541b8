//! Int names of user handles, for `MPI_X_toint`/`MPI_X_fromint`.
//!
//! The standard ABI's ints are 32 bits, user handles 64 (kind, VCI, slot and a 24-bit
//! generation), so no fixed packing keeps both the slot and the generation. Instead a user
//! handle gets a *name* the first time it is converted: `kind (4 bits) << 27 | serial`, a
//! positive int of at least 2^27 (the predefined handles, all below 0x1000, convert as
//! themselves). Each kind has a table from names to handles and back:
//!
//! - the same handle always gets the same name, so ints compare like handles;
//! - serials are handed out in order and wrap only after 2^27 names of the kind, so a name
//!   is not given to another object before that many later conversions;
//! - a name keeps its handle after the object is freed: `fromint` of it gives the stale
//!   handle back, which every call rejects as freed. Names of freed objects are dropped by a
//!   sweep when the table has doubled since the last one (memory stays proportional to the
//!   live named objects); `fromint` of a dropped or never-issued name gives a value that no
//!   handle has (the int itself, below the user-handle range), which every call rejects as
//!   invalid. Never another object.
//!
//! Conversion takes a per-kind lock: it is not on any communication path.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::handles::Kind;

const SERIAL_BITS: u32 = 27;
const SERIALS: u32 = 1 << SERIAL_BITS;
/// Below this many names no sweep runs.
const MIN_SWEEP: usize = 64;

/// The names of one kind's handles.
pub struct IntNames {
    kind: Kind,
    /// Whether a handle still names an object of this kind (or a reserved one).
    live: fn(usize) -> bool,
    names: Mutex<Names>,
}

struct Names {
    handle_of: BTreeMap<u32, usize>,
    serial_of: BTreeMap<usize, u32>,
    next: u32,
    /// Sweep when this many names exist.
    sweep_at: usize,
}

impl IntNames {
    pub const fn new(kind: Kind, live: fn(usize) -> bool) -> IntNames {
        IntNames {
            kind,
            live,
            names: Mutex::new(Names {
                handle_of: BTreeMap::new(),
                serial_of: BTreeMap::new(),
                next: 0,
                sweep_at: MIN_SWEEP,
            }),
        }
    }

    fn encode(&self, serial: u32) -> i32 {
        (((self.kind as u32) << SERIAL_BITS) | serial) as i32
    }

    /// The name of a user handle; -1 (which names nothing) for a handle that names no
    /// object, or when 2^27 names of this kind are in use at once.
    pub fn name(&self, handle: usize) -> i32 {
        let mut names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&serial) = names.serial_of.get(&handle) {
            return self.encode(serial);
        }
        if !(self.live)(handle) {
            return -1;
        }
        if names.serial_of.len() >= names.sweep_at {
            self.sweep(&mut names);
        }
        let Some(serial) = names.fresh_serial() else {
            return -1;
        };
        names.handle_of.insert(serial, handle);
        names.serial_of.insert(handle, serial);
        self.encode(serial)
    }

    /// The handle a name was given to (possibly of an object freed since), if any.
    pub fn handle(&self, value: i32) -> Option<usize> {
        if value < 0 || (value as u32 >> SERIAL_BITS) != self.kind as u32 {
            return None;
        }
        let names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        names
            .handle_of
            .get(&(value as u32 & (SERIALS - 1)))
            .copied()
    }

    /// Drops the names of handles whose objects are gone.
    fn sweep(&self, names: &mut Names) {
        let dead: Vec<(usize, u32)> = names
            .serial_of
            .iter()
            .filter(|(&h, _)| !(self.live)(h))
            .map(|(&h, &s)| (h, s))
            .collect();
        for (h, s) in dead {
            names.serial_of.remove(&h);
            names.handle_of.remove(&s);
        }
        names.sweep_at = (2 * names.serial_of.len()).max(MIN_SWEEP);
    }
}

impl Names {
    /// The next serial not in use, in order, wrapping after 2^27.
    fn fresh_serial(&mut self) -> Option<u32> {
        if self.handle_of.len() >= SERIALS as usize {
            return None;
        }
        loop {
            let serial = self.next;
            self.next = (self.next + 1) % SERIALS;
            if !self.handle_of.contains_key(&serial) {
                return Some(serial);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Handles at or above this value are "live" in these tests.
    static LIVE_FROM: AtomicUsize = AtomicUsize::new(0);

    fn live(h: usize) -> bool {
        h >= LIVE_FROM.load(Ordering::Relaxed)
    }

    #[test]
    fn names_are_stable_distinct_and_stale_names_never_alias() {
        let names = IntNames::new(Kind::Op, live);
        let others = IntNames::new(Kind::Comm, live);
        let a = names.name(1 << 41);
        let b = names.name(2 << 41);
        assert!(a >= 1 << SERIAL_BITS && b >= 1 << SERIAL_BITS);
        assert_ne!(a, b);
        assert_eq!(names.name(1 << 41), a, "the same handle keeps its name");
        assert_eq!(names.handle(a), Some(1 << 41));
        assert_eq!(others.handle(a), None, "another kind's name");
        assert_eq!(names.handle(-1), None);
        assert_eq!(names.handle(0x7fff_ffff), None);
        // Free everything below 3 << 41 and name enough handles to force sweeps: the old
        // names go, and none of them is handed out again.
        LIVE_FROM.store(3 << 41, Ordering::Relaxed);
        assert_eq!(
            names.name(1 << 41),
            a,
            "a named freed handle keeps its name until swept"
        );
        let later: Vec<i32> = (3..3 + 4 * MIN_SWEEP)
            .map(|k| names.name(k << 41))
            .collect();
        assert_eq!(names.handle(a), None, "swept");
        assert!(!later.contains(&a) && !later.contains(&b));
        assert_eq!(names.name(1 << 41), -1, "a dead handle gets no name");
        let count = names.names.lock().unwrap().serial_of.len();
        assert!(count <= 4 * MIN_SWEEP, "{count} names kept");
    }

    #[test]
    fn serials_wrap_around_names_in_use() {
        let mut n = Names {
            handle_of: BTreeMap::from([(0, 10), (2, 12)]),
            serial_of: BTreeMap::new(),
            next: SERIALS - 1,
            sweep_at: MIN_SWEEP,
        };
        assert_eq!(n.fresh_serial(), Some(SERIALS - 1));
        assert_eq!(n.fresh_serial(), Some(1), "0 is in use");
        assert_eq!(n.fresh_serial(), Some(3), "2 is in use");
    }
}
