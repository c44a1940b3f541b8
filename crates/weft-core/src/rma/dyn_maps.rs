//! Dynamic windows reached by address (issue #16): each process publishes the regions it
//! attached in the window's segment (`attach_table`, at every `MPI_Win_attach`/`detach`), and
//! each origin keeps, per target, the last table it read with the target's shareable blocks
//! (`MPI_Alloc_mem` memory, `transport::shm::shareable`) mapped here. An operation loads the
//! target's sequence number (one acquire load); while it matches the cached table, finding
//! the region is a search of a short list, and a region in a mapped block is reached by
//! address: a put or get is a copy, like on an allocated window, instead of a
//! `process_vm_writev`/`readv`. Regions outside shareable blocks (the stack, `malloc`) stay on
//! cross-memory attach, and so is an access spanning adjacent regions (MPICH's tests make
//! them). With a complete table, an access outside the attached regions is
//! `MPI_ERR_RMA_RANGE`; with an incomplete one (a region attached while all `ATTACH_SLOTS`
//! slots were taken) or a table being rewritten, the kernel checks the access as before.
//!
//! Accumulate-type operations: on a published region inside a shareable block every process
//! reaches the memory by address, so they take CPU atomics there (`Found::Mapped::atomic`),
//! like on an allocated window; on every other region they run under the target's
//! accumulate mutex. Whether a region is published with its block is fixed from its attach
//! to its detach (`attach_table`), so every process makes the same choice for one element.
//! To keep it so, an accumulate never decides from a table being rewritten (`find` waits for
//! the rewrite, a few stores, to end), and a process that cannot map such a block (or an
//! accumulate spanning such a region and another) gets `Found::Process { shared: true }`,
//! which `ops` refuses for elements the others update with atomics rather than break their
//! atomicity.
//!
//! A region's mapping is shared (`Arc`) with the operations using it, so a refresh by another
//! thread (after a detach) never unmaps memory under a copy; a peer's mapping keeps the pages
//! alive, so memory detached and freed too early is stale, never a crash.
#![forbid(unsafe_code)]

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use super::attach_table::{self, Entry};
use super::far::{AttachedKey, Far};
use crate::sync::atomic::Ordering;
use crate::transport::shm::shareable::{self, PeerMapping};
use crate::transport::shm::win_area::{WinArea, ATTACH_HEAD, ATTACH_SLOTS};

/// Keeps a peer's mapping alive while an operation uses its address.
pub type Keep = Option<Arc<PeerMapping>>;

/// What an origin knows of one target's attached regions.
#[derive(Debug, Default)]
struct Cached {
    /// The sequence number of the table read (`None`: not read yet).
    seq: Option<u64>,
    /// Whether the table listed every region attached.
    complete: bool,
    regions: Vec<Known>,
}

#[derive(Debug)]
struct Known {
    entry: Entry,
    /// Where the region's byte 0 is in this process, and the mapping holding it (`None` for
    /// this process's own memory); `None`: reached by cross-memory attach.
    here: Option<(usize, Keep)>,
}

/// How an origin reaches `len` bytes at address `addr` of a target's dynamic window.
#[derive(Debug)]
pub enum Found {
    /// At `addr + delta` here (wrapping), kept alive by the `Keep`; `atomic`: the region is
    /// a published shareable block, which every process reaches by address, and
    /// accumulate-type operations on it take CPU atomics (see the module's doc).
    Mapped {
        delta: usize,
        keep: Keep,
        atomic: bool,
    },
    /// By cross-memory attach (memory not shareable, an access spanning regions, or the table
    /// was being rewritten); `shared`: some of the bytes lie in a published shareable block,
    /// on which other processes run accumulates by CPU atomics.
    Process { shared: bool },
    /// Not inside one region the target attached; `near`: (base, size) of a region the bytes
    /// partly overlap.
    Outside { near: Option<(u64, u64)> },
}

/// The regions this process published: `slots[i]` the region in slot `i`, and every region
/// (base, size) attached at the last publication (published or not).
#[derive(Debug, Default)]
struct Own {
    slots: Vec<Option<Entry>>,
    seen: HashSet<(usize, u64)>,
    /// In a window spanning nodes: the UCX key of the region in each slot (`rma::far`).
    keys: Vec<Option<AttachedKey>>,
}

/// A region as published, with the shareable block holding it (found once, at its attach).
fn entry(base: usize, size: u64) -> Entry {
    Entry {
        base: base as u64,
        size,
        block: shareable::find(base, size)
            .and_then(|(fd, offset)| shareable::inode(fd).map(|ino| (fd, offset, ino))),
        key: 0,
    }
}

