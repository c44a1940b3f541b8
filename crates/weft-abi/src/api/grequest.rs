//! Generalized requests: `MPI_Grequest_start`/`complete`, the MPIX extensions with `poll_fn`
//! and `wait_fn` and request classes (EXTENSIONS.md section A), `MPIX_Request_is_complete`
//! and `MPIX_Stream_progress`. The C callbacks sit behind `weft_core`'s `GreqClass`; the core
//! calls them with no internal lock held.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use weft_core::error::MpiResult;
use weft_core::message::Status;
use weft_core::mpi_err;
use weft_core::progress;
use weft_core::request::GreqClass;
use weft_core::runtime::world;

use crate::args::non_null;
use crate::constants::*;
use crate::ctypes::*;
use crate::handles::{Kind, Table};
use crate::requests::{request_handle, request_id};
use crate::status;

/// The C callbacks of a class (one per `MPIX_Grequest_class_create`, or per started request).
struct CClass {
    query: Option<MPI_Grequest_query_function>,
    free: Option<MPI_Grequest_free_function>,
    cancel: Option<MPI_Grequest_cancel_function>,
    poll: Option<MPIX_Grequest_poll_function>,
    wait: Option<MPIX_Grequest_wait_function>,
}

type Callbacks = (
    Option<MPI_Grequest_query_function>,
    Option<MPI_Grequest_free_function>,
    Option<MPI_Grequest_cancel_function>,
);

impl CClass {
    /// A class of the standard's three callbacks and the extension's poll and wait ones.
    fn of(
        (query, free, cancel): Callbacks,
        poll: Option<MPIX_Grequest_poll_function>,
        wait: Option<MPIX_Grequest_wait_function>,
    ) -> Arc<CClass> {
        Arc::new(CClass {
            query,
            free,
            cancel,
            poll,
            wait,
        })
    }
}

impl GreqClass for CClass {
    fn query(&self, state: usize) -> Status {
        let mut s = MPI_Status {
            MPI_SOURCE: MPI_UNDEFINED,
            MPI_TAG: MPI_UNDEFINED,
            ..MPI_Status::default()
        };
        let Some(f) = self.query else {
            return status::from_c(&s);
        };
        // A user callback given to MPI_Grequest_start.
        // SAFETY: it receives its extra state and a live status, as the standard specifies.
        let code = unsafe { f(state as *mut c_void, &mut s) };
        let mut out = status::from_c(&s);
        out.error = code;
        out
    }

    fn free(&self, state: usize) -> i32 {
        self.free.map_or(MPI_SUCCESS, |f| {
            // SAFETY: as for query.
            unsafe { f(state as *mut c_void) }
        })
    }

    fn cancel(&self, state: usize, complete: bool) -> i32 {
        self.cancel.map_or(MPI_SUCCESS, |f| {
            // SAFETY: as for query.
            unsafe { f(state as *mut c_void, complete as c_int) }
        })
    }

    fn has_poll(&self) -> bool {
        self.poll.is_some()
    }

    fn poll(&self, state: usize) -> i32 {
        let mut s = MPI_Status::default();
        self.poll.map_or(MPI_SUCCESS, |f| {
            // SAFETY: as for query (MPIX_Grequest_poll_function).
            unsafe { f(state as *mut c_void, &mut s) }
        })
    }

    fn has_wait(&self) -> bool {
        self.wait.is_some()
    }

    fn wait(&self, states: &[usize], timeout: f64) -> i32 {
        let mut ptrs: Vec<*mut c_void> = states.iter().map(|&s| s as *mut c_void).collect();
        let mut s = MPI_Status::default();
        // SAFETY: as for query (MPIX_Grequest_wait_function): `count` states in a live array.
        self.wait.map_or(MPI_SUCCESS, |f| unsafe {
            f(ptrs.len() as c_int, ptrs.as_mut_ptr(), timeout, &mut s)
        })
    }
}

/// Classes made by `MPIX_Grequest_class_create` (never freed: the extension has no free).
static CLASSES: Table<CClass> = Table::new(Kind::GrequestClass);

