//! Ranks of a window on other nodes, reached through UCX (issue #24). A window that spans
//! nodes has one segment per node (created by the node's lowest rank of the window, with the
//! same layout of control words everywhere): a rank's control words (its lock, accumulate
//! mutex, post/complete and notification counters) live in its own node's segment. At
//! creation every rank registers its node's segment (and, for `MPI_Win_create`, its own
//! memory) with UCP and the packed remote keys are exchanged; each rank unpacks the keys of
//! the ranks on other nodes. An operation on such a target's memory is a UCP put or get
//! (complete at the target when it returns, like every Weft RMA operation), and a protocol
//! step on its control words is a UCP atomic on the same word in the target's segment, so
//! the ranks of the target's node (CPU atomics) and those elsewhere (UCP atomics, served by
//! CPU atomics at the target) follow the one protocol of `words`.
//!
//! Dynamic windows: a process registers each region it attaches with UCP and publishes the
//! packed key with the region, in the same sequence-locked publication of its attach table
//! (`attach_table`, the key's bytes in the slot's key words, `WinArea::far_key`, and the key's
//! generation in the entry). An origin on another node reads the target's table with UCP gets
//! from the target's segment: the sequence number, the entries, each new key, the sequence
//! number again (a change: read again; the proof sketch of `attach_table` carries over, the
//! remote reads being ordered by completing each before the next), and keeps the unpacked
//! keys by generation. Every operation first reads the sequence number (one 8-byte get), so a
//! region detached and attached again is never reached with its old key.

use std::sync::atomic::AtomicU64 as Counter;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::sync::atomic::{AtomicU64, Ordering};

use super::attach_table;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::transport::shm::win_area::{WinArea, ATTACH_HEAD, FAR_KEY_WORDS};
use crate::transport::ucx::{Registration, RemoteKey, UcxTransport};
use crate::transport::Amo;

/// A rank on another node, as this process reaches it.
#[derive(Debug)]
pub struct FarPeer {
    /// Its node's segment (control words; an allocated window's memory).
    seg: RemoteKey,
    /// Where that segment is mapped in the peer.
    seg_base: u64,
    /// Its own window memory when the segment does not hold it (`MPI_Win_create`).
    data: Option<RemoteKey>,
    /// Its job rank (to unpack the keys of its attached regions).
    job: u32,
    /// Its dynamic window's regions as last read.
    attached: Mutex<FarTable>,
}

/// A far target's attach table as this process last read it.
#[derive(Debug, Default)]
struct FarTable {
    seq: Option<u64>,
    regions: Vec<FarRegion>,
}

#[derive(Debug)]
struct FarRegion {
    base: u64,
    size: u64,
    /// The key's generation (0: the region has no key: its owner could not register it).
    generation: u64,
    key: Option<Arc<RemoteKey>>,
}

/// The regions of a far target's dynamic window an access covers, in address order, with
/// their keys: (start, end, key).
#[derive(Debug)]
pub struct FarKeys(Vec<(u64, u64, Arc<RemoteKey>)>);

/// Where an access to a far target's dynamic window lies.
#[derive(Debug)]
pub enum FarFound {
    In(FarKeys),
    /// Not inside the regions the target attached; `near`: (base, size) of one it overlaps.
    Outside {
        near: Option<(u64, u64)>,
    },
}

/// A region this process attached to a dynamic window spanning nodes, registered with UCP;
/// the registration ends when the region's slot is published free (`dyn_maps`).
#[derive(Debug)]
pub struct AttachedKey {
    base: u64,
    size: u64,
    generation: u64,
    _registration: Registration,
}

/// Key generations, unique in this process.
static GENERATIONS: Counter = Counter::new(1);

impl AttachedKey {
    pub fn region(&self) -> (u64, u64) {
        (self.base, self.size)
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Write the key into a slot's key words (inside the publication: `dyn_maps`).
    pub fn write_to(&self, words: &[AtomicU64; FAR_KEY_WORDS]) {
        let packed = self._registration.packed();
        words[0].store(self.generation, Ordering::Relaxed);
        words[1].store(packed.len() as u64, Ordering::Relaxed);
        for (w, chunk) in words[2..].iter().zip(packed.chunks(8)) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            w.store(u64::from_le_bytes(b), Ordering::Relaxed);
        }
    }
}