impl Own {
    /// Give the regions attached since the last call free slots (while there are any),
    /// free the slots of regions detached; a region keeps its slot, or its lack of one,
    /// while it stays attached.
    fn update(&mut self, regions: &[(usize, u64)]) {
        let now: HashSet<(usize, u64)> = regions.iter().copied().collect();
        for s in self.slots.iter_mut() {
            if s.is_some_and(|e| !now.contains(&(e.base as usize, e.size))) {
                *s = None;
            }
        }
        for &(base, size) in regions.iter().filter(|r| !self.seen.contains(r)) {
            let e = Some(entry(base, size));
            match self.slots.iter().position(Option::is_none) {
                Some(i) => self.slots[i] = e,
                None if self.slots.len() < ATTACH_SLOTS => self.slots.push(e),
                None => {}
            }
        }
        while self.slots.last() == Some(&None) {
            self.slots.pop();
        }
        self.seen = now;
    }

    /// Give every slot's region its UCX key (registering the regions new in their slot), and
    /// return the keys of regions no longer in theirs (dropped after the publication), with the
    /// slots whose key words the publication writes.
    fn update_keys(&mut self, far: &Far) -> (Vec<AttachedKey>, Vec<usize>) {
        let (mut retired, mut fresh) = (Vec::new(), Vec::new());
        let n = self.slots.len().max(self.keys.len());
        self.keys.resize_with(n, || None);
        for i in 0..n {
            let want = self
                .slots
                .get(i)
                .copied()
                .flatten()
                .map(|e| (e.base, e.size));
            if self.keys[i].as_ref().map(AttachedKey::region) != want {
                retired.extend(self.keys[i].take());
                if let Some((base, size)) = want {
                    self.keys[i] = far.register_attached(base as usize, size as usize);
                    fresh.push(i);
                }
            }
            if let Some(Some(e)) = self.slots.get_mut(i) {
                e.key = self.keys[i].as_ref().map_or(0, AttachedKey::generation);
            }
        }
        self.keys.truncate(self.slots.len());
        (retired, fresh)
    }
}

