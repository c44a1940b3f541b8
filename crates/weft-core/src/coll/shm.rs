//! Node-level collectives through shared memory: barrier, broadcast, reduce and allreduce of
//! small messages on an intracommunicator whose ranks all run on this node (the collectives
//! that move blocks or combine prefixes are in `shm_data.rs`). Each rank
//! publishes into its own slot of the communicator's `CollArea` (see its protocol) and reads
//! the others' slots, so a small message costs about one cache-line transfer per reader
//! instead of a chain of point-to-point messages.
//!
//! The area is set up by the first collective that can use it (`area`): rank 0 creates a
//! fresh segment (or takes the one it prepared while a group communicator's members were
//! still agreeing on its context id: `object::area::prepare`), broadcasts its name over point-to-point, the
//! others attach, and all agree whether everyone succeeded; if not, every rank falls back to
//! point-to-point for good.
#![forbid(unsafe_code)]

use super::idle::Idle;
use super::link::Link;
use super::{mismatch, shm_stream, tag};
use crate::datatype::access::Scratch;
use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::object::area::{create, eligible, NAME_BYTES};
use crate::object::exchange::{self, Channel};
use crate::object::Comm;
use crate::op::Reduction;
use crate::transport::shm::coll_area::{CollArea, Turn};

/// The communicator's area, set up on first use, for a collective that may use it: every
/// rank decides alike, since the communicator, its placement and the configuration are the
/// same everywhere; the message size does not count (ranks of an erroneous program may pass
/// different sizes, and must still meet in the same turn, where they compare them). With
/// `WEFT_COLL_SHM_MAX=0` only the barrier uses it.
pub(super) fn area(comm: &Comm, carries_data: bool) -> MpiResult<Option<&CollArea>> {
    if carries_data && comm.session.instance.config.coll.shm_max == 0 {
        return Ok(None);
    }
    if let Some(area) = comm.coll_area.get() {
        return Ok(area.as_ref());
    }
    let area = if eligible(comm) { set_up(comm)? } else { None };
    // Collectives on one communicator do not overlap (MPI's rule), so nobody set it meanwhile.
    let _ = comm.coll_area.set(area);
    Ok(comm.coll_area.get().and_then(Option::as_ref))
}

/// What a collective's turn on the area decided.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Turned {
    /// The data moved through the area.
    Done,
    /// Every rank's size is the same and too large for the area: point-to-point follows.
    PointToPoint,
    /// (Broadcast) the root sends this many bytes by point-to-point, which is not what this
    /// rank passed: it must still take part, then report the mismatch.
    Mismatch(usize),
}

fn set_up(comm: &Comm) -> MpiResult<Option<CollArea>> {
    let inst = &comm.session.instance;
    let (size, max) = (comm.size(), inst.config.coll.shm_max);
    let ch = Channel::collective(comm);
    let members = exchange::all(size);
    let me = comm.rank as usize;
    let mut area = None;
    let mut name = [0u8; NAME_BYTES];
    if me == 0 {
        let prepared = comm
            .prepared_area
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        // A failure leaves the name empty: everyone then falls back.
        if let Some((a, path)) = prepared.or_else(|| create(comm)) {
            name[..path.len()].copy_from_slice(path.as_bytes());
            area = Some(a);
        }
    }
    let agreed = share(&ch, &members, me, &mut name, &mut area, size, max);
    match agreed {
        Ok(true) => Ok(area),
        other => {
            // Abandoned: remove the name while someone may not have attached.
            if let Some(a) = &area {
                a.release_name();
            }
            other.map(|_| None)
        }
    }
}

/// Broadcast rank 0's `name`, attach it elsewhere, and agree whether every rank holds the
/// area.
fn share(
    ch: &Channel,
    members: &[u32],
    me: usize,
    name: &mut [u8; NAME_BYTES],
    area: &mut Option<CollArea>,
    size: u32,
    max: usize,
) -> MpiResult<bool> {
    ch.bcast(members, me, 0, tag::SHM_SETUP, name)?;
    let end = name.iter().position(|&b| b == 0).unwrap_or(NAME_BYTES);
    if end == 0 {
        return Ok(false);
    }
    if me != 0 {
        *area = std::str::from_utf8(&name[..end])
            .ok()
            .and_then(|path| CollArea::attach(path, size, me as u32, max).ok());
    }
    let mut ok = [u64::from(area.is_some())];
    ch.allreduce_and(members, me, tag::SHM_SETUP, &mut ok)?;
    Ok(ok[0] == 1)
}

pub(super) fn barrier(comm: &Comm, area: &CollArea) {
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    turn.arrive();
    turn.wait_all_arrived(&mut || idle.poll());
}

