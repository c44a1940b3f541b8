//! The pinned host blocks a CUDA stream stages device buffers through (`cuda::CudaQueue`,
//! `api/cuda_stage.rs`): bookkeeping only, no CUDA call (the queue allocates and frees).
//!
//! `cudaMallocHost` is slow — about 0.7 ms for 8 bytes, measured on an H200 machine — so
//! small blocks (up to `SMALL_MAX`) are carved from `CHUNK`-byte allocations in power-of-two
//! classes, one free list per class; larger blocks are allocated to size and reused best
//! fit. A block handed back (`hold`) is tagged with the sequence number of the last task
//! queued on the stream, and is free again once a task with a larger number has started
//! (`reclaim`): in stream order, the copies that used it ran before that task.

use std::collections::VecDeque;

/// A pinned host block.
#[derive(Debug, PartialEq, Eq)]
pub struct Pinned {
    pub addr: usize,
    pub len: usize,
}

/// The smallest class.
const SMALL_MIN: usize = 64;
/// The largest carved class; larger blocks are allocations of their own.
pub const SMALL_MAX: usize = 64 << 10;
/// Size of an allocation small blocks are carved from.
pub const CHUNK: usize = 256 << 10;
/// Classes 64 B, 128 B, ... 64 KiB.
const CLASSES: usize = (SMALL_MAX / SMALL_MIN).trailing_zeros() as usize + 1;
/// Bytes of free large blocks kept when the stream is idle (`settle`).
const KEEP_LARGE: usize = 64 << 20;

/// The class of a block of `len` bytes, `None` when it is large.
fn class_of(len: usize) -> Option<usize> {
    (len <= SMALL_MAX)
        .then(|| (len.max(SMALL_MIN).next_power_of_two() / SMALL_MIN).trailing_zeros() as usize)
}

fn class_len(class: usize) -> usize {
    SMALL_MIN << class
}

#[derive(Default)]
pub struct Pool {
    /// Free small blocks (addresses), by class.
    small: [Vec<usize>; CLASSES],
    /// Free large blocks.
    large: Vec<Pinned>,
    /// The allocations small blocks were carved from.
    chunks: Vec<usize>,
    /// Blocks handed back, with the sequence number of the last task queued then.
    held: VecDeque<(u64, Vec<Pinned>)>,
    /// Sequence number of the last task queued (tasks are numbered from 1).
    pub queued: u64,
}

impl Pool {
    /// Free the held blocks of which a later task has started (`started`: the largest
    /// sequence number that started).
    pub fn reclaim(&mut self, started: u64) {
        while self.held.front().is_some_and(|(seq, _)| *seq < started) {
            let (_, blocks) = self.held.pop_front().expect("front checked");
            blocks.into_iter().for_each(|b| self.put(b));
        }
    }

    fn put(&mut self, b: Pinned) {
        match class_of(b.len) {
            Some(c) => self.small[c].push(b.addr),
            None => self.large.push(b),
        }
    }

    /// A free block of at least `len` bytes, if there is one.
    pub fn take(&mut self, len: usize) -> Option<Pinned> {
        if let Some(c) = class_of(len) {
            let addr = self.small[c].pop()?;
            return Some(Pinned {
                addr,
                len: class_len(c),
            });
        }
        let i = (0..self.large.len())
            .filter(|&i| self.large[i].len >= len)
            .min_by_key(|&i| self.large[i].len)?;
        Some(self.large.swap_remove(i))
    }

    /// How many bytes to allocate for a block of `len` bytes the pool lacks: a chunk when
    /// the block is small.
    pub fn allocation_for(len: usize) -> usize {
        if class_of(len).is_some() {
            CHUNK
        } else {
            len
        }
    }

    /// A new allocation of `allocation_for(len)` bytes at `addr`: a block of `len` bytes
    /// from it (a small one carved, the others of its class free).
    pub fn add(&mut self, addr: usize, len: usize) -> Pinned {
        let Some(c) = class_of(len) else {
            return Pinned { addr, len };
        };
        self.chunks.push(addr);
        let size = class_len(c);
        self.small[c].extend((1..CHUNK / size).map(|i| addr + i * size));
        Pinned { addr, len: size }
    }

