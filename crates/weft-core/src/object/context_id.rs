//! Compact context ids: which ids this process has free, and the collective agreement that
//! picks the lowest id free on every member of a new communicator (design point 7, docs/design.md).
//!
//! A communicator owns a pair of ids: `2i` (point-to-point) and `2i + 1` (collectives). Pair
//! 0 is `MPI_COMM_WORLD`'s, pair 1 `MPI_COMM_SELF`'s; user communicators get pairs
//! `2..MAX_COMMS` and give them back when they are dropped, so creating and freeing
//! communicators in a loop never runs out.
//!
//! The agreement is an AND-reduction of every member's free-pair bitmask. Several threads of
//! a process may agree on different parents at once, so the bitmask has one *owner* at a
//! time: only the owner contributes its free pairs (the others contribute none, so their
//! round finds nothing and is repeated), and because the owner is the only one that takes
//! pairs, the lowest pair of the reduced mask is still free when it claims it. Ownership goes
//! to the waiting agreement with the smallest key (the parent's context id, the same on every
//! member), so that when two agreements compete on overlapping groups, the same one wins
//! everywhere and the other retries after it. A process that contributes reports whether it
//! owned the mask (an AND-reduced word as well); a round where everyone owned it and the mask
//! is empty means the ids are exhausted.
//!
//! A round first sends only the first `HEAD_WORDS` words of the mask (256 pairs: the common
//! case, since freed pairs are reused lowest first); only if those hold no common free pair
//! does it retry with the whole mask.
//!
//! A communicator of this process alone (`MPI_Comm_dup(MPI_COMM_SELF)`) needs no agreement
//! and no ownership (`claim_alone`): it takes the lowest free pair outside what the current
//! owner contributed. Waiting for ownership there could deadlock: the owner's round may wait
//! for a peer that is itself waiting for this thread (MPICH's `threads/comm/comm_dup_deadlock`,
//! where an application lock serializes the `MPI_COMM_SELF` duplications).
#![forbid(unsafe_code)]

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::error::{ErrorClass, MpiError, MpiResult};

/// How many communicators (context-id pairs) a process can have at once.
pub const MAX_COMMS: usize = 8192;
/// Words of the free-pair bitmask.
pub const WORDS: usize = MAX_COMMS / 64;
/// Words a first agreement round sends.
pub const HEAD_WORDS: usize = 4;
/// A context id never allocated: internal bootstrap traffic of `MPI_Comm_create_from_group`.
pub const BOOTSTRAP_CONTEXT: u32 = (MAX_COMMS as u32) * 2 + 16;

struct Allocator {
    /// Bit i set: pair i (context ids 2i, 2i+1) is free.
    free: [u64; WORDS],
    /// The agreement (ticket) that owns the mask for its current round.
    owner: Option<u64>,
    /// When the owner is a nonblocking agreement (its round may wait on processes that are
    /// blocked in another agreement first), the mask words it contributed; a blocking
    /// agreement may then co-own the mask, contributing only pairs outside these.
    owner_nb: Option<Vec<u64>>,
    /// The co-owner of the current round (see `owner_nb`).
    co_owner: Option<u64>,
    /// The mask words the owner (blocking or not) contributed to its current round: pairs a
    /// `claim_alone` must leave to it.
    owner_snapshot: Option<Vec<u64>>,
    /// Agreements in progress: (key, ticket).
    waiting: BTreeSet<(u64, u64)>,
    in_use: usize,
}

static ALLOC: Mutex<Allocator> = Mutex::new(Allocator {
    free: initial_mask(),
    owner: None,
    owner_nb: None,
    co_owner: None,
    owner_snapshot: None,
    waiting: BTreeSet::new(),
    in_use: 0,
});

static NEXT_TICKET: AtomicU64 = AtomicU64::new(1);

const fn initial_mask() -> [u64; WORDS] {
    let mut m = [u64::MAX; WORDS];
    m[0] = !0b11; // world and self
    m
}

fn alloc() -> MutexGuard<'static, Allocator> {
    ALLOC.lock().unwrap_or_else(|p| p.into_inner())
}

