//! Node-level collectives through shared memory that move blocks or combine prefixes:
//! gather(v), scatter, allgather(v), alltoall, reduce-scatter(-block), scan and exscan, on the
//! communicator's `CollArea` (set up and described in `shm.rs`).
//!
//! Every rank of a communicator with an area takes a turn in each of these collectives
//! whatever its sizes (the choice depends only on the communicator and the configuration), and
//! each contribution records its packed size. A contribution larger than the area's payloads
//! announces only its size (`Turn::announce`); the ranks that need it then see that and go by
//! point-to-point, so no rank decides alone on a value that only it knows:
//! - rooted forms (gather(v), scatter) move each large block by one point-to-point message
//!   between the root and its rank, which both know the block's size from the turn;
//! - all-rank forms (allgather(v), alltoall, reduce-scatter, scan) read every size they need,
//!   and all of them go by point-to-point when any needed block is too large
//!   (`Turned::PointToPoint`: the caller runs its usual algorithm).
//!
//! Sizes that differ from what a rank expects (an erroneous program) fail with
//! `MPI_ERR_TRUNCATE` on that rank without leaving a message of the turn unreceived.
#![forbid(unsafe_code)]

use super::idle::Idle;
use super::link::{Link, Pending};
use super::mismatch;
use super::shm::{same_op, Turned};
use super::tag;
use crate::datatype::access::Scratch;
use crate::datatype::Buf;
use crate::error::MpiResult;
use crate::object::Comm;
use crate::op::Reduction;
use crate::transport::shm::coll_area::{CollArea, Turn};
use std::ops::Range;

/// Where one rank's block goes (or comes from): packed bytes `offset..offset + len` of `buf`.
#[derive(Clone, Copy)]
pub(super) struct Place {
    pub buf: Buf,
    pub offset: usize,
    pub len: usize,
}

impl Place {
    /// The whole of `buf`.
    pub fn all(buf: &Buf) -> Place {
        Place {
            buf: *buf,
            offset: 0,
            len: buf.len(),
        }
    }

    /// Block `i` of `len` bytes of `buf`.
    pub fn block(buf: &Buf, i: usize, len: usize) -> Place {
        Place {
            buf: *buf,
            offset: i * len,
            len,
        }
    }

    /// Store `data` (at most `len` bytes) here.
    fn store(&self, data: &[u8]) {
        self.buf.unpack(self.offset, data);
    }
}

/// Copy `src` (any layout) to `at`.
pub(super) fn copy_into(src: &Buf, at: Place) {
    let len = src.len().min(at.len);
    if at.buf.is_contiguous() {
        src.copy_to(&at.buf.slice(at.offset, len), len);
    } else if src.is_contiguous() {
        src.with_bytes(|b| at.store(&b[..len]));
    } else {
        let s = Scratch::copy_of(src);
        at.store(&s.bytes()[..len]);
    }
}

/// Block `i` of `len` bytes of `buf` (any layout) as a contiguous buffer: a slice, or a
/// packed copy held by `hold`.
pub(super) fn block_of(buf: &Buf, i: usize, len: usize, hold: &mut Scratch) -> Buf {
    if buf.is_contiguous() {
        return buf.slice(i * len, len);
    }
    *hold = Scratch::new(len);
    buf.pack(i * len, hold.bytes_mut());
    hold.buf()
}

fn max(comm: &Comm) -> usize {
    comm.session.instance.config.coll.shm_max
}

/// Publish `mine` (or only its size, when it is too large for the area).
fn publish(comm: &Comm, turn: &Turn, mine: &Buf, idle: &mut Idle) -> bool {
    publish_marked(comm, turn, mine, 0, idle)
}

/// `publish`, with a reduction's op mark (`Reduction::mark`) for the others to compare.
fn publish_marked(comm: &Comm, turn: &Turn, mine: &Buf, mark: u8, idle: &mut Idle) -> bool {
    if mine.len() <= max(comm) {
        turn.contribute_marked(mine, mark, &mut || idle.poll());
        true
    } else {
        turn.announce_marked(mine.len(), mark, &mut || idle.poll());
        false
    }
}

/// A receive of a block that came by point-to-point, into its place (through scratch when the
/// place is not a contiguous byte range or the sizes differ).
struct Incoming {
    op: Pending,
    staged: Option<(Scratch, Place)>,
}

fn receive(link: &Link, from: u32, tag: i32, len: usize, at: Place) -> Incoming {
    if len == at.len && at.buf.is_contiguous() {
        let b = at.buf.slice(at.offset, len);
        return Incoming {
            op: link.irecv(from, tag, &b),
            staged: None,
        };
    }
    let mut s = Scratch::new(len);
    let op = link.irecv(from, tag, &s.buf());
    Incoming {
        op,
        staged: Some((s, at)),
    }
}

