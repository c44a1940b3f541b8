//! Node-level collectives through shared memory: barrier, broadcast, reduce and allreduce of
//! small messages on an intracommunicator whose ranks all run on this node. Each rank
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

use super::tag;
use crate::datatype::Buf;
use crate::error::MpiResult;
use crate::instance::Instance;
use crate::object::area::{create, eligible, NAME_BYTES};
use crate::object::exchange::{self, Channel};
use crate::object::Comm;
use crate::op::Reduction;
use crate::progress;
use crate::sync::Backoff;
use crate::transport::shm::coll_area::{CollArea, Turn};

/// Empty polls between two point-to-point progress passes while waiting.
const PROGRESS_EVERY: u32 = 64;

/// The communicator's area if the shared-memory path applies to a message of `len` bytes,
/// set up on first use. Every rank decides alike: the communicator, its placement, the
/// configuration and `len` are the same everywhere.
pub(super) fn area(comm: &Comm, len: usize) -> MpiResult<Option<&CollArea>> {
    if len > comm.session.instance.config.coll.shm_max {
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

/// How a rank waits for the others: the instance's backoff, and now and then a progress pass
/// (every VCI and the polled work) so this rank's pending point-to-point operations and
/// schedules keep moving: a peer may need them before it can join the collective.
struct Idle<'a> {
    inst: &'a Instance,
    backoff: Backoff,
    polls: u32,
}

impl<'a> Idle<'a> {
    fn new(comm: &'a Comm) -> Idle<'a> {
        let inst = &comm.session.instance;
        Idle {
            inst,
            backoff: inst.backoff(),
            polls: 0,
        }
    }

    fn poll(&mut self) {
        self.polls += 1;
        if self.polls % PROGRESS_EVERY == 0 {
            progress::progress_all(self.inst);
        }
        self.backoff.idle();
    }
}

pub(super) fn barrier(comm: &Comm, area: &CollArea) {
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    turn.arrive();
    turn.wait_all_arrived(&mut || idle.poll());
}

/// `buf` of any layout: the root packs into its slot, the others unpack from it.
pub(super) fn bcast(comm: &Comm, area: &CollArea, buf: &Buf, root: u32) {
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    if comm.rank == root {
        turn.contribute(buf, &mut || idle.poll());
    } else {
        // Arrival tells the next writer of a slot that this rank is done with earlier turns.
        turn.arrive();
        turn.wait_for(root, &mut || idle.poll());
        turn.read(root, buf.len(), |data| buf.unpack(0, data));
    }
}

/// `recv` is contiguous and holds this rank's contribution; it receives the result.
pub(super) fn allreduce(comm: &Comm, area: &CollArea, recv: &Buf, red: &Reduction) {
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    turn.contribute(recv, &mut || idle.poll());
    turn.wait_all(&mut || idle.poll());
    combine_all(&turn, comm, recv, true, red);
}

/// `mine` is this rank's contribution; the root's contiguous `recv` receives the result.
pub(super) fn reduce(
    comm: &Comm,
    area: &CollArea,
    mine: &Buf,
    recv: &Buf,
    red: &Reduction,
    root: u32,
) {
    let mut idle = Idle::new(comm);
    let turn = area.begin();
    turn.contribute(mine, &mut || idle.poll());
    if comm.rank == root {
        turn.wait_all(&mut || idle.poll());
        combine_all(&turn, comm, recv, mine == recv, red);
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