/// The bytes of a key slot read as words: (generation, packed key), or `None` when the length
/// is impossible.
fn key_of(words: &[u64]) -> Option<(u64, Vec<u8>)> {
    let len = usize::try_from(words[1]).ok()?;
    if len > (FAR_KEY_WORDS - 2) * 8 {
        return None;
    }
    let bytes: Vec<u8> = words[2..]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .take(len)
        .collect();
    Some((words[0], bytes))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The UCX side of a window that spans nodes.
pub struct Far {
    ucx: &'static UcxTransport,
    /// This process's registrations (kept while the window lives).
    _mine: Vec<Registration>,
    /// Per window rank: `None` for ranks on this node.
    peers: Vec<Option<FarPeer>>,
    /// This process's segment address: control words are found at the same offsets in
    /// every node's segment.
    seg_base: usize,
}

/// What a rank tells the others about its registrations (before the keys themselves).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Card {
    pub seg_base: u64,
    pub data_base: u64,
    /// Lengths of the packed keys (0: none; a segment key of 0 bytes: registration failed).
    pub seg_key: u32,
    pub data_key: u32,
}

impl Card {
    pub const BYTES: usize = 24;

    pub fn encode(&self) -> [u8; Self::BYTES] {
        let mut b = [0u8; Self::BYTES];
        b[0..8].copy_from_slice(&self.seg_base.to_le_bytes());
        b[8..16].copy_from_slice(&self.data_base.to_le_bytes());
        b[16..20].copy_from_slice(&self.seg_key.to_le_bytes());
        b[20..24].copy_from_slice(&self.data_key.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Card {
        let w = |r: std::ops::Range<usize>| u64::from_le_bytes(b[r].try_into().expect("8 bytes"));
        let h = |r: std::ops::Range<usize>| u32::from_le_bytes(b[r].try_into().expect("4 bytes"));
        Card {
            seg_base: w(0..8),
            data_base: w(8..16),
            seg_key: h(16..20),
            data_key: h(20..24),
        }
    }
}

fn ucx_error(func: &str, rank: u32, e: std::io::Error) -> MpiError {
    MpiError::new(
        ErrorClass::Other,
        format!("{func}: window rank {rank} on another node: {e}"),
    )
}

impl std::fmt::Debug for Far {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Far").field("peers", &self.peers).finish()
    }
}

impl Far {
    /// Register this process's segment (`seg`: address, length) and, when given, its own
    /// window memory (`data`); the card to send (a failed registration sends a zero key).
    ///
    /// # Safety
    /// Both stay mapped while the registrations returned live (the window's segment and the
    /// window memory, for the window's life; `WinRma` drops its `Far` before its segment).
    pub unsafe fn register(
        ucx: &'static UcxTransport,
        seg: (usize, usize),
        data: Option<(usize, usize)>,
        data_base: u64,
    ) -> (Vec<Registration>, Card) {
        let mut card = Card {
            seg_base: seg.0 as u64,
            data_base,
            ..Card::default()
        };
        let mut regs = Vec::new();
        // SAFETY: the caller's contract.
        if let Ok(r) = unsafe { ucx.register(seg.0, seg.1) } {
            card.seg_key = r.packed().len() as u32;
            regs.push(r);
            if let Some((addr, len)) = data.filter(|d| d.1 > 0) {
                // SAFETY: the caller's contract.
                match unsafe { ucx.register(addr, len) } {
                    Ok(d) => {
                        card.data_key = d.packed().len() as u32;
                        regs.push(d);
                    }
                    Err(_) => card.seg_key = 0,
                }
            }
        }
        (regs, card)
    }

    /// Unpack the keys of the ranks on other nodes. `far[r]` holds rank `r`'s job rank when
    /// it is on another node; `keys[r]` its packed keys (segment's, then memory's).
    pub fn connect(
        ucx: &'static UcxTransport,
        mine: Vec<Registration>,
        seg_base: usize,
        cards: &[Card],
        keys: &[&[u8]],
        far: &[Option<u32>],
        func: &str,
    ) -> MpiResult<Far> {
        let mut peers = Vec::with_capacity(far.len());
        for (r, job) in far.iter().enumerate() {
            let Some(job) = *job else {
                peers.push(None);
                continue;
            };
            let c = &cards[r];
            let (sk, dk) = keys[r].split_at(c.seg_key as usize);
            let seg = ucx
                .remote_key(job, sk)
                .map_err(|e| ucx_error(func, r as u32, e))?;
            let data = match c.data_key {
                0 => None,
                n => Some(
                    ucx.remote_key(job, &dk[..n as usize])
                        .map_err(|e| ucx_error(func, r as u32, e))?,
                ),
            };
            peers.push(Some(FarPeer {
                seg,
                seg_base: c.seg_base,
                data,
                job,
                attached: Mutex::default(),
            }));
        }
        Ok(Far {
            ucx,
            _mine: mine,
            peers,
            seg_base,
        })
    }

    /// Whether window rank `t` is on another node.
    #[inline]
    pub fn is_far(&self, t: u32) -> bool {
        matches!(self.peers.get(t as usize), Some(Some(_)))
    }

    fn peer(&self, t: u32) -> &FarPeer {
        self.peers[t as usize]
            .as_ref()
            .expect("far operations only on ranks of other nodes")
    }