/// Wait for every incoming block and store the staged ones (what fits).
fn complete(link: &Link, incoming: Vec<Incoming>) -> MpiResult<()> {
    let mut result = Ok(());
    for i in incoming {
        result = result.and(link.wait(i.op));
        if let Some((s, at)) = i.staged {
            let n = s.len().min(at.len);
            at.store(&s.bytes()[..n]);
        }
    }
    result
}

/// `MPI_Gather(v)`: every rank but the root publishes `mine` (or sends it by point-to-point
/// when it is too large); the root stores rank r's block at `place(r)`. `mine` is `None` at
/// the root for `MPI_IN_PLACE`.
pub(super) fn gather(
    comm: &Comm,
    area: &CollArea,
    mine: Option<&Buf>,
    root: u32,
    place: impl Fn(u32) -> Place,
) -> MpiResult<()> {
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    if comm.rank != root {
        let mine = mine.unwrap_or(&Buf::EMPTY);
        if publish(comm, &turn, mine, &mut idle) {
            return Ok(());
        }
        return Link::new(comm).send(root, tag::GATHER, mine);
    }
    turn.arrive();
    let mut result = Ok(());
    if let Some(m) = mine {
        let own = place(root);
        if m.len() != own.len {
            result = Err(mismatch("this rank's send buffer", m.len(), own.len));
        }
        // What fits.
        copy_into(m, own);
    }
    let (link, max) = (Link::new(comm), max(comm));
    let mut incoming = Vec::new();
    for r in (0..comm.size()).filter(|&r| r != root) {
        turn.wait_for(r, &mut || idle.poll());
        let (len, at) = (turn.len_of(r), place(r));
        if len != at.len {
            result = result.and(Err(mismatch(&format!("rank {r}"), len, at.len)));
        }
        if len > max {
            incoming.push(receive(&link, r, tag::GATHER, len, at));
        } else {
            let n = len.min(at.len);
            turn.read(r, len, |d| at.store(&d[..n]));
        }
    }
    complete(&link, incoming).and(result)
}

/// `MPI_Scatter`: the root publishes its whole `send` (n blocks; point-to-point block by
/// block when too large), every other rank stores its block in `recv` (`None`: the root's
/// `MPI_IN_PLACE`).
pub(super) fn scatter(
    comm: &Comm,
    area: &CollArea,
    send: &Buf,
    recv: Option<&Buf>,
    root: u32,
) -> MpiResult<()> {
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    let n = comm.size() as usize;
    let link = Link::new(comm);
    if comm.rank == root {
        let block = send.len() / n;
        let mut result = Ok(());
        if let Some(r) = recv {
            let own = send.slice(root as usize * block, block);
            if r.len() != block {
                result = Err(mismatch("this rank's send block", block, r.len()));
            } else {
                own.copy_to(r, block);
            }
        }
        if publish(comm, &turn, send, &mut idle) {
            return result;
        }
        let mut ops = Vec::with_capacity(n);
        for i in (0..n).filter(|&i| i != root as usize) {
            match link.isend(i as u32, tag::SCATTER, &send.slice(i * block, block)) {
                Ok(op) => ops.push(op),
                Err(e) => result = result.and(Err(e)),
            }
        }
        return link.wait_all(ops).and(result);
    }
    let recv = recv.unwrap_or(&Buf::EMPTY);
    turn.arrive();
    turn.wait_for(root, &mut || idle.poll());
    let total = turn.len_of(root);
    let block = total / n;
    let result = if block * n != total || block != recv.len() {
        Err(mismatch("the root", block, recv.len()))
    } else {
        Ok(())
    };
    if total > max(comm) {
        let i = receive(&link, root, tag::SCATTER, block, Place::all(recv));
        return complete(&link, vec![i]).and(result);
    }
    let (at, k) = (comm.rank as usize * block, block.min(recv.len()));
    turn.read(root, total, |d| recv.unpack(0, &d[at..at + k]));
    result
}

/// Wait for every rank's contribution and check that rank r's is `expect(r)` bytes (every
/// rank sees every size, so all of them fail together); `Ok(false)` when some block is too
/// large for the area (point-to-point follows on every rank).
fn all_sizes(
    comm: &Comm,
    turn: &Turn,
    idle: &mut Idle,
    expect: impl Fn(u32) -> usize,
) -> MpiResult<bool> {
    turn.wait_all(&mut || idle.poll());
    let mut fits = true;
    for r in 0..comm.size() {
        let (theirs, mine) = (turn.len_of(r), expect(r));
        if theirs != mine {
            return Err(mismatch(&format!("rank {r}"), theirs, mine));
        }
        fits &= theirs <= max(comm);
    }
    Ok(fits)
}

