//! Cancelling sends (`MPI_Cancel` of a send request). A send request names its message:
//! the message's header carries the request's token, and the request remembers where the
//! message went (`Ext::Sent`). Cancelling it:
//!
//! - a message still queued here (no room in the peer's queue yet, `VciState::pending`)
//!   is dropped: the request completes cancelled at once;
//! - otherwise the receiver is asked (`CANCEL`, on the queue the message took, so it never
//!   overtakes it): if the message (eager data or a rendezvous header) still waits in its
//!   unexpected queue, it is withdrawn and the answer is yes; if a receive matched it, no.
//!   The request completes with the answer: cancelled on yes; on no, as its protocol
//!   completes it (an eager send that had completed completes again, not cancelled).
//!
//! An eager send that returned the VCI's shared completed request has no request of its
//! own: `vci::sent` remembers where the last ones went, and cancelling one makes a request
//! for the cancel that the handle stands for until it is taken or freed
//! (`RequestPool::stand_in`). One no longer remembered is not cancelled.
//!
//! The receiver's half (`CANCEL`, `CANCEL_REPLY`) is `engine::withdraw_message` and
//! `engine::cancel_answered`.
//!
//! Nothing else moves: later messages with the same envelope keep their order, and a
//! receive racing with the cancel either matched the message first (the receiver answers
//! no, and the receive has the data) or finds it gone.
#![forbid(unsafe_code)]

use super::engine::{complete, send_control, Outgoing};
use super::protocol::{self, Header};
use super::sent::SentTo;
use super::VciState;
use crate::message::Status;
use crate::request::{Ext, ReqId, SendCancel};
use crate::transport::Transports;

/// `MPI_Cancel` of send request `id` (on this VCI, `vci`). A request that is no tracked
/// send, or was cancelled before, is left to complete as it does.
pub fn cancel_send(t: &Transports, vci: usize, st: &mut VciState, id: ReqId) {
    let Some(req) = st.requests.get_mut(id) else {
        return;
    };
    let Ext::Sent {
        dest,
        vci: to,
        cancel,
        message,
    } = &mut req.ext
    else {
        return;
    };
    if *cancel != SendCancel::NotAsked {
        return;
    }
    let (dest, to, message) = (*dest, *to as usize, *message);
    let sender = ReqId::from_token(vci as u8, message);
    let queued = st.pending.iter().position(|out| match out {
        Outgoing::Eager { req, .. } => *req == sender,
        Outgoing::Control { header, .. } => header.kind == protocol::RTS && header.token == message,
    });
    if let Some(i) = queued {
        st.pending.remove(i);
        settle(st, id);
        complete(st, id, Status::CANCELLED);
        if sender != id {
            complete(st, sender, Status::CANCELLED);
        }
        return;
    }
    *cancel = if req.complete {
        SendCancel::AskedComplete
    } else {
        SendCancel::Asked
    };
    req.complete = false;
    let ask = Header::control(protocol::CANCEL, t.my_rank, vci, message);
    send_control(t, vci, st, (dest, to), ask, &id.token().to_le_bytes());
}

/// `MPI_Cancel` of completed-send id `id` (on this VCI, `vci`): if its send is still
/// remembered, a request (complete, as the send was) is made for its message and cancelled
/// as any send request is; returns it (the caller makes `id`, or the persistent request
/// that ran the send, stand for it).
pub fn cancel_completed_send(
    t: &Transports,
    vci: usize,
    st: &mut VciState,
    id: ReqId,
) -> Option<ReqId> {
    let to = st.sent.find(id)?;
    let real = request_for(st, to);
    cancel_send(t, vci, st, real);
    Some(real)
}

/// Mark send request `id` as cancelled or answered (a later `MPI_Cancel` does nothing).
fn settle(st: &mut VciState, id: ReqId) {
    if let Some(req) = st.requests.get_mut(id) {
        if let Ext::Sent { cancel, .. } = &mut req.ext {
            *cancel = SendCancel::Settled;
        }
    }
}

/// A request for `MPI_Ibsend` (or a start of `MPI_Bsend_init`) whose message is sent by
/// `sender`, the internal send from the attached buffer: complete at once, as a buffered
/// send is, and cancellable as `sender`'s message is; `owner` as in `Request::owner`.
/// `None` if `sender` is gone, no send, or a completed send no longer remembered.
pub fn buffered_request(st: &mut VciState, sender: ReqId, owner: usize) -> Option<ReqId> {
    let to = if sender.is_completed_send() {
        st.sent.find(sender)?
    } else {
        let Ext::Sent { dest, vci, .. } = st.requests.get(sender)?.ext else {
            return None;
        };
        SentTo {
            dest,
            dest_vci: vci,
            token: sender.token(),
        }
    };
    let id = request_for(st, to);
    if let Some(req) = st.requests.get_mut(id) {
        req.owner = owner;
    }
    Some(id)
}

/// A complete send request for the message `to` names (sent by another request, or by none).
fn request_for(st: &mut VciState, to: SentTo) -> ReqId {
    let id = st
        .requests
        .alloc_send(crate::datatype::Buf::EMPTY, true, to.dest, to.dest_vci);
    if let Some(Ext::Sent { message, .. }) = st.requests.get_mut(id).map(|r| &mut r.ext) {
        *message = to.token;
    }
    id
}
