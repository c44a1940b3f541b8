//! The slot of one sender/receiver pair of thread ranks of one process: a small message
//! handed over as one line that only the two of them touch, without the receiver's queue.
//!
//! The sender (`put`) uses the slot when it is free and none of its messages to this
//! receiver waits in the receiver's queue (`queued` is 0); otherwise it counts the message in
//! `queued` (`enqueue`) and pushes it onto the queue. The receiver takes the slot (`take`)
//! when it looks for the sender's messages, and, before it handles a counted message it took
//! off the queue, it takes the slot first, then uncounts the message (`dequeue`).
//!
//! # Proof sketch
//! * *One owner of the bytes.* `full` is 0 or 1. Only the sender stores 1, after it loaded 0
//!   (acquire); only the receiver stores 0, after it loaded 1 (acquire) and read the bytes. The
//!   receiver's reads happen before its release store of 0, which the sender's acquire load
//!   reads before it writes again, so a read never sees a later message's bytes; the
//!   sender's writes happen before its release store of 1, so a receiver that loaded 1 reads
//!   them all.
//! * *Non-overtaking.* A sender's messages to one receiver are taken in send order. A slot
//!   message is put only while `queued` is 0, so every counted message sent before it was
//!   dequeued already, by the receiver, after the receiver handled it (release decrement,
//!   acquire load by the sender): the slot message comes after them. A counted message `m`
//!   sent while the slot held `s` comes after `s`, and the slot cannot hold a later message
//!   before `m` is dequeued (`queued > 0` until then); the receiver took `m` off the queue by
//!   an acquire that synchronises with the push, which followed the store of `s`, so when it
//!   takes the slot before handling `m` it finds `s` (or finds it empty, `s` being taken
//!   already): `s` is handled first. Two counted messages keep the queue's order.
//! * *Progress.* Neither side waits for the other: a full slot or a counted message sends
//!   the next message through the queue.
//!
//! The bytes are atomic words (relaxed: `full` orders them), so no unsafe code is needed. The
//! loom model below checks the order of three messages racing a receiver.
#![forbid(unsafe_code)]

use crate::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Largest message a slot carries.
pub const SLOT_BYTES: usize = 32;
const WORDS: usize = SLOT_BYTES / 8;

/// One pair's slot (the receiver's `p2p::Mailbox` keeps one per sender of its process).
pub(super) struct Pair {
    full: AtomicU32,
    /// The sender's messages in the receiver's queue, not yet dequeued.
    queued: AtomicU32,
    tag: AtomicU32,
    len: AtomicU32,
    words: [AtomicU64; WORDS],
}

/// A message taken from a slot.
pub(super) struct Taken {
    pub tag: i32,
    pub len: usize,
    pub bytes: [u8; SLOT_BYTES],
}

