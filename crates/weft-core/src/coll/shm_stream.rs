//! Broadcasts and allreduces larger than the area's regions (`WEFT_COLL_SHM_MAX`), up to
//! `WEFT_COLL_SHM_STREAM_MAX`, streamed through the communicator's area (`coll/shm.rs`) in
//! parts of one region each, one turn per part: the root (for an allreduce, every rank)
//! packs part k into its region while the readers copy out part k-1, up to as many parts
//! ahead of the slowest reader as the area has regions. A message costs one copy in and one
//! copy out by every reader, through memory that stays in cache, instead of a chain of
//! point-to-point messages (each of them a copy in and a copy out too).
//!
//! Every part is one ordinary turn of the area's protocol (`transport/shm/coll_area.rs`,
//! with its loom model): streaming adds no synchronisation of its own. The first turn's
//! length word carries the whole message's length (`Turn::contribute_part`), so the ranks
//! agree before any later part moves: a broadcast's readers all follow the root's length,
//! and take as many turns as it needs even when their own length differs (they keep what
//! fits and then fail with `MPI_ERR_TRUNCATE`); the ranks of an allreduce all compare their
//! lengths and op marks in the first turn (a rank that streams marks it, `STREAMS`), and
//! stream only when every one matches, so a mismatch fails after that one turn on every
//! rank that compared, and nobody waits for a turn another rank does not take. Whether a
//! message streams depends only on the root's (or the compared) length, the op's element
//! size and the configuration, never on a value of one rank alone. `MPI_Reduce` does not
//! stream: a non-root whose whole part is one send to the root runs ahead without comparing
//! sizes (`coll/shm.rs`, `c/coll/runahead`), which a stream of turns, all of which every rank
//! must take, cannot allow.
#![forbid(unsafe_code)]

use super::mismatch;
use super::shm::Idle;
use crate::datatype::Buf;
use crate::error::MpiResult;
use crate::object::Comm;
use crate::op::Reduction;
use crate::transport::shm::coll_area::{CollArea, Turn};

/// In a reduction's op mark: this rank streams its contribution (ranks that would not
/// stream the same length, e.g. because their element size differs, fail the comparison
/// instead of taking different numbers of turns).
pub(super) const STREAMS: u8 = 0x40;

/// The part size when a message of `whole` bytes made of `unit`-byte elements streams
/// through the area: larger than a region, at most `WEFT_COLL_SHM_STREAM_MAX`, and the
/// regions hold whole elements.
pub(super) fn part(comm: &Comm, whole: usize, unit: usize) -> Option<usize> {
    let c = &comm.session.instance.config.coll;
    let streams = c.shm_max > 0
        && whole > c.shm_max
        && whole <= c.shm_stream_max
        && unit > 0
        && c.shm_max.is_multiple_of(unit);
    streams.then_some(c.shm_max)
}

/// (The root) `buf` in parts: the first in `first`, which announces the whole length, then
/// one turn per part.
pub(super) fn bcast_root(area: &CollArea, first: Turn, buf: &Buf, part: usize, idle: &mut Idle) {
    let whole = buf.len();
    let mut turn = first;
    let mut at = 0;
    loop {
        let n = part.min(whole - at);
        turn.contribute_part(whole, n, 0, &mut || idle.poll(), |out| buf.pack(at, out));
        at += n;
        if at == whole {
            return;
        }
        turn = area.begin();
    }
}

/// (A reader) the root's `whole`-byte message from `first` on (this rank has arrived there
/// and seen it published): every part, unpacked into `buf` as far as it fits. All parts
/// are taken even when `buf`'s length differs, then the mismatch is reported.
pub(super) fn bcast_reader(
    area: &CollArea,
    first: Turn,
    buf: &Buf,
    (root, whole, part): (u32, usize, usize),
    idle: &mut Idle,
) -> MpiResult<()> {
    let mut turn = first;
    let mut at = 0;
    loop {
        let n = part.min(whole - at);
        // A shorter buffer keeps what fits and skips the rest (still taking every turn).
        let keep = n.min(buf.len().saturating_sub(at));
        if keep > 0 {
            turn.read(root, n, |data| buf.unpack(at, &data[..keep]));
        }
        at += n;
        if at == whole {
            break;
        }
        turn = area.begin();
        turn.arrive();
        turn.wait_for(root, &mut || idle.poll());
    }
    if whole != buf.len() {
        return Err(mismatch("the root", whole, buf.len()));
    }
    Ok(())
}

/// The rest of a streamed allreduce after its first turn (`first`, where every rank
/// published its first part and compared): every rank combines part k of all ranks into
/// `acc` (contiguous, holding this rank's contribution) in rank order (`combine`, the same
/// steps as the unstreamed path), then publishes its part k+1 in the next turn. Part k of
/// `acc` is overwritten only after it was published.
pub(super) fn allreduce_parts(
    area: &CollArea,
    first: Turn,
    acc: &Buf,
    (red, part): (&Reduction, usize),
    idle: &mut Idle,
    combine: impl Fn(&Turn, &Buf),
) {
    let whole = acc.len();
    let mut turn = first;
    let mut at = 0;
    loop {
        let n = part.min(whole - at);
        turn.wait_all(&mut || idle.poll());
        combine(&turn, &acc.slice(at, n));
        at += n;
        if at == whole {
            return;
        }
        turn = area.begin();
        let n = part.min(whole - at);
        let mark = red.mark() | STREAMS;
        turn.contribute_part(whole, n, mark, &mut || idle.poll(), |out| acc.pack(at, out));
    }
}