/// Give a pair back (when a communicator that owned it is dropped).
pub fn release(context_id: u32) {
    let pair = (context_id / 2) as usize;
    if pair < 2 || pair >= MAX_COMMS {
        return;
    }
    let mut a = alloc();
    let bit = 1u64 << (pair % 64);
    debug_assert!(
        a.free[pair / 64] & bit == 0,
        "context id {context_id} released twice"
    );
    if a.free[pair / 64] & bit == 0 {
        a.free[pair / 64] |= bit;
        a.in_use -= 1;
    }
}

/// How many user pairs are allocated (for tests and diagnostics).
pub fn in_use() -> usize {
    alloc().in_use
}

/// What a round found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The agreed context id (the point-to-point one of the pair), claimed.
    Got(u32),
    /// Not every member owned its mask: repeat the round.
    Retry,
    /// Every member owned its mask but the head words had no common free pair: repeat the
    /// round with the whole mask.
    Widen,
    /// No pair is free on every member.
    Exhausted,
}

/// One agreement in progress on this process. Dropping it withdraws from the queue.
#[derive(Debug)]
pub struct Agreement {
    key: u64,
    ticket: u64,
    /// Words the next round sends.
    pub words: usize,
    rounds: u32,
    /// Whether the rounds run in the progress engine (`MPI_Comm_idup`).
    nonblocking: bool,
}

/// Length in words of a contribution of `words` mask words (mask plus the owner word).
pub fn contribution_len(words: usize) -> usize {
    words + 1
}

impl Agreement {
    /// Start an agreement ordered by `key` (the parent's context id).
    pub fn begin(key: u64) -> Agreement {
        let ticket = NEXT_TICKET.fetch_add(1, Ordering::Relaxed);
        alloc().waiting.insert((key, ticket));
        Agreement {
            key,
            ticket,
            words: HEAD_WORDS,
            rounds: 0,
            nonblocking: false,
        }
    }

    /// An agreement whose rounds run in the progress engine: while it owns the mask, the
    /// first blocking agreement in key order may co-own it.
    pub fn begin_nonblocking(key: u64) -> Agreement {
        let mut a = Agreement::begin(key);
        a.nonblocking = true;
        a
    }

    /// Fill `out` (`contribution_len(self.words)` words) with this process's contribution:
    /// the free mask if it may own it now, else zeros; the last word says which.
    pub fn contribute(&mut self, out: &mut [u64]) {
        let words = self.words;
        assert_eq!(out.len(), contribution_len(words));
        let mut a = alloc();
        let first = a.waiting.iter().next().copied();
        if a.owner.is_none() && first == Some((self.key, self.ticket)) {
            a.owner = Some(self.ticket);
        }
        if a.owner == Some(self.ticket) {
            out[..words].copy_from_slice(&a.free[..words]);
            out[words] = u64::MAX;
            a.owner_snapshot = Some(out[..words].to_vec());
            if self.nonblocking {
                a.owner_nb = Some(out[..words].to_vec());
            }
        } else if !self.nonblocking
            && a.co_owner.is_none()
            && a.owner_nb.is_some()
            && a.waiting
                .iter()
                .find(|&&(_, t)| Some(t) != a.owner)
                .copied()
                == Some((self.key, self.ticket))
        {
            // Co-own: pairs the nonblocking owner did not contribute. The owner word says
            // "partial" (bit 0 clear), so an empty result means retry, not exhausted.
            let taken = a.owner_nb.as_ref().expect("checked");
            for (i, o) in out[..words].iter_mut().enumerate() {
                *o = a.free[i] & !taken.get(i).copied().unwrap_or(0);
            }
            out[words] = u64::MAX - 1;
            a.co_owner = Some(self.ticket);
        } else {
            out.fill(0);
        }
    }

