//! Message matching: the posted-receive and unexpected-message queues of one VCI.
//!
//! A message matches the first posted receive (in posting order) whose context id is equal
//! and whose source and tag are equal or wildcards; an arriving receive takes the first
//! matching unexpected message (in arrival order). Since each sender's messages arrive on a
//! VCI in order, this keeps MPI's non-overtaking rule.
#![forbid(unsafe_code)]

use std::collections::VecDeque;

use crate::message::{Key, Pattern};
use crate::request::ReqId;
use crate::stats::{self, Counter};

/// How an unexpected message's data can be had.
#[derive(Debug, PartialEq, Eq)]
pub enum Payload {
    /// The whole message, copied out of the transport.
    Eager(Vec<u8>),
    /// Only a rendezvous header: the data stays in the sender's buffer until matched
    /// (`pulled`: read it with one copy where the kernel lets it, see `SendMode::Pulled`).
    Rendezvous {
        total: u64,
        addr: u64,
        pid: i32,
        pulled: bool,
    },
}

/// A message that arrived before its receive was posted.
#[derive(Debug, PartialEq, Eq)]
pub struct Unexpected {
    pub key: Key,
    /// The sender's rank in the job (replies go there).
    pub origin: u32,
    /// The sender's VCI (replies go there).
    pub origin_vci: u8,
    /// The sender's request token (for synchronous-send acks and rendezvous).
    pub token: u64,
    /// The sender waits for an acknowledgement when the message is matched.
    pub sync: bool,
    pub payload: Payload,
}

impl Unexpected {
    pub fn bytes(&self) -> u64 {
        match &self.payload {
            Payload::Eager(data) => data.len() as u64,
            Payload::Rendezvous { total, .. } => *total,
        }
    }
}

/// A posted receive waiting for its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posted {
    pub pattern: Pattern,
    pub req: ReqId,
}

/// The posted and unexpected queues of one VCI; their lengths are kept in the VCI's
/// counters (`stats`).
#[derive(Default)]
pub struct Matching {
    vci: usize,
    posted: VecDeque<Posted>,
    unexpected: VecDeque<Unexpected>,
}

impl Matching {
    /// Messages that arrived and no receive has taken yet, all of them, in arrival order.
    pub fn take_all_unexpected(&mut self) -> VecDeque<Unexpected> {
        let all = std::mem::take(&mut self.unexpected);
        self.unexpected_changed();
        all
    }

    /// Matching state of VCI `vci` that starts with `unexpected` (handed on by
    /// `take_all_unexpected`).
    pub fn with_unexpected(vci: usize, unexpected: VecDeque<Unexpected>) -> Matching {
        let m = Matching {
            vci,
            posted: VecDeque::new(),
            unexpected,
        };
        m.unexpected_changed();
        m.posted_changed();
        m
    }

    #[inline]
    fn posted_changed(&self) {
        stats::set_level(
            self.vci,
            Counter::PostedLen,
            Counter::PostedHigh,
            self.posted.len() as u64,
        );
    }

    #[inline]
    fn unexpected_changed(&self) {
        stats::set_level(
            self.vci,
            Counter::UnexpectedLen,
            Counter::UnexpectedHigh,
            self.unexpected.len() as u64,
        );
    }

    #[inline]
    pub fn post(&mut self, posted: Posted) {
        self.posted.push_back(posted);
        self.posted_changed();
    }

    /// The first posted receive matching `key`, removed from the queue.
    #[inline]
    pub fn take_posted(&mut self, key: &Key) -> Option<Posted> {
        // Usually the oldest receive matches (messages arrive in the order they are awaited).
        if self.posted.front()?.pattern.matches(key) {
            let p = self.posted.pop_front();
            self.posted_changed();
            return p;
        }
        self.search_posted(key)
    }

    fn search_posted(&mut self, key: &Key) -> Option<Posted> {
        let i = self.posted.iter().position(|p| p.pattern.matches(key))?;
        let p = self.posted.remove(i);
        self.posted_changed();
        p
    }

    /// Remove the posted receive of request `req` (cancel). Returns whether it was there.
    pub fn cancel_posted(&mut self, req: ReqId) -> bool {
        match self.posted.iter().position(|p| p.req == req) {
            Some(i) => {
                self.posted.remove(i);
                self.posted_changed();
                true
            }
            None => false,
        }
    }

    pub fn add_unexpected(&mut self, message: Unexpected) {
        self.unexpected.push_back(message);
        stats::add(self.vci, Counter::UnexpectedArrivals, 1);
        self.unexpected_changed();
    }

    /// The first unexpected message matching `pattern`, removed from the queue.
    #[inline]
    pub fn take_unexpected(&mut self, pattern: &Pattern) -> Option<Unexpected> {
        if self.unexpected.is_empty() {
            // The common case of a receive posted ahead of its message.
            return None;
        }
        self.search_unexpected(pattern)
    }

