//! The shared memory of a communicator's node-level collectives (`coll::shm` runs the
//! collectives on it): whether a communicator can have one, and creating it.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicU64, Ordering};

use super::Comm;
use crate::transport::shm::coll_area::{CollArea, MAX_RANKS};
use crate::transport::Transports;

/// Bytes of the broadcast segment name (NUL-padded; all zero: no area).
pub(crate) const NAME_BYTES: usize = 128;

/// Areas this process created (part of their names, with the pid).
static CREATED: AtomicU64 = AtomicU64::new(0);

/// An intracommunicator of 2..=64 ranks, all on this node, with the path switched on.
pub(crate) fn eligible(comm: &Comm) -> bool {
    let inst = &comm.session.instance;
    inst.config.coll.shm_max > 0
        && !comm.is_inter()
        && (2..=MAX_RANKS).contains(&comm.size())
        && comm
            .group
            .members()
            .iter()
            .all(|&p| Transports::is_node_local(inst.transports.route(p)))
}

/// Rank 0's area for `comm`, created ahead of its first collective (`None` elsewhere, when
/// the path does not apply, or when creation fails: the first collective then tries again).
pub(super) fn prepare(comm: &Comm) -> Option<(CollArea, String)> {
    if comm.rank != 0 || !eligible(comm) {
        return None;
    }
    create(comm)
}

/// A fresh area for `comm` and its name.
pub(crate) fn create(comm: &Comm) -> Option<(CollArea, String)> {
    let inst = &comm.session.instance;
    let n = CREATED.fetch_add(1, Ordering::Relaxed);
    let path = inst
        .job
        .segment_name(format_args!("coll.{}.{n}", std::process::id()));
    if path.len() >= NAME_BYTES {
        return None;
    }
    let area = CollArea::create(&path, comm.size(), inst.config.coll.shm_max).ok()?;
    Some((area, path))
}
