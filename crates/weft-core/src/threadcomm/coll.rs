//! Collectives made for the thread ranks of one process: `MPI_Barrier` on arrival words of
//! each rank's own (`Flags`), a counting barrier on two shared cache lines for the library's
//! own meetings (`Barrier`, whose last thread can act before the others leave), and rounds
//! in which each rank leaves its contribution in a ring of cache-line entries of its own for
//! the ranks that read it (a rank may run a few rounds ahead of its readers).
//!
//! # `Flags`: proof sketch
//! A dissemination barrier of radix `r + 1` (`r = FAN`), every signal being a store to the
//! signalling rank's own word: in round `k` of its `e`-th barrier, rank `i` stores `e`
//! (release) into its word for round `k`, then waits until the round-`k` words of ranks
//! `i - j (r+1)^k (mod n)`, `j = 1..=r`, are at least `e` (acquire). With `n <= r + 1` there is
//! one round, in which each rank waits for every other: one store and `n - 1` loads, no
//! read-modify-write and no line written by two ranks.
//! * *No rank leaves early.* After round `k`, rank `i` has synchronized with the arrival of
//!   ranks `i - m` for every `m < (r+1)^(k+1)`: in round `k` it read the word of each
//!   `i - j (r+1)^k`, `j = 0..=r`, which stored it only after finishing round `k - 1`, so
//!   (induction, and release/acquire being transitive) after seeing the arrivals of
//!   `i - j (r+1)^k - m'` for `m' < (r+1)^k`. The rounds stop once `(r+1)^rounds >= n`: every
//!   rank arrived, and what each wrote before arriving is visible after the barrier.
//! * *Reuse needs no reset.* Only rank `i` writes its words, with `1, 2, 3, …` (its own
//!   count, read back from its round-0 word), and readers wait for `>= e`: a later value
//!   `e' > e` was stored after `e` by the same thread, so acquiring it also acquires all
//!   that preceded the store of `e`. A rank running ahead to barrier `e + 1` cannot release
//!   a rank of barrier `e` early (it stored `e` before `e + 1`), nor be released by a word of
//!   barrier `e` (`e < e + 1`).
//! * Between regions (`reset`, while every rank waits in `finish`'s `Barrier`) the words go
//!   back to 0 for all ranks at once, so the next region's counts start alike.
//!
//! # `Barrier`: proof sketch
//! A centralised sense (generation) barrier. A thread reads the generation `g`, then adds
//! itself to `count`; the thread that brings it to `n` resets `count` to 0 and then stores
//! `g + 1` (release); the others wait until the generation differs from `g` (acquire).
//! * No thread leaves early: the generation changes only after all `n` added themselves (the
//!   count reached `n` in the count's modification order).
//! * Reuse is safe: a thread leaving round `g` saw `g + 1` by acquire from the last one's
//!   release, which followed its reset of `count`, so the thread's next addition comes after
//!   the reset in `count`'s modification order; and its next read of the generation is at
//!   least `g + 1` (coherence), so it cannot mistake the old round for its own.
//! * `on_last` runs in the last thread before the release: its writes are visible to all
//!   threads after the barrier.
//!
//! # Rounds: proof sketch
//! Collectives on one communicator are called in the same order by every rank, so each rank
//! numbers them `1, 2, …` alike (`seq`). A rank that contributes to round `s` writes entry
//! `s % DEPTH` of its own ring and knows how many reads that round has (`reduce`: 1 at a
//! non-root, `bcast`: `n - 1` at the root, `allreduce`: `n - 1`, `scan`: the ranks after it),
//! so the total `owed` of all its rounds in that entry. Each entry counts its `reads`.
//! * *No overwrite before read.* A rank writes the entry for round `s` only after the entry's
//!   `reads` reached what its earlier rounds there owe (acquire, pairing with each reader's
//!   release increment: the increments are read-modify-writes, so the last one seen carries
//!   every earlier reader's release), then stores the bytes and `seq = s` (release).
//! * *No read of the wrong round.* A reader of round `s` waits until the entry's `seq >= s`
//!   (acquire) and reads the bytes the release published. `seq` cannot be past `s` yet: the
//!   writer's round `s + DEPTH` waits for this very read, so the bytes are round `s`'s.
//! * *Progress.* A rank runs at most `DEPTH` rounds ahead of the readers of its entries.
//!   The ranks in the lowest round never wait for a later round: the writers they wait on
//!   are in the same round or past it, and what those writers wait for (reads of a round
//!   `DEPTH` earlier) is done by every rank that reached the lowest round.
//!
//! Contributions of at most `INLINE` bytes are kept in the entry's atomic words (relaxed:
//! `seq` and `reads` order them), longer ones in a vector behind a mutex that the protocol
//! keeps uncontended, so no unsafe code is needed. The loom model below checks a
//! reduce/bcast pattern through reuse of the entries (`DEPTH` 2 there).
#![forbid(unsafe_code)]

