//! The standard ABI's `MPI_X_toint`/`MPI_X_fromint`: handles as C ints (for Fortran and
//! other languages). Predefined handles keep their value; user handles become kind and slot.
//! Kinds whose objects do not exist in Weft yet have no user handles, so any other int maps
//! to the null handle.

use std::ffi::c_int;

use crate::constants::*;
use crate::ctypes::*;
use crate::handles::{self, FIRST_USER_HANDLE};
use crate::objects;

/// A handle's int: predefined values as they are, user handles as kind and slot.
fn to_int(handle: usize) -> c_int {
    if handle < FIRST_USER_HANDLE {
        return handle as c_int;
    }
    match handles::decode(handle) {
        Some(d) => ((d.kind as c_int) << 24) | d.slot as c_int,
        None => -1,
    }
}

/// An int back to a handle: predefined values below 0x1000 as they are, else through
/// `lookup` (the kind's table), else `null`.
fn from_int(value: c_int, null: usize, lookup: impl Fn(c_int) -> Option<usize>) -> usize {
    if (0..0x1000).contains(&value) {
        return value as usize;
    }
    lookup(value).unwrap_or(null)
}

pub(crate) fn mpi_comm_toint(comm: MPI_Comm) -> c_int {
    to_int(comm)
}
pub(crate) fn mpi_comm_fromint(comm: c_int) -> MPI_Comm {
    from_int(comm, MPI_COMM_NULL, |v| objects::COMMS.from_int(v))
}
pub(crate) fn mpi_errhandler_toint(errhandler: MPI_Errhandler) -> c_int {
    to_int(errhandler)
}
pub(crate) fn mpi_errhandler_fromint(errhandler: c_int) -> MPI_Errhandler {
    from_int(errhandler, MPI_ERRHANDLER_NULL, |v| {
        objects::ERRHANDLERS.from_int(v)
    })
}
pub(crate) fn mpi_info_toint(info: MPI_Info) -> c_int {
    to_int(info)
}
pub(crate) fn mpi_info_fromint(info: c_int) -> MPI_Info {
    from_int(info, MPI_INFO_NULL, |v| objects::INFOS.from_int(v))
}
pub(crate) fn mpi_file_toint(file: MPI_File) -> c_int {
    to_int(file)
}
pub(crate) fn mpi_file_fromint(file: c_int) -> MPI_File {
    from_int(file, MPI_FILE_NULL, |v| crate::file_object::FILES.from_int(v))
}
pub(crate) fn mpi_group_toint(group: MPI_Group) -> c_int {
    to_int(group)
}
pub(crate) fn mpi_group_fromint(group: c_int) -> MPI_Group {
    from_int(group, MPI_GROUP_NULL, |v| objects::GROUPS.from_int(v))
}
pub(crate) fn mpi_message_toint(message: MPI_Message) -> c_int {
    to_int(message)
}
pub(crate) fn mpi_message_fromint(message: c_int) -> MPI_Message {
    from_int(message, MPI_MESSAGE_NULL, |_| None)
}
pub(crate) fn mpi_op_toint(op: MPI_Op) -> c_int {
    to_int(op)
}
pub(crate) fn mpi_op_fromint(op: c_int) -> MPI_Op {
    from_int(op, MPI_OP_NULL, |_| None)
}
pub(crate) fn mpi_request_toint(request: MPI_Request) -> c_int {
    to_int(request)
}
pub(crate) fn mpi_request_fromint(request: c_int) -> MPI_Request {
    from_int(request, MPI_REQUEST_NULL, |_| None)
}
pub(crate) fn mpi_session_toint(session: MPI_Session) -> c_int {
    to_int(session)
}
pub(crate) fn mpi_session_fromint(session: c_int) -> MPI_Session {
    from_int(session, MPI_SESSION_NULL, |_| None)
}
pub(crate) fn mpi_type_toint(datatype: MPI_Datatype) -> c_int {
    to_int(datatype)
}
pub(crate) fn mpi_type_fromint(datatype: c_int) -> MPI_Datatype {
    from_int(datatype, MPI_DATATYPE_NULL, |v| {
        crate::datatypes::TYPES.from_int(v)
    })
}
pub(crate) fn mpi_win_toint(win: MPI_Win) -> c_int {
    to_int(win)
}
pub(crate) fn mpi_win_fromint(win: c_int) -> MPI_Win {
    from_int(win, MPI_WIN_NULL, |v| objects::WINS.from_int(v))
}
