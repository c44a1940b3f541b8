//! Compact context ids: which ids this process has free, and the collective agreement that
//! picks the lowest id free on every member of a new communicator (design point 7, docs/design.md).
//!
//! A communicator owns a pair of ids: `2i` (point-to-point) and `2i + 1` (collectives). Pair
//! 0 is `MPI_COMM_WORLD`'s, pair 1 `MPI_COMM_SELF`'s; user communicators get pairs
//! `2..MAX_COMMS` and give them back when they are dropped, so creating and freeing
//! communicators in a loop never runs out.
//!
//! # The protocol
//!
//! An agreement is a sequence of *rounds*; a round is an AND-reduction over the members of a
//! *contribution* (some words of the free-pair mask and an "owned" word). Every member runs
//! the same rounds, since they all see the same reduced words. Several agreements may be in
//! flight on one process (threads, `MPI_Comm_idup`s in the progress engine), so the mask is
//! split in two regions, each lent to at most one round at a time, and a round contributes
//! only the pairs it was lent (the others contribute zeros there):
//!
//! - **Round 0** (the *entry round*) contributes the entry region (the first `ENTRY_WORDS`
//!   words, 256 pairs) if no other entry round holds it, else zeros. Its reduction completes
//!   only when every member has entered the agreement, so after it the agreement knows that
//!   all its members are running it. If it finds a common pair (the usual case: freed pairs
//!   are reused lowest first), that is the id: one round, a small message.
//! - After its entry round an agreement joins this process's *queue*, ordered by its *key*
//!   (parent context id and a sub-key, the same on every member, distinct for creations that
//!   may run at once on overlapping groups: see `comm::sub_key`). **Rounds 1, 2, ...**
//!   contribute the main region (the rest of the mask) if this agreement is the head of the
//!   queue and no other round holds the main region, else zeros; the "owned" word says which.
//! - A round whose reduction has a pair claims the lowest one. A later round where every
//!   member owned the main region and no pair is common means the ids are exhausted: the
//!   agreement fails with `MPI_ERR_OTHER` on every member (never a hang).
//!
//! **Safety.** A region is lent to one round at a time and only its holder takes pairs from
//! what it contributed; so a pair set in a reduction was free and held by this agreement on
//! every member, is still free when it is claimed, and is claimed on every member.
//!
//! **Progress.** Assume every member of an agreement eventually enters it and that a process
//! inside a waiting MPI call makes progress on all its agreements (blocking ones run in the
//! calling thread; every wait of the creation paths and of `Comm::resolve` runs progress
//! passes of every VCI, so the nonblocking ones advance too). Then, when no new agreement
//! begins, every agreement settles:
//! 1. An entry round completes: contributing never waits, and every member contributes once
//!    it has entered. The entry region is held only during an entry round, and it delays
//!    nobody: a round that does not get it contributes zeros and goes on.
//! 2. A round r >= 1 of an agreement A completes: A is queued only after its entry round,
//!    so every member is running A and reaches round r (rounds settle identically
//!    everywhere). So the main region, held only by such rounds, is always released.
//! 3. Let A be the unsettled agreement with the smallest key. Once its entry round is done
//!    and every agreement with a smaller key has settled, A is the head of the queue of
//!    every member p. From the moment p's main region is next released (2), only the head,
//!    A, can take it, and A retakes it at each of its rounds; so from some round on, every
//!    member owns the main region in the same round, which then claims a pair or declares
//!    the ids exhausted. By induction on the keys, every agreement settles.
//!
//! Keys must be ordered the same way on every member: an agreement's key is computed from
//! values all its members share (for `MPI_Intercomm_create`, the lower of the two local
//! groups' context ids). The ordering of agreements with equal keys on overlapping groups is
//! left to each process (only erroneous programs run two such creations at once).
//!
//! An agreement cannot hold the main region before all its members have entered it: this is
//! what keeps a round waiting for a process that is itself blocked in another agreement
//! (MPICH's `threads/comm/idup_deadlock`: some threads of some processes start their
//! `MPI_Comm_idup` only after other duplications completed) from stopping everything.
//!
//! A communicator of this process alone (`MPI_Comm_dup(MPI_COMM_SELF)`) needs no agreement
//! and no queue (`claim_alone`): it takes the lowest free pair that no round holds. Waiting in
//! the queue there could deadlock: the head's round may wait for a peer that is itself
//! waiting for this thread (MPICH's `threads/comm/comm_dup_deadlock`, where an application
//! lock serializes the `MPI_COMM_SELF` duplications). If every free pair is held, it waits
//! only for a main-region round (which completes, by 2); if only an entry round holds pairs,
//! the ids are exhausted.
#![forbid(unsafe_code)]

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::error::{ErrorClass, MpiError, MpiResult};

