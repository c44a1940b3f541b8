//! The standard ABI's `MPI_X_toint`/`MPI_X_fromint`: handles as C ints (for Fortran and
//! other languages). Predefined handles keep their value; user handles get int names
//! (`int_names.rs`). An int that names nothing converts to a value no handle has, so using
//! it is an invalid-handle error (never the null handle, which some calls accept).

use std::ffi::c_int;

use weft_core::progress;

use crate::ctypes::*;
use crate::handles::{Kind, FIRST_USER_HANDLE};
use crate::int_names::IntNames;
use crate::requests::request_id;
use crate::{datatypes, objects};

static COMM_NAMES: IntNames = IntNames::new(Kind::Comm, |h| objects::COMMS.is_current(h));
static TYPE_NAMES: IntNames = IntNames::new(Kind::Datatype, |h| datatypes::TYPES.is_current(h));
static ERRHANDLER_NAMES: IntNames =
    IntNames::new(Kind::Errhandler, |h| objects::ERRHANDLERS.is_current(h));
static INFO_NAMES: IntNames = IntNames::new(Kind::Info, |h| objects::INFOS.is_current(h));
static GROUP_NAMES: IntNames = IntNames::new(Kind::Group, |h| objects::GROUPS.is_current(h));
static SESSION_NAMES: IntNames = IntNames::new(Kind::Session, |h| objects::SESSIONS.is_current(h));
static WIN_NAMES: IntNames = IntNames::new(Kind::Win, |h| objects::WINS.is_current(h));
static OP_NAMES: IntNames = IntNames::new(Kind::Op, |h| crate::api::op::OPS.is_current(h));
static MESSAGE_NAMES: IntNames =
    IntNames::new(Kind::Message, |h| crate::api::recv::MESSAGES.is_current(h));
static REQUEST_NAMES: IntNames = IntNames::new(Kind::Request, request_is_live);
static FILE_NAMES: IntNames =
    IntNames::new(Kind::File, |h| crate::file_object::FILES.is_current(h));

/// Whether a request handle names a live request (pending, complete but not yet waited
/// for, or an inactive persistent one).
fn request_is_live(handle: usize) -> bool {
    let Ok(Some(id)) = request_id(handle, "MPI_Request_toint", "request") else {
        return false;
    };
    crate::objects::instance("MPI_Request_toint")
        .is_ok_and(|inst| (id.vci() as usize) < inst.vcis.len() && progress::exists(&inst, id))
}

/// A handle's int: predefined values as they are, user handles by name.
fn to_int(handle: usize, names: &IntNames) -> c_int {
    if handle < 0x1000 {
        return handle as c_int;
    }
    if handle < FIRST_USER_HANDLE {
        return -1;
    }
    names.name(handle)
}

/// An int back to a handle: predefined values as they are, names to their handles, and
/// anything else to a value below the user-handle range that no handle has.
fn from_int(value: c_int, names: &IntNames) -> usize {
    if (0..0x1000).contains(&value) {
        return value as usize;
    }
    names.handle(value).unwrap_or(value as u32 as usize)
}

pub(crate) fn mpi_comm_toint(comm: MPI_Comm) -> c_int {
    to_int(comm, &COMM_NAMES)
}
pub(crate) fn mpi_comm_fromint(comm: c_int) -> MPI_Comm {
    from_int(comm, &COMM_NAMES)
}
pub(crate) fn mpi_errhandler_toint(errhandler: MPI_Errhandler) -> c_int {
    to_int(errhandler, &ERRHANDLER_NAMES)
}
pub(crate) fn mpi_errhandler_fromint(errhandler: c_int) -> MPI_Errhandler {
    from_int(errhandler, &ERRHANDLER_NAMES)
}
pub(crate) fn mpi_info_toint(info: MPI_Info) -> c_int {
    to_int(info, &INFO_NAMES)
}
pub(crate) fn mpi_info_fromint(info: c_int) -> MPI_Info {
    from_int(info, &INFO_NAMES)
}
pub(crate) fn mpi_file_toint(file: MPI_File) -> c_int {
    to_int(file, &FILE_NAMES)
}
pub(crate) fn mpi_file_fromint(file: c_int) -> MPI_File {
    from_int(file, &FILE_NAMES)
}
pub(crate) fn mpi_group_toint(group: MPI_Group) -> c_int {
    to_int(group, &GROUP_NAMES)
}
pub(crate) fn mpi_group_fromint(group: c_int) -> MPI_Group {
    from_int(group, &GROUP_NAMES)
}
pub(crate) fn mpi_message_toint(message: MPI_Message) -> c_int {
    to_int(message, &MESSAGE_NAMES)
}
pub(crate) fn mpi_message_fromint(message: c_int) -> MPI_Message {
    from_int(message, &MESSAGE_NAMES)
}
pub(crate) fn mpi_op_toint(op: MPI_Op) -> c_int {
    to_int(op, &OP_NAMES)
}
pub(crate) fn mpi_op_fromint(op: c_int) -> MPI_Op {
    from_int(op, &OP_NAMES)
}
pub(crate) fn mpi_request_toint(request: MPI_Request) -> c_int {
    to_int(request, &REQUEST_NAMES)
}
pub(crate) fn mpi_request_fromint(request: c_int) -> MPI_Request {
    from_int(request, &REQUEST_NAMES)
}
pub(crate) fn mpi_session_toint(session: MPI_Session) -> c_int {
    to_int(session, &SESSION_NAMES)
}
pub(crate) fn mpi_session_fromint(session: c_int) -> MPI_Session {
    from_int(session, &SESSION_NAMES)
}
pub(crate) fn mpi_type_toint(datatype: MPI_Datatype) -> c_int {
    to_int(datatype, &TYPE_NAMES)
}
pub(crate) fn mpi_type_fromint(datatype: c_int) -> MPI_Datatype {
    from_int(datatype, &TYPE_NAMES)
}
pub(crate) fn mpi_win_toint(win: MPI_Win) -> c_int {
    to_int(win, &WIN_NAMES)
}
pub(crate) fn mpi_win_fromint(win: c_int) -> MPI_Win {
    from_int(win, &WIN_NAMES)
}