/// `buf` of any layout: the root packs into its slot (or, too large for it, announces its
/// size there), the others compare the root's size with theirs and unpack.
pub(super) fn bcast(comm: &Comm, area: &CollArea, buf: &Buf, root: u32) -> MpiResult<Turned> {
    let max = comm.session.instance.config.coll.shm_max;
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    if comm.rank == root {
        if buf.len() <= max {
            turn.contribute(buf, &mut || idle.poll());
            return Ok(Turned::Done);
        }
        if let Some(part) = shm_stream::part(comm, buf.len()) {
            shm_stream::bcast_root(area, turn, buf, part, &mut idle);
            return Ok(Turned::Done);
        }
        turn.announce(buf.len(), &mut || idle.poll());
        return Ok(Turned::PointToPoint);
    }
    // Arrival tells the next writer of a slot that this rank is done with earlier turns.
    turn.arrive();
    turn.wait_for(root, &mut || idle.poll());
    let len = turn.len_of(root);
    if let Some(part) = shm_stream::part(comm, len) {
        shm_stream::bcast_reader(area, turn, buf, (root, len, part), &mut idle)?;
        return Ok(Turned::Done);
    }
    if len > max {
        return Ok(if len == buf.len() {
            Turned::PointToPoint
        } else {
            Turned::Mismatch(len)
        });
    }
    let n = len.min(buf.len());
    turn.read(root, len, |data| buf.unpack(0, &data[..n]));
    if len != buf.len() {
        return Err(mismatch("the root", len, buf.len()));
    }
    Ok(Turned::Done)
}

/// In a reduce contribution's mark: this rank announced its size and went on by
/// point-to-point without comparing, its only message one send to its parent in the tree,
/// which drains it if the sizes or ops differ (`reduce`).
const RUNS_AHEAD: u8 = 0x80;

/// How a reduction's contribution travels. Reductions do not stream through the area: a
/// reduce's leaves run ahead without comparing sizes, which a stream of turns cannot allow
/// (`c/coll/runahead`), and a streamed allreduce measured slower than point-to-point (2
/// ranks, 64 KiB: 27.3 against 16.0 µs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    /// Whole, in one turn.
    Area,
    /// By point-to-point messages (the area carries only its size and op).
    Messages,
}

fn path(comm: &Comm, mine: &Buf) -> Path {
    if mine.len() <= comm.session.instance.config.coll.shm_max {
        Path::Area
    } else {
        Path::Messages
    }
}

/// Publish this rank's size and op (with the data, or its first part, when it goes through
/// the area; `flags` added to the op mark) and, when `wait`, check every rank's against
/// them: a difference fails the call on every rank that waited.
fn publish_and_compare(
    comm: &Comm,
    turn: &Turn,
    mine: &Buf,
    red: &Reduction,
    (path, wait, flags): (Path, bool, u8),
    idle: &mut Idle,
) -> MpiResult<()> {
    let mark = red.mark();
    match path {
        Path::Area => turn.contribute_marked(mine, mark | flags, &mut || idle.poll()),
        Path::Messages => turn.announce_marked(mine.len(), mark | flags, &mut || idle.poll()),
    }
    if wait {
        turn.wait_all(&mut || idle.poll());
        // One read of each rank's length word; a size difference is reported before an op's.
        let mut differing = None;
        for r in 0..comm.size() {
            let (theirs, their_mark) = turn.len_and_mark_of(r);
            if theirs != mine.len() {
                return Err(mismatch(&format!("rank {r}"), theirs, mine.len()));
            }
            if their_mark & !RUNS_AHEAD != mark && differing.is_none() {
                differing = Some(r);
            }
        }
        if let Some(r) = differing {
            return Err(other_op(r, red));
        }
    }
    Ok(())
}

/// `MPI_ERR_OP` when one of `ranks` published another op mark than `red`'s.
pub(super) fn same_op(
    turn: &Turn,
    mut ranks: impl Iterator<Item = u32>,
    red: &Reduction,
) -> MpiResult<()> {
    let mark = red.mark();
    match ranks.find(|&r| turn.len_and_mark_of(r).1 != mark) {
        None => Ok(()),
        Some(r) => Err(other_op(r, red)),
    }
}

/// The error of a reduction whose rank `r` passed another op than this rank's.
fn other_op(r: u32, red: &Reduction) -> MpiError {
    MpiError::new(
        ErrorClass::Op,
        format!(
            "rank {r} passed another op than this rank's {:?}: the op differs between the ranks",
            red.op
        ),
    )
}

/// `recv` is contiguous and holds this rank's contribution; it receives the result. Every
/// rank waits for all, so all of them see a size mismatch.
pub(super) fn allreduce(
    comm: &Comm,
    area: &CollArea,
    recv: &Buf,
    red: &Reduction,
) -> MpiResult<Turned> {
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    let path = path(comm, recv);
    publish_and_compare(comm, &turn, recv, red, (path, true, 0), &mut idle)?;
    match path {
        Path::Area => combine_all(&turn, comm, recv, true, red),
        Path::Messages => return Ok(Turned::PointToPoint),
    }
    Ok(Turned::Done)
}

