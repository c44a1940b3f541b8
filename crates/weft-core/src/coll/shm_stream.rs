//! Broadcasts larger than the area's regions (`WEFT_COLL_SHM_MAX`), up to
//! `WEFT_COLL_SHM_STREAM_MAX`, streamed through the communicator's area (`coll/shm.rs`) in
//! parts of one region each, one turn per part: the root packs part k into its region while
//! the readers copy out part k-1, up to as many parts ahead of the slowest reader as the area
//! has regions. A message costs one copy in and one copy out by every reader, through memory
//! that stays in cache, instead of a chain of point-to-point messages (each of them a copy in
//! and a copy out too).
//!
//! Every part is one ordinary turn of the area's protocol (`transport/shm/coll_area.rs`,
//! with its loom model): streaming adds no synchronisation of its own. The first turn's
//! length word carries the whole message's length (`Turn::contribute_part`), so the readers
//! all follow the root's length and take as many turns as it needs even when their own
//! length differs (they keep what fits and then fail with `MPI_ERR_TRUNCATE`): nobody waits
//! for a turn another rank does not take. Whether a message streams depends only on the
//! root's length and the configuration. Scan and exscan stream too, in `coll/shm_data.rs`
//! (rank 0's length plays the root's). Reduce and allreduce do not (`coll/shm.rs`, `Path`):
//! a reduce's leaves run ahead without comparing sizes (`c/coll/runahead`), which a stream
//! of turns, all of which every rank must take, cannot allow; a streamed allreduce (every
//! rank publishing part k+1 while combining part k) measured slower than point-to-point.
#![forbid(unsafe_code)]

use super::idle::Idle;
use super::mismatch;
use crate::datatype::Buf;
use crate::error::MpiResult;
use crate::object::Comm;
use crate::transport::shm::coll_area::{CollArea, Turn};

/// The part size when a broadcast (or scan) of `whole` bytes streams through the area: larger
/// than a region and at most `WEFT_COLL_SHM_STREAM_MAX`.
pub(super) fn part(comm: &Comm, whole: usize) -> Option<usize> {
    let c = &comm.session.instance.config.coll;
    let streams = c.shm_max > 0 && whole > c.shm_max && whole <= c.shm_stream_max;
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
