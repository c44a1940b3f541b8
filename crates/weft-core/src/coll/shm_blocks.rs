//! Node-level collectives through shared memory whose contributions are several blocks of
//! sizes only their sender knows: `MPI_Scatterv`, `MPI_Alltoallv`/`MPI_Alltoallw` and the
//! neighbourhood collectives, on the communicator's `CollArea` (set up in `shm.rs`; the
//! single-block collectives are in `shm_data.rs`).
//!
//! A contribution is the sender's blocks packed one after the other behind a header of
//! little-endian 32-bit words (payloads are at most `WEFT_COLL_SHM_MAX` <= 64 KiB):
//! - `Header::Ends` (scatterv, all-to-all-v: one block per rank, in rank order): n end
//!   offsets, block i being data bytes `end[i-1]..end[i]`;
//! - `Header::Addressed` (neighbourhood: one block per destination): the block count k, k
//!   end offsets, then the k destination ranks (`NOBODY` for `MPI_PROC_NULL`), so a receiver
//!   finds the block addressed to it without knowing the sender's neighbours.
//!
//! A contribution too large for the area announces only its size; every rank that needs it
//! sees that, and the collective goes by point-to-point on every rank involved
//! (`Turned::PointToPoint`): the decision never rests on a value only one rank knows. A
//! block whose size differs from the receive block fails that rank's call with
//! `MPI_ERR_TRUNCATE` after copying what fits (as `shm_data.rs`).
#![forbid(unsafe_code)]

use super::idle::Idle;
use super::mismatch;
use super::shm::Turned;
use crate::datatype::Buf;
use crate::error::MpiResult;
use crate::object::Comm;
use crate::transport::shm::coll_area::{CollArea, Turn};

/// Bytes of one header word.
const WORD: usize = 4;
/// The destination rank of a block for `MPI_PROC_NULL` (nobody reads it).
pub(super) const NOBODY: u32 = u32::MAX;

/// How a contribution's header names its blocks (module doc).
#[derive(Clone, Copy)]
enum Header {
    Ends,
    Addressed,
}

fn max(comm: &Comm) -> usize {
    comm.session.instance.config.coll.shm_max
}

fn word(d: &[u8], i: usize) -> usize {
    let mut w = [0u8; WORD];
    w.copy_from_slice(&d[i * WORD..(i + 1) * WORD]);
    u32::from_le_bytes(w) as usize
}

fn put(out: &mut [u8], i: usize, v: usize) {
    out[i * WORD..(i + 1) * WORD].copy_from_slice(&(v as u32).to_le_bytes());
}

/// Header words of `k` blocks.
fn header_words(header: Header, k: usize) -> usize {
    match header {
        Header::Ends => k,
        Header::Addressed => 1 + 2 * k,
    }
}

/// Bytes of the contribution of `parts`.
fn packed_len(header: Header, parts: &[Buf]) -> usize {
    let data: usize = parts.iter().map(Buf::len).sum();
    header_words(header, parts.len()) * WORD + data
}

/// Write the contribution of `parts` (with `to`, their destinations, for `Addressed`) into
/// `out`, which is `packed_len` bytes.
fn pack(out: &mut [u8], header: Header, parts: &[Buf], to: &[u32]) {
    let k = parts.len();
    let first_end = match header {
        Header::Ends => 0,
        Header::Addressed => {
            put(out, 0, k);
            for (i, &d) in to.iter().enumerate() {
                put(out, 1 + k + i, d as usize);
            }
            1
        }
    };
    let mut at = header_words(header, k) * WORD;
    let base = at;
    for (i, p) in parts.iter().enumerate() {
        p.pack(0, &mut out[at..at + p.len()]);
        at += p.len();
        put(out, first_end + i, at - base);
    }
}

/// Block `i` of a contribution whose header has its end offsets from word `first_end` and
/// is `words` long.
fn block_at(d: &[u8], first_end: usize, words: usize, i: usize) -> &[u8] {
    let start = if i == 0 {
        0
    } else {
        word(d, first_end + i - 1)
    };
    let base = words * WORD;
    &d[base + start..base + word(d, first_end + i)]
}

/// Block `i` of a contribution of `n` blocks with `Header::Ends`.
fn block(d: &[u8], n: usize, i: usize) -> &[u8] {
    block_at(d, 0, n, i)
}

/// Publish `parts` (or only the size, when too large for the area): whether they went.
fn publish(
    comm: &Comm,
    turn: &Turn,
    header: Header,
    parts: &[Buf],
    to: &[u32],
    idle: &mut Idle,
) -> bool {
    let len = packed_len(header, parts);
    if len <= max(comm) {
        turn.contribute_with(len, 0, &mut || idle.poll(), |out| {
            pack(out, header, parts, to)
        });
        true
    } else {
        turn.announce(len, &mut || idle.poll());
        false
    }
}