use std::sync::{Mutex, MutexGuard};

use crate::datatype::Buf;
use crate::op::Reduction;
use crate::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// A value alone on its cache lines (two, against adjacent-line prefetching).
#[repr(align(128))]
pub(super) struct Line<T>(pub T);

/// The barrier of the thread ranks of one process.
pub(super) struct Barrier {
    n: u32,
    count: Line<AtomicU32>,
    generation: Line<AtomicU64>,
}

impl Barrier {
    pub(super) fn new(n: u32) -> Barrier {
        Barrier {
            n,
            count: Line(AtomicU32::new(0)),
            generation: Line(AtomicU64::new(0)),
        }
    }

    /// Wait for all `n` threads; the last to arrive runs `on_last` before releasing the
    /// others.
    pub(super) fn wait(&self, on_last: impl FnOnce()) {
        let g = self.generation.0.load(Ordering::Acquire);
        if self.count.0.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.0.store(0, Ordering::Relaxed);
            on_last();
            self.generation.0.store(g + 1, Ordering::Release);
        } else {
            let mut spins = 0u32;
            while self.generation.0.load(Ordering::Acquire) == g {
                super::idle(&mut spins);
            }
        }
    }
}

/// Ranks each rank waits for in one round of `Flags` (all of them when `n <= FAN + 1`).
const FAN: u32 = 7;

/// The barrier of `MPI_Barrier` on the thread ranks of one process (dissemination over
/// arrival words; proof sketch above).
pub(super) struct Flags {
    n: u32,
    rounds: usize,
    /// Rank `i`'s word for round `k` is `words[i * rounds + k]`.
    words: Box<[Line<AtomicU64>]>,
}

impl Flags {
    pub(super) fn new(n: u32) -> Flags {
        let (mut rounds, mut reach) = (1usize, u64::from(FAN) + 1);
        while reach < u64::from(n) {
            rounds += 1;
            reach *= u64::from(FAN) + 1;
        }
        Flags {
            n,
            rounds,
            words: (0..n as usize * rounds)
                .map(|_| Line(AtomicU64::new(0)))
                .collect(),
        }
    }

    fn word(&self, rank: u32, round: usize) -> &AtomicU64 {
        &self.words[rank as usize * self.rounds + round].0
    }

    /// Wait until all `n` ranks called it (`rank`: the caller's).
    pub(super) fn wait(&self, rank: u32) {
        let e = self.word(rank, 0).load(Ordering::Relaxed) + 1;
        if self.rounds == 1 {
            // Every rank waits for every other (the words are `words[r]`).
            self.words[rank as usize].0.store(e, Ordering::Release);
            for (r, w) in self.words.iter().enumerate() {
                if r != rank as usize {
                    wait_at_least(&w.0, e);
                }
            }
            return;
        }
        let mut step = 1u64;
        for k in 0..self.rounds {
            self.word(rank, k).store(e, Ordering::Release);
            let n = u64::from(self.n);
            for j in 1..=u64::from(FAN).min(n - 1) {
                let from = (u64::from(rank) + n - j * step % n) % n;
                wait_at_least(self.word(from as u32, k), e);
            }
            step *= u64::from(FAN) + 1;
        }
    }

    /// Every word back to 0 (between regions, when no rank is inside `wait`).
    pub(super) fn reset(&self) {
        self.words
            .iter()
            .for_each(|w| w.0.store(0, Ordering::Relaxed));
    }
}

