//! Families of entry points: the blocking `MPI_X`, nonblocking `MPI_Ix` and persistent
//! `MPI_X_init` forms of an operation, each with its large-count `_c` twin, share one
//! implementation that takes the blocking form's arguments (counts and displacements of
//! either width: `args::Int`), the entry point's name and a `Mode`. The generated entry points
//! (api/gen.py, `FAMILIES`) call it through the helpers below, which check and fill what
//! only some forms have (the request, the info argument).

use weft_core::error::MpiResult;

use crate::args::non_null;
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;

/// How an operation runs: now, started (`I` forms) or bound to a persistent request (`_init`
/// forms); the latter two carry the communicator handle (the request's owner, whose
/// errhandler reports the request's errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Blocking,
    Nonblocking(MPI_Comm),
    Persistent(MPI_Comm),
}

/// The blocking form: the operation ran (its implementation returns no request).
pub(crate) fn blocking(r: MpiResult<MPI_Request>) -> MpiResult<()> {
    r.map(|_| ())
}

/// The nonblocking form: start the operation and store its request.
///
/// # Safety
/// `request` is null or a writable `MPI_Request`.
pub(crate) unsafe fn nonblocking(
    request: *mut MPI_Request,
    func: &str,
    owner: MPI_Comm,
    start: impl FnOnce(Mode) -> MpiResult<MPI_Request>,
) -> MpiResult<()> {
    non_null(request, func, "request")?;
    let handle = start(Mode::Nonblocking(owner))?;
    // SAFETY: checked non-null; writable per the caller's contract.
    unsafe { request.write(handle) };
    Ok(())
}

/// The persistent form: check the info argument (no hint is acted on yet), create the
/// inactive request and store it.
///
/// # Safety
/// `request` is null or a writable `MPI_Request`.
pub(crate) unsafe fn persistent(
    info: MPI_Info,
    request: *mut MPI_Request,
    func: &str,
    owner: MPI_Comm,
    init: impl FnOnce(Mode) -> MpiResult<MPI_Request>,
) -> MpiResult<()> {
    non_null(request, func, "request")?;
    if info != MPI_INFO_NULL {
        objects::info_object(info, func)?;
    }
    let handle = init(Mode::Persistent(owner))?;
    // SAFETY: checked non-null; writable per the caller's contract.
    unsafe { request.write(handle) };
    Ok(())
}