    /// Blocks used by the work queued so far.
    pub fn hold(&mut self, blocks: Vec<Pinned>) {
        if !blocks.is_empty() {
            let seq = self.queued;
            self.held.push_back((seq, blocks));
        }
    }

    /// The stream ran everything queued: every held block is free. Returns the free large
    /// blocks beyond `KEEP_LARGE` bytes (the largest kept), for the caller to free.
    pub fn settle(&mut self) -> Vec<usize> {
        self.reclaim(u64::MAX);
        self.large.sort_by_key(|b| std::cmp::Reverse(b.len));
        let mut kept = 0;
        let mut excess = Vec::new();
        self.large.retain(|b| {
            kept += b.len;
            let keep = kept <= KEEP_LARGE;
            if !keep {
                excess.push(b.addr);
            }
            keep
        });
        excess
    }

    /// Every allocation the pool holds, for the caller to free when the stream goes (a
    /// large block still used by an operation never completed is not among them).
    pub fn allocations(&mut self) -> Vec<usize> {
        self.reclaim(u64::MAX);
        let large = self.large.drain(..).map(|b| b.addr);
        let all: Vec<usize> = self.chunks.drain(..).chain(large).collect();
        self.small.iter_mut().for_each(Vec::clear);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_blocks_are_carved_by_class() {
        assert_eq!(class_of(1), Some(0));
        assert_eq!(class_of(64), Some(0));
        assert_eq!(class_of(65), Some(1));
        assert_eq!(class_of(SMALL_MAX), Some(CLASSES - 1));
        assert_eq!(class_of(SMALL_MAX + 1), None);
        let mut p = Pool::default();
        assert_eq!(p.take(8), None);
        assert_eq!(Pool::allocation_for(8), CHUNK);
        let b = p.add(0x10000, 8);
        assert_eq!(
            b,
            Pinned {
                addr: 0x10000,
                len: 64
            }
        );
        // The rest of the chunk is free in that class, no two blocks alike.
        let mut seen = vec![b.addr];
        while let Some(x) = p.take(50) {
            assert_eq!(x.len, 64);
            seen.push(x.addr);
        }
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), CHUNK / 64);
        assert!(seen
            .iter()
            .all(|&a| (0x10000..0x10000 + CHUNK).contains(&a)));
        assert_eq!(p.take(100), None, "another class has nothing yet");
    }

    #[test]
    fn held_blocks_are_free_after_a_later_task_started() {
        let mut p = Pool::default();
        p.queued = 3; // tasks 1..3 queued; the operation's is 3
        p.hold(vec![Pinned {
            addr: 0x1000,
            len: 1 << 20,
        }]);
        p.queued = 4;
        p.hold(vec![Pinned {
            addr: 0x2000,
            len: 1 << 20,
        }]);
        p.reclaim(3); // task 3 started: its own block is still in use
        assert_eq!(p.take(1 << 20), None);
        p.reclaim(4);
        assert_eq!(
            p.take(1 << 20),
            Some(Pinned {
                addr: 0x1000,
                len: 1 << 20
            })
        );
        assert_eq!(p.take(1), None);
        assert!(p.settle().is_empty());
        assert_eq!(p.take(100), None);
        assert_eq!(
            p.take(1 << 19),
            Some(Pinned {
                addr: 0x2000,
                len: 1 << 20
            })
        );
    }

    #[test]
    fn settle_keeps_a_bounded_amount_and_drop_frees_all() {
        let mut p = Pool::default();
        let big = 40 << 20;
        p.hold(vec![
            Pinned { addr: 1, len: big },
            Pinned {
                addr: 2,
                len: big + 1,
            },
        ]);
        assert_eq!(
            p.settle(),
            vec![1],
            "the larger block is kept, the other freed"
        );
        let small = p.add(0x100000, 100);
        p.hold(vec![small]);
        let mut all = p.allocations();
        all.sort();
        assert_eq!(all, vec![2, 0x100000]);
    }
}
