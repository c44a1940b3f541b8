//! Collective operations on intracommunicators: algorithms chosen by communicator and message
//! size (or forced with `WEFT_COLL_*`), built on point-to-point messages on the
//! communicator's collective context id.
//!
//! Buffers are `Buf`s: contiguous user memory (the ABI layer resolves `MPI_IN_PLACE`, passed
//! here as `None` for the send side) and library-owned `Scratch`. Every function waits for all
//! of the operations it started before returning, also on error, so scratch memory is never
//! freed under a pending receive.
#![forbid(unsafe_code)]

mod alltoall;
mod barrier;
mod bcast;
pub mod config;
mod gather;
pub mod link;
pub mod persistent;
mod reduce;
pub mod sched;

pub use alltoall::{alltoall, alltoallv};
pub use barrier::barrier;
pub use bcast::bcast;
pub use config::CollConfig;
pub use gather::{allgather, allgatherv, gather, gatherv, scatter, scatterv};
pub use reduce::{allreduce, exscan, reduce, reduce_local, reduce_scatter, scan};
pub use sched::{
    iallgather, iallgatherv, iallreduce, ialltoall, ialltoallv, ibarrier, ibcast, iexscan, igather,
    igatherv, ireduce, ireduce_scatter, iscan, iscatter, iscatterv,
};

/// Tags of the collectives' messages on the collective context. Blocking collectives on one
/// communicator run in the same order everywhere and messages between two ranks do not
/// overtake, so one tag per collective suffices.
pub(crate) mod tag {
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
}

/// Largest power of two not above `n` (n >= 1).
pub(crate) fn pof2_floor(n: u32) -> u32 {
    1 << (31 - n.leading_zeros())
}
