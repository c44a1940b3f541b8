//! Generalized requests (`MPI_Grequest_*`, `MPIX_Grequest_*`): starting, completing,
//! cancelling them, and letting waiters block in a class's `wait_fn`.
#![forbid(unsafe_code)]

use std::sync::Arc;

use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::instance::Instance;
use crate::polled;
use crate::request::grequest::{same_class, GreqClass};
use crate::request::{Ext, Grequest, Kind, ReqId, Request};

/// The generalized request `id` is, if it is one and still pending.
pub(super) fn pending(inst: &Instance, id: ReqId) -> Option<Arc<Grequest>> {
    let st = inst.vcis[id.vci() as usize].lock();
    match st.requests.get(id) {
        Some(Request {
            ext: Ext::Greq(g), ..
        }) if !g.is_complete() => Some(g.clone()),
        _ => None,
    }
}

/// Seconds a `wait_fn` may block when nothing else waits for progress in the same call.
pub const GREQ_WAIT_TIMEOUT: f64 = 1.0;

/// Instead of spinning, let pending generalized requests of a class with a `wait_fn` block in
/// it: one call with the extra states of all of that class's pending requests among `ids`.
/// The timeout is 0 when anything else among `ids` needs progress (then the call only
/// checks). Returns whether a `wait_fn` was called.
pub fn block_on(inst: &Instance, ids: &[ReqId]) -> bool {
    let mut greqs: Vec<Arc<Grequest>> = Vec::new();
    let mut others = false;
    for &id in ids {
        match pending(inst, id) {
            Some(g) => greqs.push(g),
            None => others = true,
        }
    }
    let Some(first) = greqs.iter().find(|g| g.class.has_wait()) else {
        return false;
    };
    let class: Arc<dyn GreqClass> = first.class.clone();
    let states: Vec<usize> = greqs
        .iter()
        .filter(|g| same_class(&g.class, &class))
        .map(|g| g.state)
        .collect();
    let alone = !others && states.len() == greqs.len();
    class.wait(&states, if alone { GREQ_WAIT_TIMEOUT } else { 0.0 });
    true
}

/// The VCI generalized requests live on.
const GREQ_VCI: usize = 0;

/// Start a generalized request of `class` with `state`; its `poll_fn` (if any) is polled
/// from every completion call until it completes.
pub fn start(inst: &Instance, class: Arc<dyn GreqClass>, state: usize, owner: usize) -> ReqId {
    let has_poll = class.has_poll() && !class.has_ready();
    let g = Arc::new(Grequest::new(class, state));
    let poll = has_poll.then(|| g.clone());
    let mut req = Request::new(Kind::Generalized, crate::datatype::Buf::EMPTY);
    req.owner = owner;
    req.ext = Ext::Greq(g);
    let id = inst.vcis[GREQ_VCI].lock().requests.alloc(req);
    if let Some(g) = poll {
        polled::register(Arc::new(GreqPoll(g)));
    }
    id
}

/// `start` for a request only the calling thread completes (a thread communicator's, whose
/// rank is the thread): kept on VCI `vci`, polled from this thread's own list
/// (`polled::register_local`), so the threads of a region share no lock to poll theirs.
pub fn start_local(
    inst: &Instance,
    vci: usize,
    class: Arc<dyn GreqClass>,
    state: usize,
    owner: usize,
) -> ReqId {
    let g = Arc::new(Grequest::new(class, state));
    let mut req = Request::new(Kind::Generalized, crate::datatype::Buf::EMPTY);
    req.owner = owner;
    req.ext = Ext::Greq(g.clone());
    let id = inst.vcis[vci % inst.config.num_vcis.max(1)]
        .lock()
        .requests
        .alloc(req);
    polled::register_local(Arc::new(GreqPoll(g)));
    id
}

struct GreqPoll(Arc<Grequest>);

impl polled::Polled for GreqPoll {
    fn poll(&self) -> bool {
        self.0.poll()
    }
}

fn not_greq(func: &str) -> MpiError {
    MpiError::new(
        ErrorClass::Request,
        format!("{func}(request): not a pending generalized request"),
    )
}

/// `MPI_Grequest_complete`.
pub fn complete(inst: &Instance, id: ReqId, func: &str) -> MpiResult<()> {
    let g = {
        let st = inst
            .vcis
            .get(id.vci() as usize)
            .ok_or_else(|| not_greq(func))?
            .lock();
        match st.requests.get(id) {
            Some(Request {
                ext: Ext::Greq(g), ..
            }) => g.clone(),
            _ => return Err(not_greq(func)),
        }
    };
    match g.mark_complete() {
        Err(()) => Err(MpiError::new(
            ErrorClass::Request,
            format!("{func}(request): the generalized request was already completed"),
        )),
        Ok(false) => Ok(()),
        Ok(true) => {
            // The user freed it earlier: it goes now, and free_fn runs (no lock held).
            inst.vcis[id.vci() as usize].lock().requests.release(id);
            g.class.free(g.state);
            Ok(())
        }
    }
}

/// `MPI_Cancel` of a generalized request: `cancel_fn(state, complete)`, whose return code
/// it gives back; `None` if `id` is no generalized request.
pub fn cancel(inst: &Instance, id: ReqId) -> Option<i32> {
    let g = {
        let st = inst.vcis[id.vci() as usize].lock();
        match st.requests.get(id) {
            Some(Request {
                ext: Ext::Greq(g), ..
            }) => g.clone(),
            _ => return None,
        }
    };
    Some(g.class.cancel(g.state, g.is_complete()))
}

/// Whether `id` is a pending generalized request whose class has a `wait_fn` (its waiters
/// may block in it; `block_on` does nothing for the others, such as the thread
/// communicators' requests).
pub fn has_wait_fn(inst: &Instance, id: ReqId) -> bool {
    pending(inst, id).is_some_and(|g| g.class.has_wait())
}
