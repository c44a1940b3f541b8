//! Collective operations: algorithms chosen by communicator and message size (or forced with
//! `WEFT_COLL_*`), built on point-to-point messages on the communicator's collective context
//! id; small messages of most blocking collectives among ranks of one node go through the
//! communicator's shared memory instead (`shm`, `shm_data`).
//!
//! Buffers are `Buf`s: user memory of any committed datatype (the ABI layer resolves
//! `MPI_IN_PLACE`, passed here as `None` for the send side) and library-owned `Scratch`.
//! Algorithms that slice or compute on bytes get contiguous views: a non-contiguous input is
//! packed into scratch (`flat`), a non-contiguous output is staged and unpacked at the end
//! (`Staged`). Every function waits for all of the operations it started before returning,
//! also on error, so scratch memory is never freed under a pending receive.
//!
//! Intercommunicators (rooted forms take `ROOT`/`PROC_NULL` or a remote rank) and the
//! neighbourhood collectives run as plans (`sched.rs`); their blocking forms wait for one.
#![forbid(unsafe_code)]

mod alltoall;
mod barrier;
mod bcast;
pub mod choice;
pub mod config;
mod gather;
mod idle;
pub mod link;
mod neighbor;
pub mod persistent;
mod reduce;
pub mod sched;
mod shm;
mod shm_blocks;
mod shm_data;
mod shm_stream;

pub use alltoall::{alltoall, alltoallv};
pub use barrier::barrier;
pub use bcast::bcast;
pub use config::CollConfig;
pub use gather::{allgather, allgatherv, gather, gatherv, scatter, scatterv};
pub use neighbor::{ineighbor_alltoallv, neighbor_alltoallv, Neighbors};
pub use reduce::{allreduce, exscan, reduce, reduce_local, reduce_scatter, scan};
pub use sched::{
    iallgather, iallgatherv, iallreduce, ialltoall, ialltoallv, ibarrier, ibcast, iexscan, igather,
    igatherv, ireduce, ireduce_scatter, iscan, iscatter, iscatterv,
};

/// Tags of the collectives' messages on the collective context. Blocking collectives on one
/// communicator run in the same order everywhere and messages between two ranks do not
/// overtake, so one tag per collective suffices. A blocking collective's message also
/// carries facts in `FLAGS`, which receives ignore when matching and then compare
/// (`link::Link`): whether it is a size header (`HEADER`) and the op mark of a reduction.
/// Nonblocking collectives' tags start at `PLAN_BASE`.
pub(crate) mod tag {
    /// The bits receives ignore: `HEADER` and the op mark.
    pub const FLAGS: i32 = 0x3f0;
    /// A size header of the agreement that precedes an algorithm chosen by size without the
    /// area (`reduce.rs`), not data.
    pub const HEADER: i32 = 0x10;
    /// Where the op mark of a reduction (`Reduction::mark`, 0..=15) sits.
    pub const MARK_SHIFT: u32 = 5;
    /// The mark of the messages a rank sends after it failed on another op: no op's, so
    /// that their receivers fail with `MPI_ERR_OP` too (`link::Link::after`).
    pub const FAILED_OP: i32 = 0x1f << MARK_SHIFT;
    /// The first tag of a nonblocking collective (`sched::Plan`), above every flag.
    pub const PLAN_BASE: i32 = 0x400;
    pub const BARRIER: i32 = 1;
    pub const BCAST: i32 = 2;
    pub const REDUCE: i32 = 3;
    pub const ALLREDUCE: i32 = 4;
    pub const GATHER: i32 = 5;
    pub const SCATTER: i32 = 6;
    pub const ALLGATHER: i32 = 7;
    pub const ALLTOALL: i32 = 8;
    pub const REDUCE_SCATTER: i32 = 9;
    pub const SCAN: i32 = 10;
    /// Setting up the shared-memory path (`shm`): the area's name, then the agreement.
    pub const SHM_SETUP: i32 = 11;
}

/// The root argument `MPI_ROOT` on an intercommunicator (this process is the root).
pub const ROOT: u32 = u32::MAX;
/// The root argument `MPI_PROC_NULL` on an intercommunicator (the root's group, not the root).
pub const PROC_NULL: u32 = u32::MAX - 1;

use crate::datatype::access::Scratch;
use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError};

/// The error of a collective whose ranks passed different sizes (an erroneous program):
/// `MPI_ERR_TRUNCATE` on each rank that sees it, before or instead of moving data.
pub(crate) fn mismatch(whose: &str, theirs: usize, mine: usize) -> MpiError {
    MpiError::new(
        ErrorClass::Truncate,
        format!(
            "{whose} passed {theirs} bytes and this rank {mine}: the count or datatype differs between the ranks"
        ),
    )
}

/// `b` as contiguous bytes: itself, or a packed copy held by `hold`.
pub(crate) fn flat(b: &Buf, hold: &mut Vec<Scratch>) -> Buf {
    if b.is_contiguous() {
        return *b;
    }
    let mut s = Scratch::copy_of(b);
    let f = s.buf();
    hold.push(s);
    f
}

/// The peers of rank `r` of `n` in an in-place all-to-all(v/w): every pair (i, j), i < j,
/// exchanges its blocks in one global order, (0, 1), (0, 2), ..., (1, 2), ... (so the
/// earliest pending pair always has both ranks ready); in that order rank r meets the others
/// in increasing rank order.
pub(crate) fn in_place_peers(n: usize, r: usize) -> impl Iterator<Item = usize> {
    (0..n).filter(move |&p| p != r)
}

/// Largest power of two not above `n` (n >= 1).
pub(crate) fn pof2_floor(n: u32) -> u32 {
    1 << (31 - n.leading_zeros())
}

/// Where rank `r` of a pairwise reduce-scatter puts the block it receives in a step, for an
/// op that is not commutative: the blocks of lower ranks arrive from the nearest down
/// (`Left`: `acc = theirs op acc`), then those of higher ranks from the last rank down
/// (`RightFirst`, then `Right`: `right = theirs op right`); at the end `acc = acc op right`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Left,
    RightFirst,
    Right,
}

/// The steps of rank `r`'s pairwise reduce-scatter on `n` ranks: (destination, source,
/// where the received block goes). Step s sends to `r + s` and receives from `r - s`.
pub(crate) fn pairwise_steps(r: usize, n: usize) -> impl Iterator<Item = (usize, usize, Side)> {
    (1..n).map(move |step| {
        let src = (r + n - step) % n;
        let side = if src < r {
            Side::Left
        } else if src == n - 1 {
            Side::RightFirst
        } else {
            Side::Right
        };
        ((r + step) % n, src, side)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applying the steps' sides to symbols gives rank order: a left part that grows down
    /// to rank 0, a right part that grows down from the last rank, left then right.
    #[test]
    fn pairwise_steps_keep_rank_order() {
        for n in 1..9 {
            for r in 0..n {
                let (mut left, mut right) = (vec![r], Vec::new());
                let mut dests = Vec::new();
                for (dst, src, side) in pairwise_steps(r, n) {
                    dests.push(dst);
                    match side {
                        Side::Left => left.insert(0, src),
                        Side::RightFirst => right = vec![src],
                        Side::Right => right.insert(0, src),
                    }
                }
                left.extend(right);
                assert_eq!(left, (0..n).collect::<Vec<_>>(), "rank {r} of {n}");
                dests.sort_unstable();
                let others: Vec<usize> = (0..n).filter(|&d| d != r).collect();
                assert_eq!(dests, others, "rank {r} of {n}");
            }
        }
    }
}
