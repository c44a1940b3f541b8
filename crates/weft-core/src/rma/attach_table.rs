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
//!   attach instead (always correct, only slower), so no reader ever waits for a writer.
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
//! Entries (`win_area::ATTACH_ENTRY` words each, after the count): base, size, the shareable
//! block's descriptor + 1 (0: the region is not in one), the region's offset in the block
//! and the block's inode (a reader that maps the block through `/proc/<pid>/fd` checks it,
//! so a descriptor reused for another file is never mistaken for the block).
#![forbid(unsafe_code)]

use crate::sync::atomic::{fence, AtomicU64, Ordering};
use crate::transport::shm::win_area::{ATTACH_ENTRY, ATTACH_SLOTS, ATTACH_WORDS};

/// Write `values` (at most `words.len()` of them; the rest become 0) as a new publication.
/// Only the table's owner calls it, one call at a time.
pub fn publish(seq: &AtomicU64, words: &[AtomicU64], values: &[u64]) {
    let s = seq.load(Ordering::Relaxed);
    seq.store(s + 1, Ordering::Relaxed);
    fence(Ordering::Release);
    for (i, w) in words.iter().enumerate() {
        w.store(values.get(i).copied().unwrap_or(0), Ordering::Relaxed);
    }
    seq.store(s + 2, Ordering::Release);
}

/// Read one whole publication into `out` (`words.len()` values): its sequence number, or
/// `None` when a rewrite overlapped the read.
pub fn read(seq: &AtomicU64, words: &[AtomicU64], out: &mut [u64]) -> Option<u64> {
    let s = seq.load(Ordering::Acquire);
    if s & 1 != 0 {
        return None;
    }
    for (o, w) in out.iter_mut().zip(words) {
        *o = w.load(Ordering::Relaxed);
    }
    fence(Ordering::Acquire);
    (seq.load(Ordering::Relaxed) == s).then_some(s)
}

/// One attached region as published.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub base: u64,
    pub size: u64,
    /// The shareable block holding it: (descriptor in the owner, offset in the block, inode).
    pub block: Option<(i32, u64, u64)>,
}

/// The table's words for `count` regions attached, of which `regions` are the first (only
/// `ATTACH_SLOTS` fit; the count tells a reader when the table is incomplete).
pub fn encode(regions: &[Entry], count: usize) -> Vec<u64> {
    let mut v = vec![0u64; ATTACH_WORDS];
    v[0] = count as u64;
    for (i, e) in regions.iter().take(ATTACH_SLOTS).enumerate() {
        let w = &mut v[1 + i * ATTACH_ENTRY..1 + (i + 1) * ATTACH_ENTRY];
        w[0] = e.base;
        w[1] = e.size;
        if let Some((fd, offset, ino)) = e.block {
            w[2] = fd as u32 as u64 + 1;
            w[3] = offset;
            w[4] = ino;
        }
    }
    v
}

/// The regions of a table's words, and whether they are all the regions attached.
pub fn decode(words: &[u64]) -> (Vec<Entry>, bool) {
    let count = words[0] as usize;
    let entries = (0..count.min(ATTACH_SLOTS))
        .map(|i| {
            let w = &words[1 + i * ATTACH_ENTRY..1 + (i + 1) * ATTACH_ENTRY];
            Entry {
                base: w[0],
                size: w[1],
                block: (w[2] != 0).then(|| ((w[2] - 1) as i32, w[3], w[4])),
            }
        })
        .collect();
    (entries, count <= ATTACH_SLOTS)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_overflow_is_incomplete() {
        let e = [
            Entry {
                base: 0x1000,
                size: 64,
                block: Some((7, 128, 99)),
            },
            Entry {
                base: 0x9000,
                size: 8,
                block: None,
            },
        ];
        let (back, complete) = decode(&encode(&e, 2));
        assert_eq!(back, e);
        assert!(complete);
        let many = vec![e[1]; ATTACH_SLOTS];
        let (back, complete) = decode(&encode(&many, ATTACH_SLOTS + 1));
        assert_eq!(back.len(), ATTACH_SLOTS);
        assert!(!complete);
    }

    #[test]
    fn publish_then_read() {
        let seq = AtomicU64::new(0);
        let words: Vec<AtomicU64> = (0..3).map(|_| AtomicU64::new(0)).collect();
        let mut out = [9u64; 3];
        assert_eq!(read(&seq, &words, &mut out), Some(0));
        assert_eq!(out, [0, 0, 0]);
        publish(&seq, &words, &[1, 2]);
        assert_eq!(read(&seq, &words, &mut out), Some(2));
        assert_eq!(out, [1, 2, 0]);
        seq.store(3, Ordering::Relaxed); // a rewrite in progress
        assert_eq!(read(&seq, &words, &mut out), None);
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
                let mut out = [0u64; 2];
                if let Some(s) = read(&seq, &words, &mut out) {
                    assert_eq!(out[0], out[1], "a torn read: {out:?}");
                    assert_eq!(out[0] * 2, s, "words {out:?} under sequence {s}");
                }
            }
            t.join().unwrap();
        });
    }
}
