//! Persistent requests (`MPI_Send_init`, `MPI_Recv_init`, `MPI_Bsend_init`, persistent
//! collectives): created inactive; each `MPI_Start` starts the operation they hold
//! (`PersistentOp`), and completion makes them inactive again (`progress::look`).
#![forbid(unsafe_code)]

use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::instance::Instance;
use crate::message::Status;
use crate::request::{Ext, Kind, Persistent, PersistentOp, PersistentState, ReqId, Request};
use crate::vci::engine::{self, SendStart};
use crate::vci::VciState;

/// Create an inactive persistent request on `vci`; `owner` as in `Request::owner`.
pub fn init(inst: &Instance, vci: usize, op: PersistentOp, owner: usize) -> ReqId {
    let mut req = Request::new(Kind::Persistent, Buf::EMPTY);
    req.owner = owner;
    req.ext = Ext::Persistent(Box::new(Persistent {
        op,
        state: PersistentState::Inactive,
    }));
    inst.vcis[vci].lock().requests.alloc(req)
}

/// `MPI_Start`: start the inactive persistent request `id`. A deferred start (its creator's
/// code) runs with no lock held.
pub fn start(inst: &Instance, id: ReqId, func: &str) -> MpiResult<()> {
    let vci = id.vci() as usize;
    let mut st = inst.vcis[vci].lock();
    let op = match st.requests.get(id) {
        Some(Request {
            ext: Ext::Persistent(p),
            ..
        }) => {
            if p.state != PersistentState::Inactive {
                return Err(MpiError::new(
                    ErrorClass::Request,
                    format!("{func}(request): the persistent request is already active"),
                ));
            }
            p.op.clone()
        }
        _ => {
            return Err(MpiError::new(
                ErrorClass::Request,
                format!("{func}(request): not a persistent request"),
            ))
        }
    };
    let t = &inst.transports;
    let state = match op {
        PersistentOp::Send { target, buf, mode } => {
            match engine::start_send(t, vci, &mut st, target, buf, mode, true)? {
                SendStart::Pending(inner) => PersistentState::Running(inner),
                SendStart::Done => PersistentState::Done(Status::default()),
            }
        }
        PersistentOp::Recv { pattern, buf } => {
            engine::progress(t, vci, &mut st);
            PersistentState::Running(engine::start_recv(t, vci, &mut st, pattern, buf, 0))
        }
        PersistentOp::Null(status) => PersistentState::Done(status),
        PersistentOp::Deferred(code) | PersistentOp::Partitioned { start: code, .. } => {
            drop(st);
            let state = match code.run(func)? {
                Some(inner) => PersistentState::Running(inner),
                None => PersistentState::Done(Status::default()),
            };
            st = inst.vcis[vci].lock();
            state
        }
    };
    set_state(&mut st, id, state);
    Ok(())
}

pub(super) fn set_state(st: &mut VciState, id: ReqId, state: PersistentState) {
    if let Some(Request {
        ext: Ext::Persistent(p),
        ..
    }) = st.requests.get_mut(id)
    {
        p.state = state;
    }
}

/// The state of partitioned request `id` (`PersistentOp::Partitioned`) and whether it is
/// active; `None` if `id` is no partitioned request.
pub fn partitioned(
    inst: &Instance,
    id: ReqId,
) -> Option<(std::sync::Arc<dyn std::any::Any + Send + Sync>, bool)> {
    let st = inst.vcis.get(id.vci() as usize)?.lock();
    match st.requests.get(id) {
        Some(Request {
            ext: Ext::Persistent(p),
            ..
        }) => match &p.op {
            PersistentOp::Partitioned { state, .. } => {
                Some((state.clone(), p.state != PersistentState::Inactive))
            }
            _ => None,
        },
        _ => None,
    }
}
