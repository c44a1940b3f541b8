//! How a rank tells the other processes of a dynamic window which regions it attached
//! (issue #16): a table in the window's segment (`win_area::RankAttach`) that only the
//! attaching process writes, under a sequence lock, and any process reads without locking.
//!
//! - Writer (`publish`, the owning process only, one writer at a time: `DynMaps` holds a mutex
//!   around it): `seq` odd (relaxed store), a release fence, the words (relaxed stores), then
//!   `seq` even again with a release store.
//! - Reader (`read`, any process, wait-free): `seq` with an acquire load, the words (relaxed
//!   loads), an acquire fence, `seq` again (relaxed). An odd first value or a change means a
//!   rewrite overlapped the read: `None`, and the caller reaches the target by cross-memory
//!   attach instead (always correct for puts and gets, only slower), so they never wait for a
//!   writer; accumulate-type operations read again instead (`dyn_maps`: their path must not
//!   depend on the timing of a rewrite), waiting at most for the writer's few stores.
//!
//! Proof sketch that a successful read returns exactly the words of one publication. Let the
//! reader see `seq = s` (even) in both loads. (1) Every word it read was written by a
//! publication that finished before `s` was stored or by an older one: the acquire load of
//! `s` synchronises with the release store of `s`, so all words that publication (and every
//! earlier one) wrote happen before the reader's loads, and coherence forbids reading older
//! values than those. (2) No word came from a later publication: if a word load read a value
//! written by publication `p` that starts after `s`, `p`'s release fence precedes that word
//! store, and the reader's acquire fence follows the load, so `p`'s odd store to `seq`
//! (before its release fence) happens before the reader's second load of `seq`, which then
//! cannot read `s` (coherence: the odd store is later in `seq`'s modification order than
//! `s`). Hence the words are those of the publication that stored `s`. One writer at a time
//! (the mutex) keeps `seq`'s stores a single increasing sequence. The loom model
//! `loom_reader_sees_one_whole_publication` checks this with two publications and a reader.
//!
//! Layout (`win_area::ATTACH_HEAD` words, then `ATTACH_ENTRY` words per slot): the number of
//! regions attached, the number of slots in use (the last used slot + 1; a reader reads only
//! that far), then per slot: base, size, the shareable block's descriptor + 1 (0: the region
//! is not in one), the region's offset in the block, the block's inode (a reader that maps
//! the block through `/proc/<pid>/fd` checks it, so a descriptor reused for another file is
//! never mistaken for the block) and, in a window spanning nodes, the generation of the
//! region's UCX key (0: none), whose bytes the same publication writes into the slot's key
//! words (`win_area::WinArea::far_key`, see `rma::far`). An all-zero slot is free.
//!
//! A region keeps its slot from the publication after its attach to the one after its detach,
//! and a region attached while every slot is taken stays unpublished until it is detached,
//! even when slots free up: whether a region is published (and so whether accumulates on it
//! take CPU atomics, see `dyn_maps`) never changes while it is attached.
#![forbid(unsafe_code)]

use crate::sync::atomic::{fence, AtomicU64, Ordering};
use crate::transport::shm::win_area::{ATTACH_ENTRY, ATTACH_HEAD, ATTACH_SLOTS};

/// Write `values` (at most `words.len()` of them) over the first words as a new
/// publication (the words after them are not part of it). Only the table's owner calls it,
/// one call at a time.
pub fn publish(seq: &AtomicU64, words: &[AtomicU64], values: &[u64]) {
    publish_with(seq, words, values, || {});
}

/// `publish`, with `more` (relaxed stores to other words that belong to the publication:
/// the regions' UCX keys) run inside it, where the words are written.
pub fn publish_with(seq: &AtomicU64, words: &[AtomicU64], values: &[u64], more: impl FnOnce()) {
    let s = seq.load(Ordering::Relaxed);
    seq.store(s + 1, Ordering::Relaxed);
    fence(Ordering::Release);
    more();
    for (w, &v) in words.iter().zip(values) {
        w.store(v, Ordering::Relaxed);
    }
    seq.store(s + 2, Ordering::Release);
}

/// Read one whole publication into `out`: the first `head` words, then as many as `extent`
/// says the publication has (given the head; clamped to the table). Its sequence number, or
/// `None` when a rewrite overlapped the read (then `out` is garbage).
pub fn read(
    seq: &AtomicU64,
    words: &[AtomicU64],
    head: usize,
    extent: impl Fn(&[u64]) -> usize,
    out: &mut Vec<u64>,
) -> Option<u64> {
    let s = seq.load(Ordering::Acquire);
    if s & 1 != 0 {
        return None;
    }
    out.clear();
    out.extend(words[..head].iter().map(|w| w.load(Ordering::Relaxed)));
    let n = extent(out).clamp(head, words.len());
    out.extend(words[head..n].iter().map(|w| w.load(Ordering::Relaxed)));
    fence(Ordering::Acquire);
    (seq.load(Ordering::Relaxed) == s).then_some(s)
}

/// Words a table with the given head words spans (for `read`).
pub fn extent(head: &[u64]) -> usize {
    let used = usize::try_from(head[1])
        .unwrap_or(usize::MAX)
        .min(ATTACH_SLOTS);
    ATTACH_HEAD + used * ATTACH_ENTRY
}