/// `MPI_Allgather(v)`: this rank's block is already at `place(rank)`; every rank publishes it
/// and stores every other rank's block at its place.
pub(super) fn allgather(
    comm: &Comm,
    area: &CollArea,
    mine: &Buf,
    place: impl Fn(u32) -> Place,
) -> MpiResult<Turned> {
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    publish(comm, &turn, mine, &mut idle);
    if !all_sizes(comm, &turn, &mut idle, |r| place(r).len)? {
        return Ok(Turned::PointToPoint);
    }
    for r in (0..comm.size()).filter(|&r| r != comm.rank) {
        let at = place(r);
        turn.read(r, at.len, |d| at.store(d));
    }
    Ok(Turned::Done)
}

/// `MPI_Alltoall`: every rank publishes its whole send buffer (`send`, or `recv` in place),
/// then stores block `rank` of every rank's into its `recv` block.
pub(super) fn alltoall(
    comm: &Comm,
    area: &CollArea,
    send: Option<&Buf>,
    recv: &Buf,
) -> MpiResult<Turned> {
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    let len = recv.len();
    publish(comm, &turn, send.unwrap_or(recv), &mut idle);
    if !all_sizes(comm, &turn, &mut idle, |_| len)? {
        return Ok(Turned::PointToPoint);
    }
    let n = comm.size() as usize;
    let block = len / n;
    let at = comm.rank as usize * block;
    for r in 0..comm.size() {
        turn.read(r, len, |d| {
            recv.unpack(r as usize * block, &d[at..at + block])
        });
    }
    Ok(Turned::Done)
}

/// `MPI_Reduce_scatter(_block)`: every rank publishes its whole contiguous `input` and
/// combines bytes `offset..offset + output.len()` of all of them, in rank order, into its
/// contiguous `output` (which may be the start of `input`: the input is published first).
pub(super) fn reduce_scatter(
    comm: &Comm,
    area: &CollArea,
    input: &Buf,
    output: &Buf,
    offset: usize,
    red: &Reduction,
) -> MpiResult<Turned> {
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    let total = input.len();
    publish_marked(comm, &turn, input, red.mark(), &mut idle);
    let fits = all_sizes(comm, &turn, &mut idle, |_| total)?;
    // Every rank waited for all: all of them see a different op.
    same_op(&turn, 0..comm.size(), red)?;
    if !fits {
        return Ok(Turned::PointToPoint);
    }
    let part = offset..offset + output.len();
    fold_into(&turn, output, (0..comm.size()).rev(), total, part, red);
    Ok(Turned::Done)
}

/// `acc = x(first) op (... op x(last))` over `ranks` given highest first, `x(r)` being bytes
/// `part` of rank r's `len`-byte contribution: the lower rank is always the input, so
/// non-commutative ops combine in rank order.
fn fold_into(
    turn: &Turn,
    acc: &Buf,
    mut ranks: impl Iterator<Item = u32>,
    len: usize,
    part: Range<usize>,
    red: &Reduction,
) {
    let Some(top) = ranks.next() else { return };
    turn.read(top, len, |d| acc.unpack(0, &d[part.clone()]));
    for r in ranks {
        turn.read(r, len, |d| {
            acc.with_bytes_mut(|a| red.apply(&d[part.clone()], a))
        });
    }
}

/// `MPI_Scan` (`inclusive`: `recv` holds `mine` already) and `MPI_Exscan`: every rank
/// publishes `mine` and combines the contributions of the ranks below it (and its own,
/// inclusive) into its contiguous `recv`,
/// in rank order. Only those ranks' sizes are compared; a rank whose contribution is too
/// large waits for all, so that every rank sees that the scan goes by point-to-point.
pub(super) fn scan(
    comm: &Comm,
    area: &CollArea,
    mine: &Buf,
    recv: &Buf,
    red: &Reduction,
    inclusive: bool,
) -> MpiResult<Turned> {
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    let len = mine.len();
    if !publish_marked(comm, &turn, mine, red.mark(), &mut idle) {
        all_sizes(comm, &turn, &mut idle, |_| len)?;
        same_op(&turn, 0..comm.size(), red)?;
        return Ok(Turned::PointToPoint);
    }
    let me = comm.rank;
    let below = if inclusive { me + 1 } else { me };
    for r in 0..below {
        turn.wait_for(r, &mut || idle.poll());
        let theirs = turn.len_of(r);
        if theirs != len {
            return Err(mismatch(&format!("rank {r}"), theirs, len));
        }
    }
    // The ranks below this one, whose contributions it combines, used the same op.
    same_op(&turn, 0..below, red)?;
    if inclusive {
        // `recv` holds this rank's contribution already.
        for r in (0..me).rev() {
            turn.read(r, len, |d| recv.with_bytes_mut(|a| red.apply(d, a)));
        }
    } else {
        fold_into(&turn, recv, (0..me).rev(), len, 0..len, red);
    }
    Ok(Turned::Done)
}
