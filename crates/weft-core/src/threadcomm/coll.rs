//! Collectives made for the thread ranks of one process: a barrier on two shared cache lines,
//! and rounds in which each rank leaves its contribution in its own cache-line slot for the
//! ranks that read it.
//!
//! # The barrier: proof sketch
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
//! numbers them `1, 2, …` alike (`seq`) and knows how many *reads* each round has (a rank
//! reading the slots it needs counts once: `reduce` 1, `bcast` `n - 1`, `allreduce` `n`), and
//! so the total `expected` of all earlier rounds. A rank writes its slot for round `s` only
//! after the shared `reads` counter reached the reads of all rounds before `s` (so nobody
//! still reads its slot's older contents), then publishes `seq = s` (release). A reader of
//! round `s` waits until each slot it needs has `seq >= s` (acquire) — it cannot be `> s`,
//! since the writer would first wait for this very read — reads, then adds one to `reads`
//! (release; the writer's acquire load pairs with it). The slots' bytes are behind mutexes
//! that the protocol keeps uncontended, so no unsafe code is needed.
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

/// One rank's contribution to a round.
#[repr(align(128))]
struct Slot {
    seq: AtomicU64,
    data: Mutex<Vec<u8>>,
}

/// What each rank keeps about the rounds (only its own thread touches it).
#[repr(align(128))]
struct Mine {
    seq: AtomicU64,
    expected: AtomicU64,
}

/// The slots of the rounds.
pub(super) struct Rounds {
    n: u32,
    slots: Box<[Slot]>,
    mine: Box<[Mine]>,
    reads: Line<AtomicU64>,
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

impl Rounds {
    pub(super) fn new(n: u32) -> Rounds {
        Rounds {
            n,
            slots: (0..n)
                .map(|_| Slot {
                    seq: AtomicU64::new(0),
                    data: Mutex::new(Vec::new()),
                })
                .collect(),
            mine: (0..n)
                .map(|_| Mine {
                    seq: AtomicU64::new(0),
                    expected: AtomicU64::new(0),
                })
                .collect(),
            reads: Line(AtomicU64::new(0)),
        }
    }

    /// Start `rank`'s next round, which will have `reads` reads: its number.
    fn begin(&self, rank: u32, reads: u64) -> (u64, u64) {
        let m = &self.mine[rank as usize];
        let seq = m.seq.load(Ordering::Relaxed) + 1;
        m.seq.store(seq, Ordering::Relaxed);
        let before = m.expected.load(Ordering::Relaxed);
        m.expected.store(before + reads, Ordering::Relaxed);
        (seq, before)
    }

    /// Leave `buf`'s bytes in `rank`'s slot for round `seq`.
    fn publish(&self, rank: u32, seq: u64, reads_before: u64, buf: &Buf) {
        wait_at_least(&self.reads.0, reads_before);
        let slot = &self.slots[rank as usize];
        {
            let mut d = lock(&slot.data);
            d.resize(buf.len(), 0);
            buf.pack(0, &mut d);
        }
        slot.seq.store(seq, Ordering::Release);
    }

    /// `rank`'s slot once it holds round `seq`.
    fn read(&self, rank: u32, seq: u64) -> MutexGuard<'_, Vec<u8>> {
        let slot = &self.slots[rank as usize];
        wait_at_least(&slot.seq, seq);
        lock(&slot.data)
    }

    fn done_reading(&self) {
        self.reads.0.fetch_add(1, Ordering::Release);
    }

    /// Forget every round (between regions, when no rank is inside one).
    pub(super) fn reset(&self) {
        for s in self.slots.iter() {
            s.seq.store(0, Ordering::Relaxed);
        }
        for m in self.mine.iter() {
            m.seq.store(0, Ordering::Relaxed);
            m.expected.store(0, Ordering::Relaxed);
        }
        self.reads.0.store(0, Ordering::Relaxed);
    }

    pub(super) fn bcast(&self, rank: u32, buf: &Buf, root: u32) {
        let (seq, before) = self.begin(rank, u64::from(self.n - 1));
        if rank == root {
            self.publish(rank, seq, before, buf);
        } else {
            {
                let d = self.read(root, seq);
                buf.unpack(0, &d[..d.len().min(buf.len())]);
            }
            self.done_reading();
        }
    }

    /// The reduction of every rank's contribution in rank order, `own` standing for
    /// `rank`'s (which it did not publish).
    fn combine(&self, rank: u32, seq: u64, own: &[u8], red: &Reduction) -> Vec<u8> {
        let last = self.n - 1;
        let mut acc = if last == rank {
            own.to_vec()
        } else {
            self.read(last, seq).clone()
        };
        for r in (0..last).rev() {
            if r == rank {
                red.apply(own, &mut acc);
            } else {
                let d = self.read(r, seq);
                red.apply(&d, &mut acc);
            }
        }
        acc
    }

    pub(super) fn reduce(
        &self,
        rank: u32,
        send: Option<&Buf>,
        recv: &Buf,
        red: &Reduction,
        root: u32,
    ) {
        let (seq, before) = self.begin(rank, 1);
        let send = send.unwrap_or(recv);
        if rank != root {
            self.publish(rank, seq, before, send);
            return;
        }
        let mut own = vec![0u8; send.len()];
        send.pack(0, &mut own);
        let acc = self.combine(rank, seq, &own, red);
        self.done_reading();
        recv.unpack(0, &acc[..acc.len().min(recv.len())]);
    }