    /// Read rank `t`'s memory: `pieces` (address there, length), in order, into `out`.
    pub fn read(
        &self,
        t: u32,
        pieces: &[(usize, usize)],
        out: &mut [u8],
        func: &str,
    ) -> MpiResult<()> {
        let p = self.peer(t);
        let key = p.data.as_ref().unwrap_or(&p.seg);
        self.ucx
            .get(key, pieces, out)
            .map_err(|e| ucx_error(func, t, e))
    }

    /// Write `data` into rank `t`'s memory at `pieces` (address there, length), in order.
    pub fn write(
        &self,
        t: u32,
        pieces: &[(usize, usize)],
        data: &[u8],
        func: &str,
    ) -> MpiResult<()> {
        let p = self.peer(t);
        let key = p.data.as_ref().unwrap_or(&p.seg);
        self.ucx
            .put(key, pieces, data)
            .map_err(|e| ucx_error(func, t, e))
    }

    /// Register a region this process attaches to the window (`dyn_maps`), when its packed
    /// key fits a key slot; else the region is not reached from other nodes.
    pub fn register_attached(&self, base: usize, size: usize) -> Option<AttachedKey> {
        // MPI_Win_attach's memory stays valid until MPI_Win_detach (MPI 4.1 §12.2.4), and the
        // registration is dropped once the publication that frees the region's slot is made.
        // SAFETY: the region stays mapped while it is registered (above).
        let registration = unsafe { self.ucx.register(base, size.max(1)) }.ok()?;
        (registration.packed().len() <= (FAR_KEY_WORDS - 2) * 8).then(|| AttachedKey {
            base: base as u64,
            size: size as u64,
            generation: GENERATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            _registration: registration,
        })
    }

    /// Words of rank `t`'s segment at `offset` (the same offset as in this process's).
    fn seg_words(&self, t: u32, offset: usize, n: usize, func: &str) -> MpiResult<Vec<u64>> {
        let p = self.peer(t);
        let mut bytes = vec![0u8; n * 8];
        self.ucx
            .get(&p.seg, &[(p.seg_base as usize + offset, n * 8)], &mut bytes)
            .map_err(|e| ucx_error(func, t, e))?;
        Ok(bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect())
    }

    /// The regions of rank `t`'s dynamic window that hold `len` bytes at `addr` there, with
    /// their keys (see the module's doc). `area` is this process's mapping of the window's
    /// segment, whose layout is the target's.
    pub fn find_attached(
        &self,
        area: &WinArea,
        t: u32,
        addr: usize,
        len: usize,
        func: &str,
    ) -> MpiResult<FarFound> {
        let p = self.peer(t);
        let table = area.attached(t);
        let seq_at = area.offset_of(&table.seq);
        let mut c = lock(&p.attached);
        loop {
            let seq = self.seg_words(t, seq_at, 1, func)?[0];
            if c.seq == Some(seq) || (seq & 1 == 0 && self.refresh(&mut c, area, t, seq, func)?) {
                break;
            }
            // The target is rewriting its table (a few stores): read again.
            std::thread::yield_now();
        }
        let (lo, hi) = (addr as u64, addr as u64 + len as u64);
        let mut covered = Vec::new();
        let mut at = lo;
        while at < hi {
            let Some(r) = c
                .regions
                .iter()
                .find(|r| r.base <= at && at < r.base + r.size)
            else {
                break;
            };
            let Some(key) = r.key.clone() else {
                return Err(MpiError::new(
                    ErrorClass::RmaRange,
                    format!(
                        "{func}: window rank {t} on another node could not register its region {:#x}..{:#x} with UCX, so it cannot be reached from here",
                        r.base,
                        r.base + r.size
                    ),
                ));
            };
            covered.push((r.base, r.base + r.size, key));
            at = r.base + r.size;
        }
        if at >= hi {
            return Ok(FarFound::In(FarKeys(covered)));
        }
        Ok(FarFound::Outside {
            near: c
                .regions
                .iter()
                .find(|r| r.base < hi && lo < r.base + r.size)
                .map(|r| (r.base, r.size)),
        })
    }

