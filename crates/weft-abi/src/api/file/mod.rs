//! MPI-IO entry points (`MPI_File_*`, `MPI_Register_datarep`): argument decoding and
//! validation over `weft_core::io`.
//!
//! - `open.rs`: open, close, delete, sizes, hints, atomicity, sync, groups, access modes.
//! - `view.rs`: views, positions, seeks, type extents, data representations.
//! - `access.rs`: every read and write (explicit offsets, individual and shared pointers;
//!   blocking, nonblocking, collective, split, ordered; `_c` twins).

pub(crate) mod access;
pub(crate) mod open;
pub(crate) mod view;

use weft_core::error::MpiResult;
use weft_core::io::Amode;
use weft_core::mpi_err;

use crate::constants::*;

/// An access-mode argument: unknown bits are `MPI_ERR_AMODE`, then the core's rules.
pub(crate) fn amode_of(amode: std::ffi::c_int, func: &str) -> MpiResult<Amode> {
    let known = MPI_MODE_RDONLY
        | MPI_MODE_WRONLY
        | MPI_MODE_RDWR
        | MPI_MODE_CREATE
        | MPI_MODE_EXCL
        | MPI_MODE_DELETE_ON_CLOSE
        | MPI_MODE_UNIQUE_OPEN
        | MPI_MODE_SEQUENTIAL
        | MPI_MODE_APPEND;
    if amode & !known != 0 {
        return Err(mpi_err!(
            Amode,
            "{func}(amode={amode:#x}): unknown access mode bits"
        ));
    }
    let has = |b| amode & b != 0;
    let m = Amode {
        rdonly: has(MPI_MODE_RDONLY),
        wronly: has(MPI_MODE_WRONLY),
        rdwr: has(MPI_MODE_RDWR),
        create: has(MPI_MODE_CREATE),
        excl: has(MPI_MODE_EXCL),
        delete_on_close: has(MPI_MODE_DELETE_ON_CLOSE),
        unique_open: has(MPI_MODE_UNIQUE_OPEN),
        sequential: has(MPI_MODE_SEQUENTIAL),
        append: has(MPI_MODE_APPEND),
    };
    m.check(func)?;
    Ok(m)
}

/// The access mode as the program passed it.
pub(crate) fn amode_bits(m: &Amode) -> std::ffi::c_int {
    [
        (m.rdonly, MPI_MODE_RDONLY),
        (m.wronly, MPI_MODE_WRONLY),
        (m.rdwr, MPI_MODE_RDWR),
        (m.create, MPI_MODE_CREATE),
        (m.excl, MPI_MODE_EXCL),
        (m.delete_on_close, MPI_MODE_DELETE_ON_CLOSE),
        (m.unique_open, MPI_MODE_UNIQUE_OPEN),
        (m.sequential, MPI_MODE_SEQUENTIAL),
        (m.append, MPI_MODE_APPEND),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .fold(0, |acc, (_, b)| acc | b)
}

/// An `MPI_Offset` argument that must not be negative.
pub(crate) fn offset_arg(v: crate::ctypes::MPI_Offset, func: &str, arg: &str) -> MpiResult<u64> {
    u64::try_from(v).map_err(|_| mpi_err!(Arg, "{func}({arg}={v}): negative offset"))
}