    fn search_unexpected(&mut self, pattern: &Pattern) -> Option<Unexpected> {
        let i = if pattern.matches(&self.unexpected.front()?.key) {
            0
        } else {
            self.unexpected
                .iter()
                .position(|u| pattern.matches(&u.key))?
        };
        let u = self.unexpected.remove(i);
        self.unexpected_changed();
        u
    }

    /// Remove the unexpected message that job rank `origin`'s VCI `origin_vci` sent with
    /// request token `token` (a cancelled send). Returns whether it was there.
    pub fn withdraw_unexpected(&mut self, origin: u32, origin_vci: u8, token: u64) -> bool {
        let found = self
            .unexpected
            .iter()
            .position(|u| u.origin == origin && u.origin_vci == origin_vci && u.token == token);
        match found {
            Some(i) => {
                self.unexpected.remove(i);
                self.unexpected_changed();
                true
            }
            None => false,
        }
    }

    /// The first unexpected message matching `pattern`, left in place (probe).
    pub fn peek_unexpected(&self, pattern: &Pattern) -> Option<&Unexpected> {
        self.unexpected.iter().find(|u| pattern.matches(&u.key))
    }

    /// Remove every unexpected message of context `context` (a communicator being freed),
    /// in arrival order.
    pub fn drain_unexpected(&mut self, context: u32) -> Vec<Unexpected> {
        let (gone, kept): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut self.unexpected)
            .into_iter()
            .partition(|u| u.key.context == context);
        self.unexpected = kept;
        gone.into()
    }

    pub fn posted_len(&self) -> usize {
        self.posted.len()
    }

    pub fn unexpected_len(&self) -> usize {
        self.unexpected.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{SourceSel, TagSel};

    fn key(source: u32, tag: i32) -> Key {
        Key {
            context: 0,
            source,
            tag,
            stream: 0,
        }
    }

    fn unexpected(source: u32, tag: i32, byte: u8) -> Unexpected {
        Unexpected {
            key: key(source, tag),
            origin: source,
            origin_vci: 0,
            token: 0,
            sync: false,
            payload: Payload::Eager(vec![byte]),
        }
    }

    #[test]
    fn wildcards_and_order() {
        let mut m = Matching::default();
        m.add_unexpected(unexpected(1, 5, 1));
        m.add_unexpected(unexpected(2, 5, 2));
        m.add_unexpected(unexpected(1, 6, 3));
        let any = Pattern {
            context: 0,
            source: SourceSel::Any,
            tag: TagSel::Any,
            stream: 0,
        };
        let from1tag6 = Pattern {
            context: 0,
            source: SourceSel::Rank(1),
            tag: TagSel::Tag(6),
            stream: 0,
        };
        assert_eq!(
            m.take_unexpected(&from1tag6).unwrap().payload,
            Payload::Eager(vec![3])
        );
        assert_eq!(
            m.take_unexpected(&any).unwrap().payload,
            Payload::Eager(vec![1])
        );
        let other_context = Pattern { context: 1, ..any };
        assert!(m.take_unexpected(&other_context).is_none());
        assert_eq!(m.peek_unexpected(&any).unwrap().key.source, 2);
        assert_eq!(m.unexpected_len(), 1);
    }

    #[test]
    fn posted_in_order_and_cancel() {
        let mut m = Matching::default();
        let req = |slot| ReqId::new(0, slot, 1);
        let p = |source, slot| Posted {
            pattern: Pattern {
                context: 0,
                source,
                tag: TagSel::Any,
                stream: 0,
            },
            req: req(slot),
        };
        m.post(p(SourceSel::Any, 1));
        m.post(p(SourceSel::Rank(3), 2));
        m.post(p(SourceSel::Rank(3), 3));
        assert!(m.cancel_posted(req(1)));
        assert!(!m.cancel_posted(req(1)));
        assert_eq!(m.take_posted(&key(3, 0)).unwrap().req, req(2));
        assert_eq!(m.take_posted(&key(3, 0)).unwrap().req, req(3));
        assert!(m.take_posted(&key(3, 0)).is_none());
    }

    #[test]
    fn withdraw_names_one_message() {
        let mut m = Matching::default();
        // Same envelope; told apart by sender, its VCI and its request token.
        let sent = |origin, origin_vci, token, byte| Unexpected {
            origin,
            origin_vci,
            token,
            ..unexpected(1, 5, byte)
        };
        m.add_unexpected(sent(1, 0, 7, 1));
        m.add_unexpected(sent(1, 0, 8, 2));
        m.add_unexpected(sent(1, 1, 7, 3));
        m.add_unexpected(sent(2, 0, 7, 4));
        assert!(m.withdraw_unexpected(1, 0, 8));
        assert!(!m.withdraw_unexpected(1, 0, 8));
        assert!(!m.withdraw_unexpected(3, 0, 7));
        let any = Pattern {
            context: 0,
            source: SourceSel::Any,
            tag: TagSel::Any,
            stream: 0,
        };
        let order: Vec<_> = std::iter::from_fn(|| m.take_unexpected(&any))
            .map(|u| u.payload)
            .collect();
        assert_eq!(order, Vec::from([1, 3, 4].map(|b| Payload::Eager(vec![b]))));
    }
}