    /// Read rank `t`'s table published under `seq` into `c`; false when it changed meanwhile.
    fn refresh(
        &self,
        c: &mut FarTable,
        area: &WinArea,
        t: u32,
        seq: u64,
        func: &str,
    ) -> MpiResult<bool> {
        let table = area.attached(t);
        let (seq_at, words_at) = (area.offset_of(&table.seq), area.offset_of(&table.words[0]));
        let head = self.seg_words(t, words_at, ATTACH_HEAD, func)?;
        let words = self.seg_words(t, words_at, attach_table::extent(&head), func)?;
        let mut regions = Vec::new();
        for (slot, e) in attach_table::slots(&words) {
            let known = c
                .regions
                .iter()
                .find(|r| r.generation == e.key && e.key != 0)
                .and_then(|r| r.key.clone());
            let key = match (e.key, known) {
                (0, _) => None,
                (_, Some(k)) => Some(k),
                (generation, None) => {
                    let Some(slot_words) = area.far_key(t, slot) else {
                        return Ok(false);
                    };
                    let raw =
                        self.seg_words(t, area.offset_of(&slot_words[0]), FAR_KEY_WORDS, func)?;
                    match key_of(&raw) {
                        Some((g, packed)) if g == generation => Some(Arc::new(
                            self.ucx
                                .remote_key(self.peer(t).job, &packed)
                                .map_err(|e| ucx_error(func, t, e))?,
                        )),
                        // Rewritten since the entries were read.
                        _ => return Ok(false),
                    }
                }
            };
            regions.push(FarRegion {
                base: e.base,
                size: e.size,
                generation: e.key,
                key,
            });
        }
        if self.seg_words(t, seq_at, 1, func)?[0] != seq {
            return Ok(false);
        }
        c.seq = Some(seq);
        c.regions = regions;
        Ok(true)
    }

    /// Read `pieces` (address, length) of rank `t`'s dynamic window, found in `keys`, in order,
    /// into `out`.
    pub fn read_in(
        &self,
        t: u32,
        keys: &FarKeys,
        pieces: &[(usize, usize)],
        out: &mut [u8],
        func: &str,
    ) -> MpiResult<()> {
        for (key, piece, bytes) in split(keys, pieces) {
            let got = self.ucx.get(key, &[piece], &mut out[bytes]);
            got.map_err(|e| ucx_error(func, t, e))?;
        }
        Ok(())
    }

    /// Write `data` at `pieces` (address, length) of rank `t`'s dynamic window, found in `keys`.
    pub fn write_in(
        &self,
        t: u32,
        keys: &FarKeys,
        pieces: &[(usize, usize)],
        data: &[u8],
        func: &str,
    ) -> MpiResult<()> {
        for (key, piece, bytes) in split(keys, pieces) {
            let put = self.ucx.put(key, &[piece], &data[bytes]);
            put.map_err(|e| ucx_error(func, t, e))?;
        }
        Ok(())
    }

    /// Apply `op` with `value` to rank `t`'s copy of the control word `word` (a word of this
    /// process's segment: the same offset in `t`'s); the previous value.
    pub fn word<T>(&self, t: u32, word: &T, op: Amo, value: u64, func: &str) -> MpiResult<u64> {
        let p = self.peer(t);
        let offset = (word as *const T as usize) - self.seg_base;
        self.ucx
            .atomic(&p.seg, p.seg_base + offset as u64, op, value)
            .map_err(|e| ucx_error(func, t, e))
    }
}

/// `pieces` cut where they cross from one region of `keys` into the next, each with its key
/// and the range of the packed bytes it carries.
fn split<'k>(
    keys: &'k FarKeys,
    pieces: &[(usize, usize)],
) -> Vec<(&'k RemoteKey, (usize, usize), std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut at = 0;
    for &(mut addr, mut len) in pieces {
        while len > 0 {
            let Some((_, end, key)) = keys
                .0
                .iter()
                .find(|(lo, hi, _)| *lo <= addr as u64 && (addr as u64) < *hi)
            else {
                // `find_attached` checked that the regions cover the access.
                unreachable!("an access outside the regions found for it");
            };
            let n = len.min((*end - addr as u64) as usize);
            out.push((&**key, (addr, n), at..at + n));
            addr += n;
            len -= n;
            at += n;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{key_of, Card};

    #[test]
    fn card_round_trips() {
        let c = Card {
            seg_base: 0x7f00_1234_5000,
            data_base: u64::MAX - 7,
            seg_key: 141,
            data_key: 0,
        };
        let b = c.encode();
        assert_eq!(b.len(), Card::BYTES);
        assert_eq!(Card::decode(&b), c);
    }

    #[test]
    fn a_key_slot_round_trips_and_rejects_impossible_lengths() {
        use super::FAR_KEY_WORDS;
        let packed: Vec<u8> = (1..=21).collect();
        let mut words = vec![0u64; FAR_KEY_WORDS];
        words[0] = 9;
        words[1] = packed.len() as u64;
        for (w, c) in words[2..].iter_mut().zip(packed.chunks(8)) {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            *w = u64::from_le_bytes(b);
        }
        assert_eq!(key_of(&words), Some((9, packed)));
        words[1] = ((FAR_KEY_WORDS - 2) * 8 + 1) as u64;
        assert_eq!(key_of(&words), None);
    }
}
