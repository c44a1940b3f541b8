//! Request handles: a core request id (VCI, slot, generation) encoded as a handle of kind
//! `Request`, so a stale or garbage handle is recognised.

use weft_core::error::MpiResult;
use weft_core::message::Status;
use weft_core::mpi_err;
use weft_core::object::Comm;
use weft_core::progress;
use weft_core::request::ReqId;

use crate::constants::MPI_REQUEST_NULL;
use crate::ctypes::*;
use crate::handles::{self, Kind};

/// A request id's handle: the id's bits carry slot, VCI and generation where a handle has
/// them (see `ReqId`), so only the kind is added.
#[inline]
pub fn request_handle(id: ReqId) -> MPI_Request {
    id.bits() as usize | handles::kind_bits(Kind::Request)
}

/// An element of a request array as error messages name it: `array_of_requests[i]`.
#[derive(Clone, Copy, Debug)]
pub struct InArray(pub usize);

impl std::fmt::Display for InArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "array_of_requests[{}]", self.0)
    }
}

/// The request a handle names; `None` for `MPI_REQUEST_NULL`. Whether the request still
/// exists is checked where it is used (with its VCI locked). `arg` names the argument in the
/// error (formatted only then).
pub fn request_id(
    handle: MPI_Request,
    func: &str,
    arg: impl std::fmt::Display,
) -> MpiResult<Option<ReqId>> {
    if handle == MPI_REQUEST_NULL {
        return Ok(None);
    }
    if handles::is_user_handle_of(handle, Kind::Request) {
        return Ok(Some(ReqId::from_bits(handle as u64)));
    }
    if handles::is_user_handle_of(handle, Kind::EnqueuedRequest) {
        return Err(mpi_err!(
            Request,
            "{func}({arg}={handle:#x}): a request of MPIX_Isend_enqueue/MPIX_Irecv_enqueue: \
                 complete it with MPIX_Wait_enqueue or MPIX_Waitall_enqueue"
        ));
    }
    Err(mpi_err!(
        Request,
        "{func}({arg}={handle:#x}): not a valid request"
    ))
}

/// A handle for an operation that completed at once with `status` (peer `MPI_PROC_NULL`).
pub fn completed_request(comm: &Comm, status: Status, owner: usize) -> MPI_Request {
    request_handle(progress::completed(
        &comm.session.instance,
        comm.vci,
        status,
        owner,
    ))
}