    /// Settle a round given the AND of every member's contribution.
    pub fn settle(&mut self, reduced: &[u64]) -> Outcome {
        let words = self.words;
        let all_owned = reduced[words] | 1 == u64::MAX;
        let partial = reduced[words] & 1 == 0;
        let mut a = alloc();
        let owned = a.owner == Some(self.ticket) || a.co_owner == Some(self.ticket);
        if a.owner == Some(self.ticket) {
            a.owner = None;
            a.owner_nb = None;
            a.owner_snapshot = None;
        }
        if a.co_owner == Some(self.ticket) {
            a.co_owner = None;
        }
        self.rounds += 1;
        if !all_owned {
            drop(a);
            // Let the agreement that owns the mask finish its round.
            if self.rounds > 2 {
                std::thread::yield_now();
            }
            return Outcome::Retry;
        }
        debug_assert!(owned, "every member owned the mask, this one included");
        match reduced[..words]
            .iter()
            .enumerate()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
        {
            Some(pair) => {
                let bit = 1u64 << (pair % 64);
                assert!(
                    a.free[pair / 64] & bit != 0,
                    "agreed pair {pair} is not free on this process"
                );
                a.free[pair / 64] &= !bit;
                a.in_use += 1;
                Outcome::Got(pair as u32 * 2)
            }
            None if words < WORDS => {
                self.words = WORDS;
                Outcome::Widen
            }
            None if partial => Outcome::Retry,
            None => Outcome::Exhausted,
        }
    }
}

impl Drop for Agreement {
    fn drop(&mut self) {
        let mut a = alloc();
        a.waiting.remove(&(self.key, self.ticket));
        if a.owner == Some(self.ticket) {
            a.owner = None;
            a.owner_nb = None;
            a.owner_snapshot = None;
        }
        if a.co_owner == Some(self.ticket) {
            a.co_owner = None;
        }
    }
}

/// A context-id pair for a communicator whose only member is this process: the lowest free
/// pair that no agreement in flight may claim (see the module comment).
pub fn claim_alone(func: &str) -> MpiResult<u32> {
    loop {
        let mut a = alloc();
        if a.free.iter().all(|&w| w == 0) {
            return Err(exhausted(func));
        }
        // A co-owned round's pairs are not recorded: leave the mask alone until it settles.
        let pick = if a.co_owner.is_some() {
            None
        } else {
            let held = a.owner_snapshot.as_deref().unwrap_or(&[]);
            (0..WORDS).find_map(|i| {
                let w = a.free[i] & !held.get(i).copied().unwrap_or(0);
                (w != 0).then(|| i * 64 + w.trailing_zeros() as usize)
            })
        };
        if let Some(pair) = pick {
            a.free[pair / 64] &= !(1u64 << (pair % 64));
            a.in_use += 1;
            return Ok(pair as u32 * 2);
        }
        // Every free pair is in a round in flight: let it settle.
        drop(a);
        std::thread::yield_now();
    }
}

/// The error for an exhausted id space.
pub fn exhausted(func: &str) -> MpiError {
    MpiError::new(
        ErrorClass::Other,
        format!(
            "{func}: no context id is free on every member ({MAX_COMMS} communicators exist \
             on some process; free some)"
        ),
    )
}