unsafe fn start(
    class: Arc<dyn GreqClass>,
    state: *mut c_void,
    request: *mut MPI_Request,
    func: &str,
) -> MpiResult<()> {
    non_null(request, func, "request")?;
    let inst = crate::objects::instance(func)?;
    let id = progress::greq::start(&inst, class, state as usize, 0);
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { request.write(request_handle(id)) };
    Ok(())
}

pub(crate) unsafe fn mpi_grequest_start(
    query_fn: Option<MPI_Grequest_query_function>,
    free_fn: Option<MPI_Grequest_free_function>,
    cancel_fn: Option<MPI_Grequest_cancel_function>,
    extra_state: *mut c_void,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let class = CClass::of((query_fn, free_fn, cancel_fn), None, None);
    // SAFETY: forwarded caller contract.
    unsafe { start(class, extra_state, request, "MPI_Grequest_start") }
}

/// Either callback may be NULL (a poll-only or wait-only request; MPICH rejects a NULL
/// `wait_fn`, Weft does not).
pub(crate) unsafe fn mpix_grequest_start(
    query_fn: Option<MPI_Grequest_query_function>,
    free_fn: Option<MPI_Grequest_free_function>,
    cancel_fn: Option<MPI_Grequest_cancel_function>,
    poll_fn: Option<MPIX_Grequest_poll_function>,
    wait_fn: Option<MPIX_Grequest_wait_function>,
    extra_state: *mut c_void,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let class = CClass::of((query_fn, free_fn, cancel_fn), poll_fn, wait_fn);
    // SAFETY: forwarded caller contract.
    unsafe { start(class, extra_state, request, "MPIX_Grequest_start") }
}

pub(crate) unsafe fn mpix_grequest_class_create(
    query_fn: Option<MPI_Grequest_query_function>,
    free_fn: Option<MPI_Grequest_free_function>,
    cancel_fn: Option<MPI_Grequest_cancel_function>,
    poll_fn: Option<MPIX_Grequest_poll_function>,
    wait_fn: Option<MPIX_Grequest_wait_function>,
    greq_class: *mut MPIX_Grequest_class,
) -> MpiResult<()> {
    non_null(greq_class, "MPIX_Grequest_class_create", "greq_class")?;
    let handle = CLASSES.insert(CClass::of((query_fn, free_fn, cancel_fn), poll_fn, wait_fn));
    // SAFETY: checked non-null.
    unsafe { greq_class.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpix_grequest_class_allocate(
    greq_class: MPIX_Grequest_class,
    extra_state: *mut c_void,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let f = "MPIX_Grequest_class_allocate";
    let class = CLASSES.get(greq_class).map_err(|why| {
        mpi_err!(
            Arg,
            "{f}(greq_class={greq_class:#x}): request class {}",
            why.describe()
        )
    })?;
    // SAFETY: forwarded caller contract.
    unsafe { start(class, extra_state, request, f) }
}

pub(crate) fn mpi_grequest_complete(request: MPI_Request) -> MpiResult<()> {
    let f = "MPI_Grequest_complete";
    let inst = crate::objects::instance(f)?;
    let id = request_id(request, f, "request")?.ok_or_else(|| {
        mpi_err!(
            Request,
            "{f}(request=MPI_REQUEST_NULL): a generalized request is required"
        )
    })?;
    progress::greq::complete(&inst, id, f)
}

/// Whether a request is complete, without progress; a non-error int (1 or 0). An invalid
/// handle reads as not complete; `MPI_REQUEST_NULL` as complete.
pub(crate) fn mpix_request_is_complete(request: MPI_Request) -> c_int {
    let Ok(Some(id)) = request_id(request, "MPIX_Request_is_complete", "request") else {
        return (request == MPI_REQUEST_NULL) as c_int;
    };
    let Some(w) = world::get_any() else {
        return 0;
    };
    let inst = &w.session.instance;
    if id.vci() as usize >= inst.vcis.len() {
        return 0;
    }
    progress::is_complete(inst, id) as c_int
}
