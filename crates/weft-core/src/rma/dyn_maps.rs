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
//! `MPI_ERR_RMA_RANGE`; with an incomplete one (more than `ATTACH_SLOTS` regions) or a table
//! being rewritten, the kernel checks the access as before.
//!
//! Accumulate-type operations on dynamic windows keep the accumulate mutex (never CPU
//! atomics): the mutex is what makes them atomic with the same operations of processes that
//! reach the memory by cross-memory attach.
//!
//! A region's mapping is shared (`Arc`) with the operations using it, so a refresh by another
//! thread (after a detach) never unmaps memory under a copy; a peer's mapping keeps the pages
//! alive, so memory detached and freed too early is stale, never a crash.
#![forbid(unsafe_code)]

use std::sync::{Arc, Mutex, MutexGuard};

use super::attach_table::{self, Entry};
use crate::sync::atomic::Ordering;
use crate::transport::shm::shareable::{self, PeerMapping};
use crate::transport::shm::win_area::{WinArea, ATTACH_SLOTS, ATTACH_WORDS};

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
    /// At `addr + delta` here (wrapping), kept alive by the `Keep`.
    Mapped { delta: usize, keep: Keep },
    /// By cross-memory attach (memory not shareable, or the table was unreadable).
    Process,
    /// Outside every region the target attached.
    Outside,
}

/// The dynamic-window state of a window's processes: the origin's per-target caches and the
/// lock that keeps this process's publications one at a time. Shared by a window's views.
#[derive(Debug)]
pub struct DynMaps {
    targets: Vec<Mutex<Cached>>,
    publishing: Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl DynMaps {
    pub fn new(ranks: usize) -> DynMaps {
        DynMaps {
            targets: (0..ranks).map(|_| Mutex::default()).collect(),
            publishing: Mutex::new(()),
        }
    }

    /// Publish this process's (rank `me`'s) attached regions, `regions()` read under the
    /// publication lock so that the last publication shows the last change.
    pub fn publish(&self, area: &WinArea, me: u32, regions: impl FnOnce() -> Vec<(usize, u64)>) {
        let _one = lock(&self.publishing);
        let regions = regions();
        let entries: Vec<Entry> = regions
            .iter()
            .take(ATTACH_SLOTS)
            .map(|&(base, size)| Entry {
                base: base as u64,
                size,
                block: shareable::find(base, size)
                    .and_then(|(fd, offset)| shareable::inode(fd).map(|ino| (fd, offset, ino))),
            })
            .collect();
        let t = area.attached(me);
        attach_table::publish(
            &t.seq,
            &t.words,
            &attach_table::encode(&entries, regions.len()),
        );
    }

    /// How to reach `len` bytes at address `addr` of target `t` (process `pid`; `me`: this
    /// process's rank).
    pub fn find(
        &self,
        area: &WinArea,
        t: u32,
        me: u32,
        pid: i32,
        addr: usize,
        len: usize,
    ) -> Found {
        let table = area.attached(t);
        let seq = table.seq.load(Ordering::Acquire);
        let mut c = lock(&self.targets[t as usize]);
        if c.seq != Some(seq) && !refresh(&mut c, area, t, me, pid) {
            return Found::Process;
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
            },
            Some(_) => Found::Process,
            // Adjacent regions covering the range: the target's memory is contiguous there.
            None if !c.complete || spans(&c.regions, addr as u128, end) => Found::Process,
            None => Found::Outside,
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
    let mut words = vec![0u64; ATTACH_WORDS];
    let Some(seq) = attach_table::read(&table.seq, &table.words, &mut words) else {
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