/// How many communicators (context-id pairs) a process can have at once.
pub const MAX_COMMS: usize = 8192;
/// Words of the free-pair bitmask.
pub const WORDS: usize = MAX_COMMS / 64;
/// Words of the entry region (the pairs an entry round contributes).
pub const ENTRY_WORDS: usize = 4;
/// A context id never allocated: internal bootstrap traffic of `MPI_Comm_create_from_group`.
pub const BOOTSTRAP_CONTEXT: u32 = (MAX_COMMS as u32) * 2 + 16;

/// A region lent to one round: the round's ticket and the words it contributed.
struct Hold {
    ticket: u64,
    bits: Vec<u64>,
}

impl Hold {
    fn word(hold: &Option<Hold>, i: usize) -> u64 {
        hold.as_ref()
            .and_then(|h| h.bits.get(i).copied())
            .unwrap_or(0)
    }
}

struct Allocator {
    /// Bit i set: pair i (context ids 2i, 2i+1) is free.
    free: [u64; WORDS],
    /// The entry round holding the entry region.
    entry: Option<Hold>,
    /// The round holding the main region (its words below `ENTRY_WORDS` are zero).
    main: Option<Hold>,
    /// Agreements past their entry round: (key, ticket).
    queue: BTreeSet<(u64, u64)>,
    in_use: usize,
}

