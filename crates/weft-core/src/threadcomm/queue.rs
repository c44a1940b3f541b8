//! The lock-free multi-producer queue of one thread rank: every sender pushes, the rank (or a
//! thread progressing it, see `p2p`) takes everything at once.
//!
//! A push links a heap node onto the head of a singly-linked stack with one compare-and-swap;
//! `take_all` swaps the head for null and reverses the chain it got, so the taker sees the
//! messages in push order.
//!
//! # Proof sketch
//! * *Ownership.* A node is owned by its pusher until its CAS succeeds, then by the list; the
//!   swap in `take_all` moves the whole chain from the list to exactly one taker (a swap hands
//!   each head value to one caller), so no node is read after it was freed or taken twice,
//!   even with several takers.
//! * *Visibility.* The pusher writes the node (value and `next`) before its release CAS; the
//!   taker's acquire swap reads the last successful CAS, and every earlier CAS on the head is
//!   before it in the head's modification order (a release sequence: each later CAS is a
//!   read-modify-write), so all nodes of the chain are visible to the taker.
//! * *Order.* CASes on one location are totally ordered; a node's `next` is the head it
//!   replaced, so the chain lists the pushes since the previous swap newest first, and its
//!   reversal lists them oldest first. Two pushes by one thread are in program order, so one
//!   sender's messages are taken in the order it sent them (MPI's non-overtaking rule).
//! * *Progress.* A CAS fails only when another push or a swap succeeded meanwhile
//!   (lock-free); a swap never fails.
//!
//! The loom model below checks these for two producers and a taker that races them.

use std::ptr;

use crate::sync::atomic::{AtomicPtr, Ordering};

struct Node<T> {
    value: T,
    next: *mut Node<T>,
}

/// A multi-producer queue taken all at once.
pub struct Mpsc<T> {
    head: AtomicPtr<Node<T>>,
}

// SAFETY: values move between threads through the queue (so `T: Send`); the nodes are only
// reached through the atomic head, whose protocol (module comment) gives each node one owner.
unsafe impl<T: Send> Send for Mpsc<T> {}
// SAFETY: as above; `&Mpsc` only offers `push` and `take_all`, both safe to race.
unsafe impl<T: Send> Sync for Mpsc<T> {}

impl<T> Default for Mpsc<T> {
    fn default() -> Self {
        Mpsc::new()
    }
}

impl<T> Mpsc<T> {
    pub fn new() -> Mpsc<T> {
        Mpsc {
            head: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Add `value` (lock-free).
    pub fn push(&self, value: T) {
        let node = Box::into_raw(Box::new(Node {
            value,
            next: ptr::null_mut(),
        }));
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            // SAFETY: `node` is ours until the CAS below publishes it.
            unsafe { (*node).next = head };
            match self
                .head
                .compare_exchange_weak(head, node, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => head = now,
            }
        }
    }

    /// Whether nothing is queued (a hint: a push may land right after).
    pub fn is_empty(&self) -> bool {
        self.head.load(Ordering::Relaxed).is_null()
    }

    /// Move everything queued onto the end of `out`, oldest first. Returns how many.
    pub fn take_all(&self, out: &mut std::collections::VecDeque<T>) -> usize {
        if self.is_empty() {
            return 0;
        }
        let mut p = self.head.swap(ptr::null_mut(), Ordering::Acquire);
        let start = out.len();
        while !p.is_null() {
            // The swap made this chain ours alone (module comment), and the acquire made its nodes'
            // contents visible.
            // SAFETY: each node is freed once, here.
            let node = unsafe { Box::from_raw(p) };
            p = node.next;
            out.push_back(node.value);
        }
        // The chain was newest first.
        out.make_contiguous()[start..].reverse();
        out.len() - start
    }
}

impl<T> Drop for Mpsc<T> {
    fn drop(&mut self) {
        let mut rest = std::collections::VecDeque::new();
        self.take_all(&mut rest);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;
    use std::collections::VecDeque;

    /// Two producers push two values each while the taker takes twice, then once more after
    /// joining them: every value arrives once, each producer's in push order.
    #[test]
    fn loom_mpsc_order_and_ownership() {
        crate::sync::loom_model(|| {
            let q = Arc::new(Mpsc::new());
            let producers: Vec<_> = (0..2u32)
                .map(|p| {
                    let q = q.clone();
                    loom::thread::spawn(move || {
                        q.push((p, 0u32));
                        q.push((p, 1u32));
                    })
                })
                .collect();
            let mut got = VecDeque::new();
            q.take_all(&mut got);
            q.take_all(&mut got);
            for t in producers {
                t.join().unwrap();
            }
            q.take_all(&mut got);
            assert_eq!(got.len(), 4);
            for p in 0..2 {
                let seq: Vec<u32> = got.iter().filter(|v| v.0 == p).map(|v| v.1).collect();
                assert_eq!(seq, vec![0, 1]);
            }
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::sync::Arc;

    #[test]
    fn fifo_per_producer_under_threads() {
        let q = Arc::new(Mpsc::new());
        let producers: Vec<_> = (0..4u32)
            .map(|p| {
                let q = q.clone();
                std::thread::spawn(move || (0..1000u32).for_each(|i| q.push((p, i))))
            })
            .collect();
        let mut got = VecDeque::new();
        while got.len() < 4000 {
            q.take_all(&mut got);
        }
        producers.into_iter().for_each(|t| t.join().unwrap());
        for p in 0..4 {
            let seq: Vec<u32> = got.iter().filter(|v| v.0 == p).map(|v| v.1).collect();
            assert_eq!(seq, (0..1000).collect::<Vec<_>>());
        }
        assert!(q.is_empty());
    }
}
