//! A bounded lock-free queue of fixed-size records of `W` words: any number of producers
//! (`push`, which never waits: a full ring refuses the record), one consumer at a time
//! (`pop`, serialised by its caller). MPI_T's events go through it (`crate::events`), so that
//! recording one takes no lock.
//!
//! The protocol (D. Vyukov's bounded queue, with the payload in atomics so that no `unsafe` is
//! needed): slot `i` carries a sequence number `seq`. Position `p` (counted from 0, never
//! wrapping in practice: 2^64 pushes) lives in slot `p % cap`, and
//! - `seq == p`: the slot is free for the producer of position `p`;
//! - `seq == p + 1`: the record of position `p` is written, for the consumer;
//! - the consumer that takes position `p` sets `seq = p + cap`: free for position `p + cap`.
//!
//! Proof sketch.
//! - *One writer per slot and turn*: a producer writes slot `p % cap` only after winning the
//!   compare-exchange of `tail` from `p` to `p + 1`, which one producer alone can win for a
//!   given `p`; it saw `seq == p` first, so the consumer had released the slot's previous
//!   turn (position `p - cap`) with its Release store, which the producer's Acquire load of
//!   `seq` read: the consumer's reads of that turn happen before the producer's writes.
//! - *The consumer reads a whole record*: it reads the words only after an Acquire load of
//!   `seq == p + 1`, which reads the producer's Release store made after its word writes.
//! - *Nothing is lost or read twice*: `tail` hands each position to exactly one producer; the
//!   consumer (one at a time) takes positions in order from `head`, stops at the first one
//!   not yet published (a producer between its compare-exchange and its Release store: that
//!   record and the later ones are taken by the next `pop`), and moves `head` past each taken
//!   one before releasing the slot.
//! - *Full*: a producer that sees `seq < p` (`seq == p - cap + 1` or the consumer still
//!   reading the turn before) refuses the record; positions are only ever claimed for free
//!   slots, so `tail - head <= cap`.
//!
//! The loom model below runs two producers against a consumer on a two-slot ring.
#![forbid(unsafe_code)]

use crate::sync::atomic::{AtomicU64, Ordering};

struct Slot<const W: usize> {
    seq: AtomicU64,
    words: [AtomicU64; W],
}

/// The queue; `cap` slots, allocated at creation.
pub struct WordRing<const W: usize> {
    slots: Box<[Slot<W>]>,
    tail: AtomicU64,
    head: AtomicU64,
}

impl<const W: usize> WordRing<W> {
    pub fn new(cap: usize) -> Self {
        assert!(cap > 0);
        WordRing {
            slots: (0..cap as u64)
                .map(|i| Slot {
                    seq: AtomicU64::new(i),
                    words: std::array::from_fn(|_| AtomicU64::new(0)),
                })
                .collect(),
            tail: AtomicU64::new(0),
            head: AtomicU64::new(0),
        }
    }

    fn slot(&self, pos: u64) -> &Slot<W> {
        &self.slots[(pos % self.slots.len() as u64) as usize]
    }

    /// Append `rec`; false (and nothing stored) when the ring is full. Never waits.
    pub fn push(&self, rec: [u64; W]) -> bool {
        let mut pos = self.tail.load(Ordering::Relaxed);
        loop {
            let slot = self.slot(pos);
            let seq = slot.seq.load(Ordering::Acquire);
            if seq == pos {
                match self.tail.compare_exchange_weak(
                    pos,
                    pos + 1,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        for (w, v) in slot.words.iter().zip(rec) {
                            w.store(v, Ordering::Relaxed);
                        }
                        slot.seq.store(pos + 1, Ordering::Release);
                        return true;
                    }
                    Err(now) => pos = now,
                }
            } else if seq < pos {
                return false;
            } else {
                // Another producer took `pos` (and maybe more): try the current tail.
                pos = self.tail.load(Ordering::Relaxed);
            }
        }
    }

    /// Take the oldest published record. One consumer at a time: the caller serialises the
    /// calls (a second consumer racing this one could take a record twice).
    pub fn pop(&self) -> Option<[u64; W]> {
        let pos = self.head.load(Ordering::Relaxed);
        let slot = self.slot(pos);
        if slot.seq.load(Ordering::Acquire) != pos + 1 {
            return None;
        }
        let rec = std::array::from_fn(|i| slot.words[i].load(Ordering::Relaxed));
        self.head.store(pos + 1, Ordering::Relaxed);
        slot.seq
            .store(pos + self.slots.len() as u64, Ordering::Release);
        Some(rec)
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    /// Two producers push two records each into two slots while the consumer pops twice,
    /// then pops what is left after joining them: every record that was accepted arrives
    /// once and whole, each producer's in push order, and a refused one never arrives.
    #[test]
    fn loom_word_ring_mpsc() {
        crate::sync::loom_model(|| {
            let q = Arc::new(WordRing::<2>::new(2));
            let producers: Vec<_> = (0..2u64)
                .map(|p| {
                    let q = q.clone();
                    loom::thread::spawn(move || {
                        (0..2u64)
                            .filter(|&i| q.push([p, p * 10 + i]))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            let mut got = Vec::new();
            got.extend(q.pop());
            got.extend(q.pop());
            let accepted: Vec<Vec<u64>> =
                producers.into_iter().map(|t| t.join().unwrap()).collect();
            while let Some(r) = q.pop() {
                got.push(r);
            }
            for r in &got {
                assert_eq!(r[1] / 10, r[0], "a torn record");
            }
            for (p, acc) in accepted.iter().enumerate() {
                let mine: Vec<u64> = got
                    .iter()
                    .filter(|r| r[0] == p as u64)
                    .map(|r| r[1] % 10)
                    .collect();
                assert_eq!(&mine, acc);
            }
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn full_ring_refuses_and_frees_after_pop() {
        let q = WordRing::<3>::new(4);
        for i in 0..4 {
            assert!(q.push([i, i + 1, i + 2]));
        }
        assert!(!q.push([9, 9, 9]));
        assert_eq!(q.pop(), Some([0, 1, 2]));
        assert!(q.push([4, 5, 6]));
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(rest, vec![[1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]]);
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn producers_under_threads_lose_nothing_accepted() {
        let q = Arc::new(WordRing::<2>::new(64));
        let producers: Vec<_> = (0..4u64)
            .map(|p| {
                let q = q.clone();
                std::thread::spawn(move || (0..5000u64).filter(|&i| q.push([p, i])).count())
            })
            .collect();
        let mut got = Vec::new();
        let mut last = [None::<u64>; 4];
        while !producers.iter().all(|t| t.is_finished()) {
            while let Some(r) = q.pop() {
                let p = r[0] as usize;
                assert!(last[p].is_none_or(|l| l < r[1]), "out of order");
                last[p] = Some(r[1]);
                got.push(r);
            }
        }
        let accepted: usize = producers.into_iter().map(|t| t.join().unwrap()).sum();
        got.extend(std::iter::from_fn(|| q.pop()));
        assert_eq!(got.len(), accepted);
    }
}
