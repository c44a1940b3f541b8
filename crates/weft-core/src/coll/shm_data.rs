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
//! - all-rank forms (allgather(v), alltoall, reduce-scatter) read every size they need, and
//!   all of them go by point-to-point when any needed block is too large
//!   (`Turned::PointToPoint`: the caller runs its usual algorithm);
//! - scan and exscan follow rank 0's size, which every rank reads: one turn, a stream of
//!   region-sized parts (one turn each, as a broadcast streams: `shm_stream.rs`), or
//!   point-to-point after every rank compared every size.
//!
//! Sizes that differ from what a rank expects (an erroneous program) fail with
//! `MPI_ERR_TRUNCATE` on that rank without leaving a message of the turn unreceived.
#![forbid(unsafe_code)]

use super::idle::Idle;
use super::link::{Link, Pending};
use super::mismatch;
use super::shm::{same_op, Turned};
use super::shm_stream;
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

/// Largest communicator whose scans above `WEFT_COLL_SHM_MAX` stream through the area: the
/// last rank combines every lower rank's vector (n - 1 combines, where recursive doubling
/// takes 2 log n exchanges of the whole vector).
const SCAN_STREAM_RANKS: u32 = 8;

/// How a scan moves its data, decided by rank 0's length (which every rank reads from the
/// first turn), so all ranks take the same number of turns whatever their own lengths.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ScanPath {
    /// Whole, in one turn.
    Area,
    /// In parts of this many bytes, one turn each (`shm_stream::part`).
    Stream(usize),
    /// Point-to-point (the area carried only the sizes and ops).
    Messages,
}

fn scan_path(comm: &Comm, len: usize) -> ScanPath {
    if len <= max(comm) {
        return ScanPath::Area;
    }
    match shm_stream::part(comm, len) {
        Some(part) if comm.size() <= SCAN_STREAM_RANKS => ScanPath::Stream(part),
        _ => ScanPath::Messages,
    }
}

/// `MPI_Scan` (`inclusive`: `recv` holds `mine` already) and `MPI_Exscan`: every rank
/// publishes `mine` and combines the contributions of the ranks below it (and its own,
/// inclusive) into its contiguous `recv`, in rank order. Rank 0's length picks the path
/// (`scan_path`): one turn, a stream of parts, or point-to-point, where every rank waits for
/// all and compares every size, so that all of them fail or all go on. On the other paths
/// only the sizes of the ranks below are compared (and rank 0's, which every rank reads).
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
    let (len, mark, me) = (mine.len(), red.mark(), comm.rank);
    // Every rank combines the contributions below its own, so nobody reads the last rank's:
    // it publishes its length and op alone (a 2-rank exscan of 64 KiB: one copy in three).
    let read = me + 1 < comm.size();
    match scan_path(comm, len) {
        _ if !read => turn.announce_marked(len, mark, &mut || idle.poll()),
        ScanPath::Area => turn.contribute_marked(mine, mark, &mut || idle.poll()),
        ScanPath::Stream(part) => {
            turn.contribute_part(len, part, mark, &mut || idle.poll(), |out| {
                mine.pack(0, out)
            })
        }
        ScanPath::Messages => turn.announce_marked(len, mark, &mut || idle.poll()),
    }
    let lead = if me == 0 {
        len
    } else {
        turn.wait_for(0, &mut || idle.poll());
        turn.len_of(0)
    };
    let path = scan_path(comm, lead);
    if path == ScanPath::Messages {
        all_sizes(comm, &turn, &mut idle, |_| len)?;
        same_op(&turn, 0..comm.size(), red)?;
        return Ok(Turned::PointToPoint);
    }
    let below = if inclusive { me + 1 } else { me };
    let mut checked = if len != lead {
        Err(mismatch("rank 0", lead, len))
    } else {
        Ok(())
    };
    for r in 0..below {
        turn.wait_for(r, &mut || idle.poll());
        let theirs = turn.len_of(r);
        if theirs != len {
            checked = checked.and(Err(mismatch(&format!("rank {r}"), theirs, len)));
        }
    }
    // The ranks below this one, whose contributions it combines, used the same op.
    checked = checked.and_then(|()| same_op(&turn, 0..below, red));
    match path {
        ScanPath::Stream(part) => {
            let bufs = (mine, recv, inclusive);
            scan_parts(
                area,
                turn,
                bufs,
                (me, read, red),
                (lead, part),
                checked,
                &mut idle,
            )?;
        }
        _ => {
            checked?;
            fold_prefix(&turn, recv, me, (len, 0..len), red, inclusive);
        }
    }
    Ok(Turned::Done)
}

/// `acc` (bytes `part` of the prefix) combined with bytes `part` of the `len`-byte
/// contributions of the ranks below `me`, in rank order: inclusive, `acc` holds this rank's
/// own part already; exclusive, it is overwritten.
fn fold_prefix(
    turn: &Turn,
    acc: &Buf,
    me: u32,
    (len, part): (usize, Range<usize>),
    red: &Reduction,
    inclusive: bool,
) {
    if inclusive {
        for r in (0..me).rev() {
            turn.read(r, len, |d| {
                acc.with_bytes_mut(|a| red.apply(&d[part.clone()], a))
            });
        }
    } else {
        fold_into(turn, acc, (0..me).rev(), len, part, red);
    }
}

/// The rest of a streamed scan after its `first` turn (which carried part 0 of this rank's
/// `mine`): `whole` bytes (rank 0's length) in parts of `part` bytes, one turn each, every
/// rank publishing its part k and then combining the lower ranks' parts k into bytes of
/// `recv`. Every rank takes every turn; a rank whose sizes or ops differ (`checked` failed)
/// publishes only lengths and combines nothing, then reports it. The ranks whose parts a
/// rank combines passed its sizes and op, so they publish every part; the last rank, whose
/// parts nobody reads (`read` false), publishes only lengths.
fn scan_parts(
    area: &CollArea,
    first: Turn,
    (mine, recv, inclusive): (&Buf, &Buf, bool),
    (me, read, red): (u32, bool, &Reduction),
    (whole, part): (usize, usize),
    checked: MpiResult<()>,
    idle: &mut Idle,
) -> MpiResult<()> {
    let combines = checked.is_ok();
    let mut turn = first;
    let mut at = 0;
    loop {
        let n = part.min(whole - at);
        if at > 0 && combines && read {
            turn.contribute_with(n, red.mark(), &mut || idle.poll(), |out| mine.pack(at, out));
        } else if at > 0 {
            turn.announce(0, &mut || idle.poll());
        }
        if combines {
            for r in 0..me {
                turn.wait_for(r, &mut || idle.poll());
            }
            fold_prefix(&turn, &recv.slice(at, n), me, (n, 0..n), red, inclusive);
        }
        at += n;
        if at == whole {
            return checked;
        }
        turn = area.begin();
    }
}