/// Bytes a contribution keeps in its entry's own words (no lock, no allocation); longer ones
/// go in the entry's vector.
const INLINE: usize = 64;
const WORDS: usize = INLINE / 8;
/// Entries per rank: how many rounds a rank may publish ahead of the readers of its entries
/// (two in the loom models, so that they reach the reuse of an entry).
const DEPTH: usize = if cfg!(loom) { 2 } else { 8 };

/// One rank's contribution to one round (`seq`), in the entry `seq % DEPTH` of the rank.
#[repr(align(128))]
struct Entry {
    /// The round the entry holds (stored with release once the bytes are in).
    seq: AtomicU64,
    /// Reads of the entry so far, over all its rounds (each reader adds one, release).
    reads: AtomicU64,
    /// The contribution's length in bytes.
    len: AtomicU64,
    /// A contribution of at most `INLINE` bytes.
    words: [AtomicU64; WORDS],
    /// A longer contribution.
    big: Mutex<Vec<u8>>,
}

/// What each rank keeps about its rounds (only its own thread touches it).
#[repr(align(128))]
struct Mine {
    seq: AtomicU64,
    /// Per entry of the rank: the reads its rounds published there so far are owed.
    owed: [AtomicU64; DEPTH],
}

/// The entries of the rounds.
pub(super) struct Rounds {
    n: u32,
    /// Rank `r`'s entries are `r * DEPTH ..`.
    entries: Box<[Entry]>,
    mine: Box<[Mine]>,
}

fn lock(m: &Mutex<Vec<u8>>) -> MutexGuard<'_, Vec<u8>> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn wait_at_least(a: &AtomicU64, v: u64) {
    let mut spins = 0u32;
    while a.load(Ordering::Acquire) < v {
        super::idle(&mut spins);
    }
}

/// Run `f` on `len` zeroed bytes: on the stack when they fit `INLINE`, else on the heap.
fn scratch<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    if len <= INLINE {
        f(&mut [0u8; INLINE][..len])
    } else {
        f(&mut vec![0u8; len])
    }
}

/// Copy as much of `src` as fits into the start of `dst`.
fn copy_prefix(dst: &mut [u8], src: &[u8]) {
    let k = src.len().min(dst.len());
    dst[..k].copy_from_slice(&src[..k]);
}

/// `acc = input op acc` over the bytes both have.
fn apply(red: &Reduction, input: &[u8], acc: &mut [u8]) {
    let k = input.len().min(acc.len());
    red.apply(&input[..k], &mut acc[..k]);
}

impl Rounds {
    pub(super) fn new(n: u32) -> Rounds {
        Rounds {
            n,
            entries: (0..n as usize * DEPTH)
                .map(|_| Entry {
                    seq: AtomicU64::new(0),
                    reads: AtomicU64::new(0),
                    len: AtomicU64::new(0),
                    words: std::array::from_fn(|_| AtomicU64::new(0)),
                    big: Mutex::new(Vec::new()),
                })
                .collect(),
            mine: (0..n)
                .map(|_| Mine {
                    seq: AtomicU64::new(0),
                    owed: std::array::from_fn(|_| AtomicU64::new(0)),
                })
                .collect(),
        }
    }

    /// Start `rank`'s next round: its number.
    fn begin(&self, rank: u32) -> u64 {
        let m = &self.mine[rank as usize];
        let seq = m.seq.load(Ordering::Relaxed) + 1;
        m.seq.store(seq, Ordering::Relaxed);
        seq
    }

    fn entry(&self, rank: u32, seq: u64) -> &Entry {
        &self.entries[rank as usize * DEPTH + (seq % DEPTH as u64) as usize]
    }