impl Default for Pair {
    fn default() -> Self {
        Pair {
            full: AtomicU32::new(0),
            queued: AtomicU32::new(0),
            tag: AtomicU32::new(0),
            len: AtomicU32::new(0),
            words: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl Pair {
    /// By the sender: hand over `bytes` (at most `SLOT_BYTES`) with `tag` if the slot is
    /// free and no message of the sender is queued; whether it did.
    pub fn put(&self, tag: i32, bytes: &[u8]) -> bool {
        if self.queued.load(Ordering::Acquire) != 0 || self.full.load(Ordering::Acquire) != 0 {
            return false;
        }
        self.tag.store(tag as u32, Ordering::Relaxed);
        self.len.store(bytes.len() as u32, Ordering::Relaxed);
        for (w, chunk) in self.words.iter().zip(bytes.chunks(8)) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            w.store(u64::from_ne_bytes(b), Ordering::Relaxed);
        }
        self.full.store(1, Ordering::Release);
        true
    }

    /// By the sender, before it pushes a message onto the receiver's queue.
    pub fn enqueue(&self) {
        self.queued.fetch_add(1, Ordering::Relaxed);
    }

    /// By the receiver, after it handled a message `enqueue` counted.
    pub fn dequeue(&self) {
        self.queued.fetch_sub(1, Ordering::Release);
    }

    /// By the receiver: whether a message is in the slot (a hint for polling; `take`
    /// decides).
    pub fn has_message(&self) -> bool {
        self.full.load(Ordering::Relaxed) != 0
    }

    /// By the receiver: the slot's message, if one is there (the slot is free again).
    pub fn take(&self) -> Option<Taken> {
        if self.full.load(Ordering::Acquire) == 0 {
            return None;
        }
        let len = self.len.load(Ordering::Relaxed) as usize;
        let mut bytes = [0u8; SLOT_BYTES];
        for (w, chunk) in self.words.iter().zip(bytes[..len].chunks_mut(8)) {
            let b = w.load(Ordering::Relaxed).to_ne_bytes();
            chunk.copy_from_slice(&b[..chunk.len()]);
        }
        let tag = self.tag.load(Ordering::Relaxed) as i32;
        self.full.store(0, Ordering::Release);
        Some(Taken { tag, len, bytes })
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::threadcomm::queue::Mpsc;
    use loom::sync::Arc;
    use std::collections::VecDeque;

    /// The receiver's side as `p2p::Mailbox` runs it: the slot, then the queue, taking the
    /// slot again before each counted message. Messages are numbered by their tag.
    fn drain(pair: &Pair, q: &Mpsc<i32>, got: &mut Vec<i32>) {
        if let Some(t) = pair.take() {
            got.push(t.tag);
        }
        let mut queued = VecDeque::new();
        q.take_all(&mut queued);
        for m in queued {
            if let Some(t) = pair.take() {
                got.push(t.tag);
            }
            got.push(m);
            pair.dequeue();
        }
    }

    /// The sender (the model's main thread) sends 0, 1, 2 (slot when it can, else queue)
    /// while a receiver thread drains twice, then main drains twice more after joining it:
    /// every message arrives once, in send order. (With the receiver as the main thread loom
    /// explored one execution only; this way round, dropping the receiver's "slot first" step
    /// fails in the second: tried.)
    #[test]
    fn loom_pair_order() {
        crate::sync::loom_model(|| {
            let pair = Arc::new(Pair::default());
            let q = Arc::new(Mpsc::new());
            let receiver = {
                let (pair, q) = (pair.clone(), q.clone());
                loom::thread::spawn(move || {
                    let mut got = Vec::new();
                    drain(&pair, &q, &mut got);
                    drain(&pair, &q, &mut got);
                    got
                })
            };
            for m in 0..3i32 {
                if !pair.put(m, &[]) {
                    pair.enqueue();
                    q.push(m);
                }
            }
            let mut got = receiver.join().unwrap();
            drain(&pair, &q, &mut got);
            drain(&pair, &q, &mut got);
            assert_eq!(got, vec![0, 1, 2]);
        });
    }

    /// Whatever a receiver thread takes carries the bytes put with its tag, and tags come in
    /// order (the second put may find the slot full and give up).
    #[test]
    fn loom_pair_bytes() {
        crate::sync::loom_model(|| {
            let pair = Arc::new(Pair::default());
            let check = |t: Option<Taken>, tags: &mut Vec<i32>| {
                if let Some(t) = t {
                    assert_eq!(&t.bytes[..t.len], &[t.tag as u8; 9]);
                    tags.push(t.tag);
                }
            };
            let receiver = {
                let pair = pair.clone();
                loom::thread::spawn(move || {
                    let mut tags = Vec::new();
                    check(pair.take(), &mut tags);
                    check(pair.take(), &mut tags);
                    tags
                })
            };
            for m in 1..3u8 {
                pair.put(i32::from(m), &[m; 9]);
            }
            let mut tags = receiver.join().unwrap();
            check(pair.take(), &mut tags);
            assert!(!tags.is_empty() && tags[0] == 1 && tags.windows(2).all(|w| w[0] < w[1]));
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn put_take_and_refusals() {
        let p = Pair::default();
        assert!(p.take().is_none());
        assert!(p.put(7, &[1, 2, 3, 4, 5, 6, 7, 8, 9]));
        assert!(!p.put(8, &[]), "full");
        let t = p.take().expect("a message");
        assert_eq!(
            (t.tag, &t.bytes[..t.len]),
            (7, &[1, 2, 3, 4, 5, 6, 7, 8, 9][..])
        );
        p.enqueue();
        assert!(!p.put(9, &[]), "a queued message goes first");
        p.dequeue();
        assert!(p.put(-3, &[]));
        let t = p.take().expect("a message");
        assert_eq!((t.tag, t.len), (-3, 0));
    }
}