/// Wait for every rank's contribution: whether all of them went through the area (every
/// rank waits for all, so all of them see one that did not fit and go by point-to-point).
fn all_fit(comm: &Comm, turn: &Turn, idle: &mut Idle) -> bool {
    turn.wait_all(&mut || idle.poll());
    let max = max(comm);
    (0..comm.size()).all(|r| turn.len_of(r) <= max)
}

/// Copy `data` into `at` (what fits); `MPI_ERR_TRUNCATE` naming `whose` when the sizes
/// differ.
fn store(data: &[u8], at: &Buf, whose: impl FnOnce() -> String) -> MpiResult<()> {
    let k = data.len().min(at.len());
    at.unpack(0, &data[..k]);
    if data.len() != at.len() {
        return Err(mismatch(&whose(), data.len(), at.len()));
    }
    Ok(())
}

/// `MPI_Scatterv`: the root publishes its n blocks `parts`, every other rank copies its
/// block into `recv` (`None`: the root's `MPI_IN_PLACE`; the root's own block is the
/// caller's). Returns at the root as soon as it has published.
pub(super) fn scatterv(
    comm: &Comm,
    area: &CollArea,
    parts: &[Buf],
    recv: Option<&Buf>,
    root: u32,
) -> MpiResult<Turned> {
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    if comm.rank == root {
        let went = publish(comm, &turn, Header::Ends, parts, &[], &mut idle);
        return Ok(if went {
            Turned::Done
        } else {
            Turned::PointToPoint
        });
    }
    turn.arrive();
    turn.wait_for(root, &mut || idle.poll());
    let len = turn.len_of(root);
    if len > max(comm) {
        return Ok(Turned::PointToPoint);
    }
    let (n, me) = (comm.size() as usize, comm.rank as usize);
    let recv = recv.unwrap_or(&Buf::EMPTY);
    turn.read(root, len, |d| {
        store(block(d, n, me), recv, || "the root".into())
    })?;
    Ok(Turned::Done)
}

/// `MPI_Alltoallv`/`MPI_Alltoallw`: every rank publishes its n send blocks (`send`, or
/// `recv` for `MPI_IN_PLACE`) and copies block `rank` of every rank's into its receive
/// block of that rank.
pub(super) fn alltoallv(
    comm: &Comm,
    area: &CollArea,
    send: Option<&[Buf]>,
    recv: &[Buf],
) -> MpiResult<Turned> {
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    publish(
        comm,
        &turn,
        Header::Ends,
        send.unwrap_or(recv),
        &[],
        &mut idle,
    );
    if !all_fit(comm, &turn, &mut idle) {
        return Ok(Turned::PointToPoint);
    }
    let (n, me) = (comm.size() as usize, comm.rank);
    let mut result = Ok(());
    // In place, this rank's own block stays where it is.
    for r in (0..comm.size()).filter(|&r| r != me || send.is_some()) {
        let got = turn.read(r, turn.len_of(r), |d| {
            store(block(d, n, me as usize), &recv[r as usize], || {
                format!("rank {r}")
            })
        });
        result = result.and(got);
    }
    result.map(|()| Turned::Done)
}

/// Which block of a source's contribution a neighbourhood receive takes.
#[derive(Clone, Copy)]
pub(super) enum Pick {
    /// Block i (a Cartesian grid: the direction says which).
    Index(usize),
    /// The m-th block addressed to this rank (graphs: repeated edges match in list order).
    Occurrence(usize),
}

/// A block of an `Addressed` contribution `d`, picked for rank `me`.
fn addressed(d: &[u8], me: u32, pick: Pick) -> Option<&[u8]> {
    let k = word(d, 0);
    let words = header_words(Header::Addressed, k);
    let i = match pick {
        Pick::Index(i) => Some(i).filter(|&i| i < k),
        Pick::Occurrence(m) => (0..k).filter(|&i| word(d, 1 + k + i) == me as usize).nth(m),
    }?;
    Some(block_at(d, 1, words, i))
}

/// A neighbourhood collective (every form is an all-to-all-v over the neighbours): every
/// rank publishes `send[k]` addressed to `to[k]`, then each `(source, pick, buf)` of
/// `from` copies that source's picked block into `buf`.
pub(super) fn neighbors(
    comm: &Comm,
    area: &CollArea,
    send: &[Buf],
    to: &[u32],
    from: &[(u32, Pick, Buf)],
) -> MpiResult<Turned> {
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    publish(comm, &turn, Header::Addressed, send, to, &mut idle);
    if !all_fit(comm, &turn, &mut idle) {
        return Ok(Turned::PointToPoint);
    }
    let mut result = Ok(());
    for &(s, pick, buf) in from {
        let got = turn.read(s, turn.len_of(s), |d| match addressed(d, comm.rank, pick) {
            Some(b) => store(b, &buf, || format!("neighbour {s}")),
            None => Err(mismatch(
                &format!("neighbour {s} (no block for this rank)"),
                0,
                buf.len(),
            )),
        });
        result = result.and(got);
    }
    result.map(|()| Turned::Done)
}