/// One attached region as published.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub base: u64,
    pub size: u64,
    /// The shareable block holding it: (descriptor in the owner, offset in the block, inode).
    pub block: Option<(i32, u64, u64)>,
    /// The generation of its UCX key in the slot's key words (0: none; `rma::far`).
    pub key: u64,
}

/// The table's words for `count` regions attached, `slots` holding the published ones
/// (`None`: a free slot; at most `ATTACH_SLOTS`).
pub fn encode(slots: &[Option<Entry>], count: usize) -> Vec<u64> {
    let used = slots.len().min(ATTACH_SLOTS);
    let mut v = vec![0u64; ATTACH_HEAD + used * ATTACH_ENTRY];
    v[0] = count as u64;
    v[1] = used as u64;
    for (i, e) in slots.iter().take(used).enumerate() {
        let Some(e) = e else { continue };
        let w = &mut v[ATTACH_HEAD + i * ATTACH_ENTRY..ATTACH_HEAD + (i + 1) * ATTACH_ENTRY];
        w[0] = e.base;
        w[1] = e.size;
        if let Some((fd, offset, ino)) = e.block {
            w[2] = fd as u32 as u64 + 1;
            w[3] = offset;
            w[4] = ino;
        }
        w[5] = e.key;
    }
    v
}

/// The regions of a table's words (as `read` returns them), and whether they are all the
/// regions attached.
pub fn decode(words: &[u64]) -> (Vec<Entry>, bool) {
    let entries: Vec<Entry> = slots(words).map(|(_, e)| e).collect();
    let complete = words[0] <= entries.len() as u64;
    (entries, complete)
}

/// The used slots of a table's words: (slot, region).
pub fn slots(words: &[u64]) -> impl Iterator<Item = (usize, Entry)> + '_ {
    words[ATTACH_HEAD..]
        .chunks_exact(ATTACH_ENTRY)
        .enumerate()
        .filter(|(_, w)| w.iter().any(|&x| x != 0))
        .map(|(i, w)| {
            let e = Entry {
                base: w[0],
                size: w[1],
                block: (w[2] != 0).then(|| ((w[2] - 1) as i32, w[3], w[4])),
                key: w[5],
            };
            (i, e)
        })
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_with_free_slots_and_overflow_is_incomplete() {
        let a = Entry {
            base: 0x1000,
            size: 64,
            block: Some((7, 128, 99)),
            key: 0,
        };
        let b = Entry {
            base: 0x9000,
            size: 8,
            block: None,
            key: 3,
        };
        let (back, complete) = decode(&encode(&[Some(a), None, Some(b)], 2));
        assert_eq!(back, [a, b]);
        assert!(complete);
        let words = encode(&[None, Some(b)], 3);
        assert_eq!(extent(&words), words.len());
        let (back, complete) = decode(&words);
        assert_eq!(back, [b]);
        assert!(!complete);
        let many = vec![Some(b); ATTACH_SLOTS + 5];
        let words = encode(&many, ATTACH_SLOTS + 5);
        assert_eq!(words.len(), crate::transport::shm::win_area::ATTACH_WORDS);
        assert_eq!(decode(&words).0.len(), ATTACH_SLOTS);
    }

    #[test]
    fn publish_then_read_only_the_used_part() {
        let seq = AtomicU64::new(0);
        let words: Vec<AtomicU64> = (0..4).map(|_| AtomicU64::new(7)).collect();
        let mut out = Vec::new();
        let first = |h: &[u64]| 1 + h[0] as usize;
        publish(&seq, &words, &[0]);
        assert_eq!(read(&seq, &words, 1, first, &mut out), Some(2));
        assert_eq!(out, [0]);
        publish(&seq, &words, &[2, 5, 6]);
        assert_eq!(read(&seq, &words, 1, first, &mut out), Some(4));
        assert_eq!(out, [2, 5, 6]);
        // A garbage length is clamped to the table.
        publish(&seq, &words, &[99]);
        assert_eq!(read(&seq, &words, 1, first, &mut out), Some(6));
        assert_eq!(out, [99, 5, 6, 7]);
        seq.store(7, Ordering::Relaxed); // a rewrite in progress
        assert_eq!(read(&seq, &words, 1, first, &mut out), None);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    /// A writer publishes [1, 1] then [2, 2]; a reader never gets a mixture (such as [2, 1]
    /// or [1, 0]), and a sequence number that matches the words it returned.
    #[test]
    fn loom_reader_sees_one_whole_publication() {
        crate::sync::loom_model(|| {
            let seq = Arc::new(AtomicU64::new(0));
            let words: Arc<Vec<AtomicU64>> = Arc::new((0..2).map(|_| AtomicU64::new(0)).collect());
            let (s2, w2) = (seq.clone(), words.clone());
            let t = loom::thread::spawn(move || {
                publish(&s2, &w2, &[1, 1]);
                publish(&s2, &w2, &[2, 2]);
            });
            for _ in 0..2 {
                let mut out = Vec::new();
                if let Some(s) = read(&seq, &words, 1, |_| 2, &mut out) {
                    assert_eq!(out[0], out[1], "a torn read: {out:?}");
                    assert_eq!(out[0] * 2, s, "words {out:?} under sequence {s}");
                }
            }
            t.join().unwrap();
        });
    }
}