    /// Leave `len` bytes, which `fill` writes, in `rank`'s entry for round `seq`, for `reads`
    /// reads (none: nothing is left).
    fn publish(&self, rank: u32, seq: u64, reads: u64, len: usize, fill: impl FnOnce(&mut [u8])) {
        if reads == 0 {
            return;
        }
        let owed = &self.mine[rank as usize].owed[(seq % DEPTH as u64) as usize];
        let before = owed.load(Ordering::Relaxed);
        let e = self.entry(rank, seq);
        // The readers of the entry's earlier rounds are done with it.
        wait_at_least(&e.reads, before);
        owed.store(before + reads, Ordering::Relaxed);
        if len <= INLINE {
            let mut b = [0u8; INLINE];
            fill(&mut b[..len]);
            for (w, c) in e.words.iter().zip(b.chunks_exact(8)).take(len.div_ceil(8)) {
                let c: [u8; 8] = c.try_into().expect("chunks of 8");
                w.store(u64::from_ne_bytes(c), Ordering::Relaxed);
            }
        } else {
            let mut d = lock(&e.big);
            d.resize(len, 0);
            fill(&mut d);
        }
        e.len.store(len as u64, Ordering::Relaxed);
        e.seq.store(seq, Ordering::Release);
    }

    /// Run `f` on `rank`'s contribution to round `seq` once it is there, and count the read.
    fn read<R>(&self, rank: u32, seq: u64, f: impl FnOnce(&[u8]) -> R) -> R {
        let e = self.entry(rank, seq);
        wait_at_least(&e.seq, seq);
        let len = e.len.load(Ordering::Relaxed) as usize;
        let got = if len <= INLINE {
            let mut b = [0u8; INLINE];
            for (w, c) in e
                .words
                .iter()
                .zip(b.chunks_exact_mut(8))
                .take(len.div_ceil(8))
            {
                c.copy_from_slice(&w.load(Ordering::Relaxed).to_ne_bytes());
            }
            f(&b[..len])
        } else {
            f(&lock(&e.big))
        };
        e.reads.fetch_add(1, Ordering::Release);
        got
    }

    /// Forget every round (between regions, when no rank is inside one).
    pub(super) fn reset(&self) {
        for e in self.entries.iter() {
            e.seq.store(0, Ordering::Relaxed);
            e.reads.store(0, Ordering::Relaxed);
        }
        for m in self.mine.iter() {
            m.seq.store(0, Ordering::Relaxed);
            m.owed.iter().for_each(|o| o.store(0, Ordering::Relaxed));
        }
    }

    pub(super) fn bcast(&self, rank: u32, buf: &Buf, root: u32) {
        let seq = self.begin(rank);
        if rank == root {
            let reads = u64::from(self.n - 1);
            self.publish(rank, seq, reads, buf.len(), |d| buf.pack(0, d));
        } else {
            self.read(root, seq, |d| buf.unpack(0, &d[..d.len().min(buf.len())]));
        }
    }

    /// Into `acc`: the reduction of every rank's contribution in rank order, `own` standing
    /// for `rank`'s (which it need not read back).
    fn combine(&self, rank: u32, seq: u64, own: &[u8], red: &Reduction, acc: &mut [u8]) {
        let last = self.n - 1;
        if last == rank {
            copy_prefix(acc, own);
        } else {
            self.read(last, seq, |d| copy_prefix(acc, d));
        }
        for r in (0..last).rev() {
            if r == rank {
                apply(red, own, acc);
            } else {
                self.read(r, seq, |d| apply(red, d, acc));
            }
        }
    }

    pub(super) fn reduce(
        &self,
        rank: u32,
        send: Option<&Buf>,
        recv: &Buf,
        red: &Reduction,
        root: u32,
    ) {
        let seq = self.begin(rank);
        let send = send.unwrap_or(recv);
        if rank != root {
            self.publish(rank, seq, 1, send.len(), |d| send.pack(0, d));
            return;
        }
        scratch(send.len(), |own| {
            send.pack(0, own);
            scratch(own.len(), |acc| {
                self.combine(rank, seq, own, red, acc);
                recv.unpack(0, &acc[..acc.len().min(recv.len())]);
            })
        });
    }

    pub(super) fn allreduce(&self, rank: u32, send: Option<&Buf>, recv: &Buf, red: &Reduction) {
        let seq = self.begin(rank);
        let send = send.unwrap_or(recv);
        scratch(send.len(), |own| {
            send.pack(0, own);
            let reads = u64::from(self.n - 1);
            self.publish(rank, seq, reads, own.len(), |d| d.copy_from_slice(own));
            scratch(own.len(), |acc| {
                self.combine(rank, seq, own, red, acc);
                recv.unpack(0, &acc[..acc.len().min(recv.len())]);
            })
        });
    }

