//! Point-to-point communication on communicators: the API the ABI layer calls.
#![forbid(unsafe_code)]

pub mod engine;
pub mod matching;
pub mod protocol;

pub use engine::{SendMode, SendStart};
pub use matching::{Pattern, SourceSel, TagSel};

use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::object::Comm;
use crate::progress;
use crate::request::{ReqId, Status};
use engine::Target;

fn target(comm: &Comm, dest: u32, tag: i32) -> MpiResult<Target> {
    let dest_job = comm.group.proc_at(dest).ok_or_else(|| {
        MpiError::new(
            ErrorClass::Rank,
            format!(
                "rank {dest} is not in the communicator (size {})",
                comm.size()
            ),
        )
    })?;
    Ok(Target {
        context: comm.context_id,
        my_rank: comm.rank,
        dest: dest_job,
        tag,
    })
}

/// Start a send and return its request; `owner` is stored in the request (see `Request`).
pub fn isend(
    comm: &Comm,
    dest: u32,
    tag: i32,
    buf: Buf,
    mode: SendMode,
    owner: usize,
) -> MpiResult<ReqId> {
    let target = target(comm, dest, tag)?;
    let inst = &comm.session.instance;
    let mut st = inst.vcis[comm.vci].lock();
    match engine::start_send(&inst.transports, comm.vci, &mut st, target, buf, mode, true)? {
        SendStart::Pending(id) => {
            if let Some(req) = st.requests.get_mut(id) {
                req.owner = owner;
            }
            Ok(id)
        }
        SendStart::Done => unreachable!("a forced request is always returned"),
    }
}

/// A blocking send.
pub fn send(comm: &Comm, dest: u32, tag: i32, buf: Buf, mode: SendMode) -> MpiResult<()> {
    let target = target(comm, dest, tag)?;
    let inst = &comm.session.instance;
    let start = {
        let mut st = inst.vcis[comm.vci].lock();
        engine::start_send(
            &inst.transports,
            comm.vci,
            &mut st,
            target,
            buf,
            mode,
            false,
        )?
    };
    match start {
        SendStart::Done => Ok(()),
        SendStart::Pending(id) => status_result(progress::wait(inst, id).status).map(|_| ()),
    }
}

/// Start a receive; `owner` is stored in the request (see `Request`).
pub fn irecv(comm: &Comm, source: SourceSel, tag: TagSel, buf: Buf, owner: usize) -> ReqId {
    let inst = &comm.session.instance;
    let pattern = Pattern {
        context: comm.context_id,
        source,
        tag,
    };
    let mut st = inst.vcis[comm.vci].lock();
    engine::progress(&inst.transports, comm.vci, &mut st);
    let id = engine::start_recv(&inst.transports, comm.vci, &mut st, pattern, buf);
    if let Some(req) = st.requests.get_mut(id) {
        req.owner = owner;
    }
    id
}

/// A blocking receive. The status is returned even on truncation (as an error status).
pub fn recv(comm: &Comm, source: SourceSel, tag: TagSel, buf: Buf) -> Status {
    let id = irecv(comm, source, tag, buf, 0);
    progress::wait(&comm.session.instance, id).status
}

/// Look for a matching message without receiving it.
pub fn iprobe(comm: &Comm, source: SourceSel, tag: TagSel) -> Option<Status> {
    let inst = &comm.session.instance;
    let pattern = Pattern {
        context: comm.context_id,
        source,
        tag,
    };
    let mut st = inst.vcis[comm.vci].lock();
    engine::progress(&inst.transports, comm.vci, &mut st);
    st.matching.peek_unexpected(&pattern).map(|m| Status {
        source: m.key.source as i32,
        tag: m.key.tag,
        error: 0,
        bytes: m.bytes(),
        cancelled: false,
    })
}

/// Wait for a matching message without receiving it.
pub fn probe(comm: &Comm, source: SourceSel, tag: TagSel) -> Status {
    let mut backoff = progress::Backoff::new(&comm.session.instance);
    loop {
        if let Some(status) = iprobe(comm, source, tag) {
            return status;
        }
        backoff.idle();
    }
}

/// Turn an operation's status into the call's result (errors such as truncation).
pub fn status_result(status: Status) -> MpiResult<Status> {
    if status.error == 0 {
        Ok(status)
    } else {
        let class = ErrorClass::from_i32(status.error).unwrap_or(ErrorClass::Other);
        let what = if class == ErrorClass::Truncate {
            "message truncated: the receive buffer is smaller than the message".to_owned()
        } else {
            format!("the operation failed ({})", class.name())
        };
        Err(MpiError::new(class, what))
    }
}

/// `MPI_Cancel`: a receive still waiting for its message is cancelled (it completes with
/// the cancelled flag); anything else (sends, matched receives) completes normally.
pub fn cancel(inst: &crate::runtime::Instance, id: ReqId) {
    let mut st = inst.vcis[id.vci as usize].lock();
    if st.matching.cancel_posted(id) {
        let status = Status {
            cancelled: true,
            ..Status::default()
        };
        engine::complete(&mut st, id, status);
    }
}