/// The dynamic-window state of a window's processes: the origin's per-target caches and the
/// lock that keeps this process's publications one at a time. Shared by a window's views.
#[derive(Debug)]
pub struct DynMaps {
    targets: Vec<Mutex<Cached>>,
    /// This process's publications, one at a time.
    publishing: Mutex<Own>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl DynMaps {
    pub fn new(ranks: usize) -> DynMaps {
        DynMaps {
            targets: (0..ranks).map(|_| Mutex::default()).collect(),
            publishing: Mutex::default(),
        }
    }

    /// Publish this process's (rank `me`'s) attached regions, `regions()` read under the
    /// publication lock so that the last publication shows the last change; in a window
    /// spanning nodes (`far`), with each region's UCX key.
    pub fn publish(
        &self,
        area: &WinArea,
        me: u32,
        far: Option<&Far>,
        regions: impl FnOnce() -> Vec<(usize, u64)>,
    ) {
        let mut own = lock(&self.publishing);
        let regions = regions();
        own.update(&regions);
        let (retired, fresh) = match far {
            Some(far) => own.update_keys(far),
            None => (Vec::new(), Vec::new()),
        };
        let t = area.attached(me);
        attach_table::publish_with(
            &t.seq,
            &t.words,
            &attach_table::encode(&own.slots, regions.len()),
            || {
                for &i in &fresh {
                    if let (Some(words), Some(key)) = (area.far_key(me, i), &own.keys[i]) {
                        key.write_to(words);
                    }
                }
            },
        );
        // The regions detached are unregistered once no publication names them.
        drop(retired);
    }

    /// How to reach `len` bytes at address `addr` of target `t` (process `pid`; `me`: this
    /// process's rank). With `wait` (accumulate-type operations), a table being rewritten is
    /// read again after `wait()` until it reads whole, instead of answering `Process`.
    #[allow(clippy::too_many_arguments)]
    pub fn find(
        &self,
        area: &WinArea,
        t: u32,
        me: u32,
        pid: i32,
        addr: usize,
        len: usize,
        mut wait: Option<&mut dyn FnMut()>,
    ) -> Found {
        let table = area.attached(t);
        let seq = table.seq.load(Ordering::Acquire);
        let mut c = lock(&self.targets[t as usize]);
        if c.seq != Some(seq) {
            while !refresh(&mut c, area, t, me, pid) {
                match wait.as_mut() {
                    Some(w) => w(),
                    None => return Found::Process { shared: false },
                }
            }
        }
        let end = addr as u128 + len as u128;
        let hit = c.regions.iter().find(|k| {
            k.entry.base as u128 <= addr as u128
                && end <= k.entry.base as u128 + k.entry.size as u128
        });
        match hit {
            Some(Known {
                here: Some((at, keep)),
                entry,
            }) => Found::Mapped {
                delta: at.wrapping_sub(entry.base as usize),
                keep: keep.clone(),
                atomic: entry.block.is_some(),
            },
            Some(k) => Found::Process {
                shared: k.entry.block.is_some(),
            },
            // Adjacent regions covering the range: the target's memory is contiguous there.
            None if !c.complete || spans(&c.regions, addr as u128, end) => Found::Process {
                shared: c.regions.iter().any(|k| {
                    k.entry.block.is_some()
                        && (k.entry.base as u128) < end
                        && (addr as u128) < k.entry.base as u128 + k.entry.size as u128
                }),
            },
            None => Found::Outside {
                near: c
                    .regions
                    .iter()
                    .find(|k| {
                        (k.entry.base as u128) < end
                            && (addr as u128) < k.entry.base as u128 + k.entry.size as u128
                    })
                    .map(|k| (k.entry.base, k.entry.size)),
            },
        }
    }
}

/// Whether back-to-back regions cover `addr..end` (an access may span adjacent regions).
fn spans(regions: &[Known], addr: u128, end: u128) -> bool {
    let mut at = addr;
    // Regions do not overlap, so each step moves to a different one.
    for _ in 0..regions.len() {
        let Some(k) = regions.iter().find(|k| {
            k.entry.size > 0
                && k.entry.base as u128 <= at
                && at < k.entry.base as u128 + k.entry.size as u128
        }) else {
            return false;
        };
        at = k.entry.base as u128 + k.entry.size as u128;
        if at >= end {
            return true;
        }
    }
    false
}

/// Read target `t`'s table into `c`, mapping the shareable blocks of new regions and keeping
/// the mappings of regions still attached; false when the table was being rewritten.
fn refresh(c: &mut Cached, area: &WinArea, t: u32, me: u32, pid: i32) -> bool {
    let table = area.attached(t);
    let mut words = Vec::new();
    let read = attach_table::read(
        &table.seq,
        &table.words,
        ATTACH_HEAD,
        attach_table::extent,
        &mut words,
    );
    let Some(seq) = read else {
        return false;
    };
    let (entries, complete) = attach_table::decode(&words);
    let mut old = std::mem::take(&mut c.regions);
    c.regions = entries
        .into_iter()
        .map(|entry| {
            let here = match old.iter().position(|k| k.entry == entry) {
                Some(i) => old.swap_remove(i).here,
                None if t == me => Some((entry.base as usize, None)),
                None => entry.block.and_then(|(fd, offset, ino)| {
                    let m = PeerMapping::map_file(pid, fd, offset + entry.size, Some(ino)).ok()?;
                    Some((m.addr() + offset as usize, Some(Arc::new(m))))
                }),
            };
            Known { entry, here }
        })
        .collect();
    c.seq = Some(seq);
    c.complete = complete;
    true
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn bases(own: &Own) -> Vec<Option<u64>> {
        own.slots.iter().map(|s| s.map(|e| e.base)).collect()
    }

    /// A region keeps its slot while attached, a freed slot goes to the next region attached,
    /// and a region attached while the table was full stays unpublished until detached.
    #[test]
    fn slots_are_stable_while_attached() {
        let mut own = Own::default();
        let mut regions: Vec<(usize, u64)> = vec![(0x1000, 8), (0x2000, 8), (0x3000, 8)];
        own.update(&regions);
        assert_eq!(bases(&own), [Some(0x1000), Some(0x2000), Some(0x3000)]);
        regions.remove(0);
        own.update(&regions);
        assert_eq!(bases(&own), [None, Some(0x2000), Some(0x3000)]);
        regions.push((0x4000, 8));
        own.update(&regions);
        assert_eq!(bases(&own), [Some(0x4000), Some(0x2000), Some(0x3000)]);
        regions.retain(|r| r.0 != 0x3000);
        own.update(&regions);
        assert_eq!(bases(&own), [Some(0x4000), Some(0x2000)]);

        let mut full: Vec<(usize, u64)> = (1..=ATTACH_SLOTS).map(|i| (i << 12, 8)).collect();
        let mut own = Own::default();
        own.update(&full);
        full.push((0xdead_0000, 8)); // no slot left
        own.update(&full);
        assert!(own.slots.iter().all(|s| s.unwrap().base != 0xdead_0000));
        full.remove(5); // a slot frees up; the unpublished region does not take it
        own.update(&full);
        assert_eq!(own.slots[5], None);
        full.push((0xbeef_0000, 8)); // a new region does
        own.update(&full);
        assert_eq!(own.slots[5].unwrap().base, 0xbeef_0000);
        assert_eq!(own.slots.len(), ATTACH_SLOTS);
    }
}
