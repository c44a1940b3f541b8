//! Persistent collectives (`MPI_Bcast_init`, ...): a persistent request whose every
//! `MPI_Start` builds and starts a fresh nonblocking collective (`sched.rs`) with the
//! arguments bound at init. Persistent collectives match in the order of their init calls
//! (ranks may start them in different orders), so each takes its tag at init and keeps it.
#![forbid(unsafe_code)]

use crate::error::{MpiError, MpiResult};
use crate::object::Comm;
use crate::progress;
use crate::request::{PersistentOp, ReqId, StartFn};

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
    let op = PersistentOp::Deferred(StartFn::new(move |func| {
        super::sched::with_seq(seq, || start(owner))
            .map(Some)
            .map_err(|e| MpiError {
                message: format!("{func}: {}", e.message),
                ..e
            })
    }));
    progress::persistent::init(&comm.session.instance, comm.vci, op, owner)
}