    pub(super) fn allreduce(&self, rank: u32, send: Option<&Buf>, recv: &Buf, red: &Reduction) {
        let (seq, before) = self.begin(rank, u64::from(self.n));
        let send = send.unwrap_or(recv);
        let mut own = vec![0u8; send.len()];
        send.pack(0, &mut own);
        self.publish(rank, seq, before, send);
        let acc = self.combine(rank, seq, &own, red);
        self.done_reading();
        recv.unpack(0, &acc[..acc.len().min(recv.len())]);
    }
}

impl Rounds {
    /// Leave `bytes` in `rank`'s slot for round `seq`.
    fn publish_bytes(
        &self,
        rank: u32,
        seq: u64,
        reads_before: u64,
        fill: impl FnOnce(&mut Vec<u8>),
    ) {
        wait_at_least(&self.reads.0, reads_before);
        let slot = &self.slots[rank as usize];
        fill(&mut lock(&slot.data));
        slot.seq.store(seq, Ordering::Release);
    }

    /// `MPI_Scan` (`exclusive`: `MPI_Exscan`, whose rank 0 leaves `recv` alone).
    pub(super) fn scan(
        &self,
        rank: u32,
        send: Option<&Buf>,
        recv: &Buf,
        red: &Reduction,
        exclusive: bool,
    ) {
        let (seq, before) = self.begin(rank, u64::from(self.n));
        let send = send.unwrap_or(recv);
        let mut own = vec![0u8; send.len()];
        send.pack(0, &mut own);
        let mine = own.clone();
        self.publish_bytes(rank, seq, before, |d| *d = mine);
        let top = if exclusive { rank } else { rank + 1 };
        if top > 0 {
            let mut acc = if top - 1 == rank {
                own
            } else {
                self.read(top - 1, seq).clone()
            };
            for r in (0..top - 1).rev() {
                red.apply(&self.read(r, seq), &mut acc);
            }
            recv.unpack(0, &acc[..acc.len().min(recv.len())]);
        }
        self.done_reading();
    }

    /// `MPI_Gather`: `recv` (at the root) holds one block per rank; `send` `None` is the
    /// root's `MPI_IN_PLACE`.
    pub(super) fn gather(&self, rank: u32, send: Option<&Buf>, recv: &Buf, root: u32) {
        let (seq, before) = self.begin(rank, 1);
        if rank != root {
            if let Some(s) = send {
                self.publish(rank, seq, before, s);
            }
            return;
        }
        let b = recv.len() / self.n as usize;
        for r in 0..self.n {
            if r == rank {
                if let Some(s) = send {
                    let mut v = vec![0u8; s.len().min(b)];
                    s.pack(0, &mut v);
                    recv.unpack(r as usize * b, &v);
                }
            } else {
                let d = self.read(r, seq);
                recv.unpack(r as usize * b, &d[..d.len().min(b)]);
            }
        }
        self.done_reading();
    }

    /// `MPI_Allgather`: `send` `None` is `MPI_IN_PLACE` (the rank's block of `recv`).
    pub(super) fn allgather(&self, rank: u32, send: Option<&Buf>, recv: &Buf) {
        let (seq, before) = self.begin(rank, u64::from(self.n));
        let b = recv.len() / self.n as usize;
        self.publish_bytes(rank, seq, before, |d| match send {
            Some(s) => {
                d.resize(s.len(), 0);
                s.pack(0, d);
            }
            None => {
                d.resize(b, 0);
                recv.pack(rank as usize * b, d);
            }
        });
        for r in 0..self.n {
            if r != rank || send.is_some() {
                let d = self.read(r, seq);
                recv.unpack(r as usize * b, &d[..d.len().min(b)]);
            }
        }
        self.done_reading();
    }

    /// `MPI_Scatter`: `send` (at the root) holds one block per rank; `recv` `None` is the
    /// root's `MPI_IN_PLACE`.
    pub(super) fn scatter(&self, rank: u32, send: &Buf, recv: Option<&Buf>, root: u32) {
        let (seq, before) = self.begin(rank, u64::from(self.n - 1));
        if rank == root {
            self.publish(rank, seq, before, send);
            if let Some(r) = recv {
                let b = send.len() / self.n as usize;
                let mut v = vec![0u8; b.min(r.len())];
                send.pack(rank as usize * b, &mut v);
                r.unpack(0, &v);
            }
            return;
        }
        {
            let d = self.read(root, seq);
            let b = d.len() / self.n as usize;
            if let Some(r) = recv {
                let at = rank as usize * b;
                r.unpack(0, &d[at..at + b.min(r.len())]);
            }
        }
        self.done_reading();
    }

    /// `MPI_Alltoall`: `send` `None` is `MPI_IN_PLACE` (the blocks are taken from `recv`).
    pub(super) fn alltoall(&self, rank: u32, send: Option<&Buf>, recv: &Buf) {
        let (seq, before) = self.begin(rank, u64::from(self.n));
        let send = send.unwrap_or(recv);
        self.publish(rank, seq, before, send);
        let b = recv.len() / self.n as usize;
        for r in 0..self.n {
            let d = self.read(r, seq);
            let sb = d.len() / self.n as usize;
            let at = rank as usize * sb;
            recv.unpack(r as usize * b, &d[at..at + sb.min(b)]);
        }
        self.done_reading();
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
}