    /// `MPI_Scan` (`exclusive`: `MPI_Exscan`, whose rank 0 leaves `recv` alone). Rank `j`'s
    /// contribution is read by the ranks after it.
    pub(super) fn scan(
        &self,
        rank: u32,
        send: Option<&Buf>,
        recv: &Buf,
        red: &Reduction,
        exclusive: bool,
    ) {
        let seq = self.begin(rank);
        let send = send.unwrap_or(recv);
        scratch(send.len(), |own| {
            send.pack(0, own);
            let reads = u64::from(self.n - 1 - rank);
            self.publish(rank, seq, reads, own.len(), |d| d.copy_from_slice(own));
            let top = if exclusive { rank } else { rank + 1 };
            if top == 0 {
                return;
            }
            scratch(own.len(), |acc| {
                if top - 1 == rank {
                    copy_prefix(acc, own);
                } else {
                    self.read(top - 1, seq, |d| copy_prefix(acc, d));
                }
                for r in (0..top - 1).rev() {
                    self.read(r, seq, |d| apply(red, d, acc));
                }
                recv.unpack(0, &acc[..acc.len().min(recv.len())]);
            })
        });
    }

    /// `MPI_Gather`: `recv` (at the root) holds one block per rank; `send` `None` is the
    /// root's `MPI_IN_PLACE`.
    pub(super) fn gather(&self, rank: u32, send: Option<&Buf>, recv: &Buf, root: u32) {
        let seq = self.begin(rank);
        if rank != root {
            if let Some(s) = send {
                self.publish(rank, seq, 1, s.len(), |d| s.pack(0, d));
            }
            return;
        }
        let b = recv.len() / self.n as usize;
        for r in 0..self.n {
            let at = r as usize * b;
            if r != rank {
                self.read(r, seq, |d| recv.unpack(at, &d[..d.len().min(b)]));
            } else if let Some(s) = send {
                scratch(s.len().min(b), |v| {
                    s.pack(0, v);
                    recv.unpack(at, v);
                });
            }
        }
    }

    /// `MPI_Allgather`: `send` `None` is `MPI_IN_PLACE` (the rank's block of `recv`); a rank
    /// with a send buffer reads its own block back too.
    pub(super) fn allgather(&self, rank: u32, send: Option<&Buf>, recv: &Buf) {
        let seq = self.begin(rank);
        let b = recv.len() / self.n as usize;
        let reads = u64::from(self.n - 1) + u64::from(send.is_some());
        let len = send.map_or(b, Buf::len);
        self.publish(rank, seq, reads, len, |d| match send {
            Some(s) => s.pack(0, d),
            None => recv.pack(rank as usize * b, d),
        });
        for r in 0..self.n {
            if r != rank || send.is_some() {
                let at = r as usize * b;
                self.read(r, seq, |d| recv.unpack(at, &d[..d.len().min(b)]));
            }
        }
    }

    /// `MPI_Scatter`: `send` (at the root) holds one block per rank; `recv` `None` is the
    /// root's `MPI_IN_PLACE`.
    pub(super) fn scatter(&self, rank: u32, send: &Buf, recv: Option<&Buf>, root: u32) {
        let seq = self.begin(rank);
        let n = self.n as usize;
        if rank == root {
            let reads = u64::from(self.n - 1);
            self.publish(rank, seq, reads, send.len(), |d| send.pack(0, d));
            if let Some(r) = recv {
                let b = send.len() / n;
                scratch(b.min(r.len()), |v| {
                    send.pack(rank as usize * b, v);
                    r.unpack(0, v);
                });
            }
            return;
        }
        self.read(root, seq, |d| {
            let b = d.len() / n;
            if let Some(r) = recv {
                let at = rank as usize * b;
                r.unpack(0, &d[at..at + b.min(r.len())]);
            }
        });
    }