/// `mine` is this rank's contribution; the root's contiguous `recv` receives the result.
/// The root compares every rank's size and op; so does a rank whose data is too large for
/// the area, unless its whole part of the point-to-point algorithm is one send to its parent
/// (`ahead`): it goes on at once, as it would without the area (a reduce's leaves run ahead
/// of the root), and the parent receives its message even when the call fails.
/// `parent_of(r)`: the parent of rank r if r is a leaf that may run ahead. A parent whose
/// data goes through the area compares nothing, so it waits for those children alone: one
/// that ran ahead passed more data than it (`c/coll/reduce_leaves`).
/// A non-root whose data goes through the area also waits for the root's contribution and
/// compares with it (`same_as_root`).
pub(super) fn reduce(
    comm: &Comm,
    area: &CollArea,
    mine: &Buf,
    recv: &Buf,
    red: &Reduction,
    root: u32,
    (ahead, parent_of): (bool, &dyn Fn(u32) -> Option<u32>),
) -> MpiResult<Turned> {
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    let is_root = comm.rank == root;
    let path = path(comm, mine);
    let ahead = ahead && path == Path::Messages;
    let wait = is_root || (path != Path::Area && !ahead);
    let flags = if ahead { RUNS_AHEAD } else { 0 };
    let children = || (0..comm.size()).filter(|&r| parent_of(r) == Some(comm.rank));
    if let Err(e) = publish_and_compare(comm, &turn, mine, red, (path, wait, flags), &mut idle) {
        if wait {
            drain_ahead(comm, &turn, children());
        }
        return Err(e);
    }
    if !wait && path == Path::Area {
        for c in children() {
            turn.wait_for(c, &mut || idle.poll());
        }
        if let Some(c) = children().find(|&c| turn.len_and_mark_of(c).1 & RUNS_AHEAD != 0) {
            drain_ahead(comm, &turn, children());
            return Err(mismatch(&format!("rank {c}"), turn.len_of(c), mine.len()));
        }
    }
    if path == Path::Area && !is_root {
        same_as_root(&turn, mine, red, root, &mut idle)?;
    }
    match path {
        Path::Area if is_root => combine_all(&turn, comm, recv, mine == recv, red),
        Path::Area => {}
        Path::Messages => return Ok(Turned::PointToPoint),
    }
    Ok(Turned::Done)
}

/// (A non-root of a reduce through the area) wait for the root's contribution and compare
/// its size and op with this rank's, so that every rank of a reduce whose root passed
/// another op (an erroneous program) fails, not only the root (MPICH's
/// `errors/coll/reduceop`). Waiting for the root alone keeps the turns of the other ranks
/// independent; the root compares every rank's.
fn same_as_root(
    turn: &Turn,
    mine: &Buf,
    red: &Reduction,
    root: u32,
    idle: &mut Idle,
) -> MpiResult<()> {
    turn.wait_for(root, &mut || idle.poll());
    let (theirs, _) = turn.len_and_mark_of(root);
    if theirs != mine.len() {
        return Err(mismatch("the root", theirs, mine.len()));
    }
    same_op(turn, std::iter::once(root), red)
}

/// (A rank of a reduce that failed on the area) receive the message of every one of
/// `children` that ran ahead, so that no send is left waiting for its receive or for a later
/// collective. Its errors add nothing to the mismatch already reported.
fn drain_ahead(comm: &Comm, turn: &Turn, children: impl Iterator<Item = u32>) {
    let link = Link::new(comm);
    for r in children {
        let (len, mark) = turn.len_and_mark_of(r);
        if mark & RUNS_AHEAD != 0 {
            let mut sink = Scratch::new(len);
            let _ = link.recv(r, tag::REDUCE, &sink.buf());
        }
    }
}

/// `acc = x0 op (x1 op (... op x(n-1)))` from the published contributions: rank order, so
/// non-commutative ops are right, and the same steps on every rank, so every rank gets the
/// same bits. Each step is `inout = input op inout` with the lower rank as input, which needs
/// no copies. `holds_mine`: `acc` holds this rank's contribution already.
fn combine_all(turn: &Turn, comm: &Comm, acc: &Buf, holds_mine: bool, red: &Reduction) {
    let (len, n) = (acc.len(), comm.size());
    if !(holds_mine && comm.rank == n - 1) {
        turn.read(n - 1, len, |last| acc.unpack(0, last));
    }
    for r in (0..n - 1).rev() {
        turn.read(r, len, |x| acc.with_bytes_mut(|a| red.apply(x, a)));
    }
}
