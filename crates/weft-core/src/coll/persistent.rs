//! Persistent collectives (`MPI_Bcast_init`, ...): a persistent request whose every
//! `MPI_Start` builds and starts a fresh nonblocking collective (`sched.rs`) with the
//! arguments bound at init. Persistent collectives match in the order of their init calls
//! (ranks may start them in different orders), so each takes its tag at init and keeps it.
#![forbid(unsafe_code)]

use std::sync::Arc;

use crate::error::MpiResult;
use crate::object::Comm;
use crate::pt2pt;
use crate::request::{PersistentOp, ReqId};

type StartFn = dyn Fn() -> MpiResult<ReqId> + Send + Sync;

/// What `MPI_Start` runs for a persistent collective (outside every lock).
#[derive(Clone)]
pub struct CollStart(Arc<StartFn>);

impl std::fmt::Debug for CollStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("persistent collective")
    }
}

impl CollStart {
    /// Start one instance; its request completes when the collective does.
    pub fn start(&self) -> MpiResult<ReqId> {
        (self.0)()
    }
}

/// An inactive persistent request that starts `start(owner)` at every `MPI_Start`.
pub fn init(
    comm: &Comm,
    owner: usize,
    start: impl Fn(usize) -> MpiResult<ReqId> + Send + Sync + 'static,
) -> ReqId {
    // Persistent collectives match in the order of their init calls: fix the tag now.
    let seq = comm
        .coll_seq
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let op = PersistentOp::Collective(CollStart(Arc::new(move || {
        super::sched::with_seq(seq, || start(owner))
    })));
    pt2pt::persistent_init(&comm.session.instance, comm.vci, op, owner)
}