    /// `MPI_Alltoall`: `send` `None` is `MPI_IN_PLACE` (the blocks are taken from `recv`);
    /// every rank reads every contribution, its own included.
    pub(super) fn alltoall(&self, rank: u32, send: Option<&Buf>, recv: &Buf) {
        let seq = self.begin(rank);
        let n = self.n as usize;
        let send = send.unwrap_or(recv);
        self.publish(rank, seq, u64::from(self.n), send.len(), |d| {
            send.pack(0, d)
        });
        let b = recv.len() / n;
        for r in 0..self.n {
            self.read(r, seq, |d| {
                let sb = d.len() / n;
                let at = rank as usize * sb;
                recv.unpack(r as usize * b, &d[at..at + sb.min(b)]);
            });
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::atomic::AtomicU32 as Counter;
    use loom::sync::Arc;

    /// Two threads pass the barrier twice; what each wrote before a crossing is seen by the
    /// other after it, and `on_last` runs once per crossing, before anyone leaves.
    #[test]
    fn loom_barrier_reuse_and_visibility() {
        crate::sync::loom_model(|| {
            let b = Arc::new(Barrier::new(2));
            let cells: Arc<[Counter; 2]> = Arc::new([Counter::new(0), Counter::new(0)]);
            let lasts = Arc::new(Counter::new(0));
            let t = {
                let (b, cells, lasts) = (b.clone(), cells.clone(), lasts.clone());
                loom::thread::spawn(move || {
                    for round in 1..=2 {
                        cells[1].store(round, Ordering::Relaxed);
                        b.wait(|| {
                            lasts.fetch_add(1, Ordering::Relaxed);
                        });
                        assert!(cells[0].load(Ordering::Relaxed) >= round);
                        assert_eq!(lasts.load(Ordering::Relaxed), round);
                    }
                })
            };
            for round in 1..=2 {
                cells[0].store(round, Ordering::Relaxed);
                b.wait(|| {
                    lasts.fetch_add(1, Ordering::Relaxed);
                });
                assert!(cells[1].load(Ordering::Relaxed) >= round);
                assert!(lasts.load(Ordering::Relaxed) >= round);
            }
            t.join().unwrap();
            assert_eq!(lasts.load(Ordering::Relaxed), 2);
        });
    }

    /// Two ranks pass a `Flags` barrier (one round) twice, so its words are reused; what each
    /// wrote before a crossing is seen by the other after it. (A model of two rounds needs
    /// three spinning threads, which exceed loom's branch limit even crossing once: the unit
    /// test `barrier_holds_every_rank_back_at_any_size` runs 9 and 20 ranks in two rounds.)
    #[test]
    fn loom_flags_reuse_and_visibility() {
        crate::sync::loom_model(|| {
            let b = Arc::new(Flags::new(2));
            let cells: Arc<[Counter; 2]> = Arc::new([Counter::new(0), Counter::new(0)]);
            let run = |b: Arc<Flags>, cells: Arc<[Counter; 2]>, me: usize| {
                for round in 1..=2 {
                    cells[me].store(round, Ordering::Relaxed);
                    b.wait(me as u32);
                    assert!(cells[1 - me].load(Ordering::Relaxed) >= round);
                }
            };
            let t = {
                let (b, cells) = (b.clone(), cells.clone());
                loom::thread::spawn(move || run(b, cells, 1))
            };
            run(b, cells, 0);
            t.join().unwrap();
        });
    }

    /// Rank 1 contributes to three rounds in a row without waiting for rank 0 (as to three
    /// reduces at root 0): round 3 reuses round 1's entry (of its two) and must wait for
    /// round 1's read; rank 0 reads exactly the bytes of each round.
    #[test]
    fn loom_rounds_reuse_an_entry() {
        crate::sync::loom_model(|| {
            let r = Arc::new(Rounds::new(2));
            let t = {
                let r = r.clone();
                loom::thread::spawn(move || {
                    for k in 1..=3u8 {
                        let s = r.begin(1);
                        r.publish(1, s, 1, 4, |d| d.fill(10 + k));
                    }
                })
            };
            for k in 1..=3u8 {
                let s = r.begin(0);
                assert_eq!(r.read(1, s, |d| d.to_vec()), vec![10 + k; 4]);
            }
            t.join().unwrap();
        });
    }
}