/// Agree on a context id, using `reduce` to AND-reduce a contribution over all members.
/// Every member runs the same rounds, since they all see the same reduced words.
pub fn agree(
    key: u64,
    func: &str,
    mut reduce: impl FnMut(&mut [u64]) -> MpiResult<()>,
) -> MpiResult<u32> {
    let mut agreement = Agreement::begin(key);
    loop {
        let mut buf = vec![0u64; contribution_len(agreement.words)];
        agreement.contribute(&mut buf);
        reduce(&mut buf)?;
        match agreement.settle(&buf) {
            Outcome::Got(id) => return Ok(id),
            Outcome::Retry | Outcome::Widen => continue,
            Outcome::Exhausted => return Err(exhausted(func)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The allocator is process-wide: the tests take turns.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn serial() -> MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(|p| p.into_inner())
    }

    #[test]
    fn a_single_member_gets_the_lowest_free_pair_and_releases_it() {
        let _s = serial();
        let a = agree(0, "t", |_| Ok(())).unwrap();
        let b = agree(0, "t", |_| Ok(())).unwrap();
        assert_ne!(a, b);
        assert!(a >= 4 && a % 2 == 0 && b % 2 == 0);
        release(a);
        let c = agree(0, "t", |_| Ok(())).unwrap();
        assert!(c <= a.max(b), "a released id is reused ({c} vs {a})");
        release(b);
        release(c);
    }

    #[test]
    fn a_lone_claim_leaves_the_owners_pairs_and_needs_no_ownership() {
        let _s = serial();
        let mut owner = Agreement::begin(1);
        let mut c = vec![0; contribution_len(owner.words)];
        owner.contribute(&mut c);
        assert_eq!(c[HEAD_WORDS], u64::MAX, "the agreement owns the mask");
        // While the owner's round is in flight, a lone claim takes a pair outside what the
        // owner contributed, and does not wait for the round.
        let alone = claim_alone("t").unwrap();
        assert!(
            alone / 2 >= (HEAD_WORDS * 64) as u32,
            "pair {} is outside the head words",
            alone / 2
        );
        // The owner's round still gets the lowest common pair it saw.
        let got = match owner.settle(&c) {
            Outcome::Got(id) => id,
            other => panic!("{other:?}"),
        };
        assert!(got < alone);
        drop(owner);
        // With no round in flight the lone claim takes the lowest free pair.
        let next = claim_alone("t").unwrap();
        assert!(next < alone && next != got);
        release(got);
        release(alone);
        release(next);
    }

    #[test]
    fn a_second_agreement_waits_for_the_owner() {
        let _s = serial();
        let mut first = Agreement::begin(1);
        let mut second = Agreement::begin(5);
        let mut c1 = vec![0; contribution_len(first.words)];
        let mut c2 = vec![0; contribution_len(second.words)];
        first.contribute(&mut c1);
        second.contribute(&mut c2);
        assert_eq!(c1[HEAD_WORDS], u64::MAX);
        assert_eq!(c2, vec![0; HEAD_WORDS + 1]);
        assert_eq!(second.settle(&c2), Outcome::Retry);
        let got = match first.settle(&c1) {
            Outcome::Got(id) => id,
            other => panic!("{other:?}"),
        };
        drop(first);
        second.contribute(&mut c2);
        assert_eq!(c2[HEAD_WORDS], u64::MAX);
        let got2 = match second.settle(&c2) {
            Outcome::Got(id) => id,
            other => panic!("{other:?}"),
        };
        assert_ne!(got, got2);
        release(got);
        release(got2);
    }

    #[test]
    fn an_empty_head_widens_then_exhausts() {
        let _s = serial();
        let mut ag = Agreement::begin(2);
        let mut c = vec![0; contribution_len(ag.words)];
        ag.contribute(&mut c);
        c[..HEAD_WORDS].fill(0); // as if another member had no free pair in the head
        assert_eq!(ag.settle(&c), Outcome::Widen);
        let mut c = vec![0; contribution_len(ag.words)];
        ag.contribute(&mut c);
        c[..WORDS].fill(0);
        assert_eq!(ag.settle(&c), Outcome::Exhausted);
    }

    #[test]
    fn a_blocking_agreement_co_owns_beside_a_nonblocking_owner() {
        let _s = serial();
        let mut nb = Agreement::begin_nonblocking(9);
        let mut c1 = vec![0; contribution_len(nb.words)];
        nb.contribute(&mut c1);
        assert_eq!(c1[HEAD_WORDS], u64::MAX);
        // A blocking agreement with a smaller key arrives while the idup round is in flight.
        let mut b = Agreement::begin(1);
        let mut c2 = vec![0; contribution_len(b.words)];
        b.contribute(&mut c2);
        assert_eq!(
            c2[HEAD_WORDS],
            u64::MAX - 1,
            "co-owner reports a partial mask"
        );
        for i in 0..HEAD_WORDS {
            assert_eq!(c1[i] & c2[i], 0, "disjoint contributions");
        }
        // The head was all the idup's: the co-owner widens and finds a pair outside it.
        assert_eq!(b.settle(&c2), Outcome::Widen);
        let mut c3 = vec![0; contribution_len(b.words)];
        b.contribute(&mut c3);
        let got_b = match b.settle(&c3) {
            Outcome::Got(id) => id,
            other => panic!("{other:?}"),
        };
        let got_nb = match nb.settle(&c1) {
            Outcome::Got(id) => id,
            other => panic!("{other:?}"),
        };
        assert_ne!(got_b, got_nb);
        drop((b, nb));
        release(got_b);
        release(got_nb);
    }

    #[test]
    fn many_cycles_never_run_out() {
        let _s = serial();
        let before = in_use();
        for _ in 0..3 * MAX_COMMS {
            let id = agree(3, "t", |_| Ok(())).unwrap();
            release(id);
        }
        assert_eq!(in_use(), before);
    }
}