static ALLOC: Mutex<Allocator> = Mutex::new(Allocator {
    free: initial_mask(),
    entry: None,
    main: None,
    queue: BTreeSet::new(),
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
    if !(2..MAX_COMMS).contains(&pair) {
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
    /// No common pair among what the members contributed: run another round (of
    /// `Agreement::words` words).
    Retry,
    /// Every member contributed its whole main region and no pair is free on all.
    Exhausted,
}

/// One agreement in progress on this process. Dropping it leaves the queue and gives back
/// what its round holds.
#[derive(Debug)]
pub struct Agreement {
    key: u64,
    ticket: u64,
    /// Mask words the next round sends (`ENTRY_WORDS` in the entry round, then `WORDS`).
    pub words: usize,
    round: u32,
}

/// Length in words of a contribution of `words` mask words (mask plus the owned word).
pub fn contribution_len(words: usize) -> usize {
    words + 1
}

impl Agreement {
    /// Start an agreement ordered by `key` (the same on every member; see the module docs).
    pub fn begin(key: u64) -> Agreement {
        Agreement {
            key,
            ticket: NEXT_TICKET.fetch_add(1, Ordering::Relaxed),
            words: ENTRY_WORDS,
            round: 0,
        }
    }

    /// Fill `out` (`contribution_len(self.words)` words) with this process's contribution to
    /// the next round: the region it may hold now, else zeros; the last word says whether it
    /// holds the main region.
    pub fn contribute(&mut self, out: &mut [u64]) {
        let words = self.words;
        assert_eq!(out.len(), contribution_len(words));
        out.fill(0);
        let mut a = alloc();
        if self.round == 0 {
            if a.entry.is_none() {
                out[..ENTRY_WORDS].copy_from_slice(&a.free[..ENTRY_WORDS]);
                a.entry = Some(Hold {
                    ticket: self.ticket,
                    bits: out[..ENTRY_WORDS].to_vec(),
                });
            }
        } else if a.main.is_none() && a.queue.first() == Some(&(self.key, self.ticket)) {
            out[ENTRY_WORDS..WORDS].copy_from_slice(&a.free[ENTRY_WORDS..]);
            out[WORDS] = u64::MAX;
            a.main = Some(Hold {
                ticket: self.ticket,
                bits: out[..WORDS].to_vec(),
            });
        }
    }

    /// Settle a round given the AND of every member's contribution.
    pub fn settle(&mut self, reduced: &[u64]) -> Outcome {
        let words = self.words;
        let mut a = alloc();
        let held = self.let_go(&mut a);
        let pair = reduced[..words]
            .iter()
            .enumerate()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| i * 64 + w.trailing_zeros() as usize);
        if let Some(pair) = pair {
            let bit = 1u64 << (pair % 64);
            assert!(
                held.get(pair / 64).is_some_and(|w| w & bit != 0) && a.free[pair / 64] & bit != 0,
                "agreed pair {pair} was not held free by this process"
            );
            a.free[pair / 64] &= !bit;
            a.in_use += 1;
            a.queue.remove(&(self.key, self.ticket));
            return Outcome::Got(pair as u32 * 2);
        }
        if self.round > 0 && reduced[words] == u64::MAX {
            a.queue.remove(&(self.key, self.ticket));
            return Outcome::Exhausted;
        }
        if self.round == 0 {
            // Every member has entered: from now on this agreement may hold the main region.
            a.queue.insert((self.key, self.ticket));
            self.words = WORDS;
        }
        self.round += 1;
        Outcome::Retry
    }

    /// Give back the region this agreement's round holds; returns the words it contributed.
    fn let_go(&self, a: &mut Allocator) -> Vec<u64> {
        let mut held = Vec::new();
        for region in [&mut a.entry, &mut a.main] {
            if region.as_ref().is_some_and(|h| h.ticket == self.ticket) {
                held = region.take().expect("checked").bits;
            }
        }
        held
    }
}

impl Drop for Agreement {
    fn drop(&mut self) {
        let mut a = alloc();
        self.let_go(&mut a);
        a.queue.remove(&(self.key, self.ticket));
    }
}

/// A context-id pair for a communicator whose only member is this process, if one can be
/// had now: the lowest free pair no round holds. `None` while a main-region round holds every
/// free pair (it completes: try again after a progress pass); exhausted if only an entry round
/// holds pairs, or none is free.
pub fn try_claim_alone(func: &str) -> Option<MpiResult<u32>> {
    let mut a = alloc();
    let pick = (0..WORDS).find_map(|i| {
        let w = a.free[i] & !Hold::word(&a.entry, i) & !Hold::word(&a.main, i);
        (w != 0).then(|| i * 64 + w.trailing_zeros() as usize)
    });
    match pick {
        Some(pair) => {
            a.free[pair / 64] &= !(1u64 << (pair % 64));
            a.in_use += 1;
            Some(Ok(pair as u32 * 2))
        }
        None if a.main.is_some() => None,
        None => Some(Err(exhausted(func))),
    }
}

/// `try_claim_alone`, calling `pause` (a progress pass) until it has an answer.
pub fn claim_alone(func: &str, mut pause: impl FnMut()) -> MpiResult<u32> {
    loop {
        if let Some(r) = try_claim_alone(func) {
            return r;
        }
        pause();
    }
}

/// The error for an exhausted id space.
pub fn exhausted(func: &str) -> MpiError {
    MpiError::new(
        ErrorClass::Other,
        format!(
            "{func}: no context id is free on every member of the new communicator (a process \
             can have {MAX_COMMS} communicators at once; free some)"
        ),
    )
}

/// Agree on a context id, using `reduce` to AND-reduce a contribution over all members and
/// calling `pause` (a progress pass of every VCI, so that nonblocking agreements on this
/// process advance) between rounds that found nothing.
pub fn agree(
    key: u64,
    func: &str,
    mut reduce: impl FnMut(&mut [u64]) -> MpiResult<()>,
    mut pause: impl FnMut(),
) -> MpiResult<u32> {
    let mut agreement = Agreement::begin(key);
    loop {
        let mut buf = vec![0u64; contribution_len(agreement.words)];
        agreement.contribute(&mut buf);
        reduce(&mut buf)?;
        match agreement.settle(&buf) {
            Outcome::Got(id) => return Ok(id),
            Outcome::Retry => pause(),
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

    fn contribution(a: &mut Agreement) -> Vec<u64> {
        let mut c = vec![0; contribution_len(a.words)];
        a.contribute(&mut c);
        c
    }

    fn got(o: Outcome) -> u32 {
        match o {
            Outcome::Got(id) => id,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_single_member_gets_the_lowest_free_pair_and_releases_it() {
        let _s = serial();
        let a = agree(0, "t", |_| Ok(()), || {}).unwrap();
        let b = agree(0, "t", |_| Ok(()), || {}).unwrap();
        assert_ne!(a, b);
        assert!(a >= 4 && a % 2 == 0 && b % 2 == 0);
        release(a);
        let c = agree(0, "t", |_| Ok(()), || {}).unwrap();
        assert!(c <= a.max(b), "a released id is reused ({c} vs {a})");
        release(b);
        release(c);
    }

    #[test]
    fn the_entry_region_goes_to_one_entry_round_at_a_time() {
        let _s = serial();
        let mut first = Agreement::begin(5);
        let mut second = Agreement::begin(1);
        let c1 = contribution(&mut first);
        let c2 = contribution(&mut second);
        assert_ne!(c1[..ENTRY_WORDS], [0; ENTRY_WORDS]);
        assert_eq!(c2, vec![0; ENTRY_WORDS + 1], "the region is held");
        // The second finds nothing, joins the queue and, being its head, gets the main region
        // while the first's entry round is still in flight.
        assert_eq!(second.settle(&c2), Outcome::Retry);
        assert_eq!(second.words, WORDS);
        let c2 = contribution(&mut second);
        assert_eq!(c2[WORDS], u64::MAX, "the head owns the main region");
        assert_eq!(c2[..ENTRY_WORDS], [0; ENTRY_WORDS]);
        let id2 = got(second.settle(&c2));
        assert!(id2 / 2 >= (ENTRY_WORDS * 64) as u32);
        let id1 = got(first.settle(&c1));
        assert!(id1 < id2);
        release(id1);
        release(id2);
    }

    #[test]
    fn only_the_head_of_the_queue_holds_the_main_region() {
        let _s = serial();
        let mut low = Agreement::begin(1);
        let mut high = Agreement::begin(9);
        // Both failed their entry round (as if another member had nothing in common).
        let _ = contribution(&mut high);
        assert_eq!(high.settle(&[0; ENTRY_WORDS + 1]), Outcome::Retry);
        let _ = contribution(&mut low);
        assert_eq!(low.settle(&[0; ENTRY_WORDS + 1]), Outcome::Retry);
        let ch = contribution(&mut high);
        assert_eq!(ch, vec![0; WORDS + 1], "not the head");
        let cl = contribution(&mut low);
        assert_eq!(cl[WORDS], u64::MAX);
        assert_eq!(high.settle(&ch), Outcome::Retry);
        // A round of the head that found no common pair lets the region go; the head keeps
        // its place, so the other still waits.
        assert_eq!(low.settle(&vec![0; WORDS + 1]), Outcome::Retry);
        assert_eq!(contribution(&mut high), vec![0; WORDS + 1]);
        assert_eq!(high.settle(&vec![0; WORDS + 1]), Outcome::Retry);
        drop(low);
        let ch = contribution(&mut high);
        assert_eq!(ch[WORDS], u64::MAX, "the next in key order");
        let id = got(high.settle(&ch));
        release(id);
    }

    #[test]
    fn an_empty_main_region_owned_everywhere_is_exhaustion() {
        let _s = serial();
        let mut ag = Agreement::begin(2);
        let _ = contribution(&mut ag);
        // An empty entry round is never exhaustion...
        assert_eq!(ag.settle(&[0; ENTRY_WORDS + 1]), Outcome::Retry);
        let _ = contribution(&mut ag);
        // ...nor is an empty round where some member did not own its main region...
        assert_eq!(ag.settle(&vec![0; WORDS + 1]), Outcome::Retry);
        let _ = contribution(&mut ag);
        let mut owned_by_all = vec![0; WORDS + 1];
        owned_by_all[WORDS] = u64::MAX;
        // ...but one where everyone did is.
        assert_eq!(ag.settle(&owned_by_all), Outcome::Exhausted);
    }

    #[test]
    fn a_lone_claim_takes_no_held_pair() {
        let _s = serial();
        let mut entry = Agreement::begin(3);
        let ce = contribution(&mut entry);
        let alone = try_claim_alone("t").unwrap().unwrap();
        assert!(
            alone / 2 >= (ENTRY_WORDS * 64) as u32,
            "pair {} is outside the held entry region",
            alone / 2
        );
        let mut main = Agreement::begin(4);
        let _ = contribution(&mut main);
        assert_eq!(main.settle(&[0; ENTRY_WORDS + 1]), Outcome::Retry);
        let cm = contribution(&mut main);
        assert_eq!(cm[WORDS], u64::MAX);
        // Every free pair is held: wait for the main round, which always completes.
        assert!(try_claim_alone("t").is_none());
        let id = got(main.settle(&cm));
        let next = try_claim_alone("t").unwrap().unwrap();
        assert!(next > id && next / 2 >= (ENTRY_WORDS * 64) as u32);
        let e = got(entry.settle(&ce));
        for x in [alone, id, next, e] {
            release(x);
        }
    }

    #[test]
    fn many_cycles_never_run_out() {
        let _s = serial();
        let before = in_use();
        for _ in 0..3 * MAX_COMMS {
            let id = agree(3, "t", |_| Ok(()), || {}).unwrap();
            release(id);
        }
        assert_eq!(in_use(), before);
    }

    #[test]
    fn a_full_mask_is_exhausted_alone_and_in_agreement() {
        let _s = serial();
        let mut ids = Vec::new();
        while let Some(Ok(id)) = try_claim_alone("t") {
            ids.push(id);
        }
        assert_eq!(in_use(), MAX_COMMS - 2, "every user pair was claimed");
        assert!(matches!(try_claim_alone("t"), Some(Err(_))));
        let e = agree(7, "MPI_Comm_dup", |_| Ok(()), || {}).unwrap_err();
        assert_eq!(e.class(), ErrorClass::Other as i32);
        assert!(e.message.contains("MPI_Comm_dup"));
        for id in ids {
            release(id);
        }
    }
}
