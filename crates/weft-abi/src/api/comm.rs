//! Communicator queries available from the foundation: size, rank, names and the
//! predefined attributes of `MPI_COMM_WORLD`.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};

use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::runtime::world;

use crate::args::{c_str, copy_out_str, non_null, write};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;

pub(crate) unsafe fn mpi_comm_size(comm: MPI_Comm, size: *mut c_int) -> MpiResult<()> {
    let c = objects::comm(comm, "MPI_Comm_size", "comm")?;
    // SAFETY: the caller passes a valid int pointer (checked for null).
    unsafe { write(size, c.size() as c_int, "MPI_Comm_size", "size") }
}

pub(crate) unsafe fn mpi_comm_rank(comm: MPI_Comm, rank: *mut c_int) -> MpiResult<()> {
    let c = objects::comm(comm, "MPI_Comm_rank", "comm")?;
    // SAFETY: as above.
    unsafe { write(rank, c.rank as c_int, "MPI_Comm_rank", "rank") }
}

pub(crate) unsafe fn mpi_comm_set_name(comm: MPI_Comm, comm_name: *const c_char) -> MpiResult<()> {
    let c = objects::comm(comm, "MPI_Comm_set_name", "comm")?;
    // SAFETY: the caller passes a NUL-terminated string (checked for null).
    let name = unsafe { c_str(comm_name, "MPI_Comm_set_name", "comm_name")? };
    if name.len() >= MPI_MAX_OBJECT_NAME as usize {
        return Err(MpiError::new(
            ErrorClass::Arg,
            "MPI_Comm_set_name(comm_name): longer than MPI_MAX_OBJECT_NAME",
        ));
    }
    c.set_name(name);
    Ok(())
}

pub(crate) unsafe fn mpi_comm_get_name(
    comm: MPI_Comm,
    comm_name: *mut c_char,
    resultlen: *mut c_int,
) -> MpiResult<()> {
    let c = objects::comm(comm, "MPI_Comm_get_name", "comm")?;
    non_null(resultlen, "MPI_Comm_get_name", "resultlen")?;
    // SAFETY: the standard requires a buffer of MPI_MAX_OBJECT_NAME bytes.
    unsafe {
        copy_out_str(
            &c.name(),
            comm_name,
            MPI_MAX_OBJECT_NAME as usize,
            resultlen,
            "MPI_Comm_get_name",
            "comm_name",
        )
    }
}

/// Storage for the predefined attribute values: `MPI_Comm_get_attr` hands out pointers to
/// them, so they must live for the whole process. `AtomicI32` has the layout of a C int.
struct PredefinedAttrs {
    tag_ub: AtomicI32,
    host: AtomicI32,
    io: AtomicI32,
    wtime_is_global: AtomicI32,
    appnum: AtomicI32,
    universe_size: AtomicI32,
    last_used_code: AtomicI32,
}

static ATTRS: PredefinedAttrs = PredefinedAttrs {
    tag_ub: AtomicI32::new(i32::MAX),
    host: AtomicI32::new(MPI_PROC_NULL),
    io: AtomicI32::new(MPI_ANY_SOURCE),
    wtime_is_global: AtomicI32::new(0),
    appnum: AtomicI32::new(0),
    universe_size: AtomicI32::new(1),
    last_used_code: AtomicI32::new(0),
};

/// The cell for a predefined keyval, refreshed to its current value, or `None` if the
/// keyval is not a predefined communicator attribute.
fn predefined_attr(keyval: c_int, w: &world::World) -> Option<&'static AtomicI32> {
    let job = &w.session.instance.job;
    let (cell, value) = match keyval {
        MPI_TAG_UB => (&ATTRS.tag_ub, i32::MAX),
        MPI_HOST => (&ATTRS.host, MPI_PROC_NULL),
        MPI_IO => (&ATTRS.io, MPI_ANY_SOURCE),
        MPI_WTIME_IS_GLOBAL => (&ATTRS.wtime_is_global, 0),
        MPI_APPNUM => (&ATTRS.appnum, job.appnum),
        MPI_UNIVERSE_SIZE => (
            &ATTRS.universe_size,
            job.universe_size.unwrap_or(job.size) as i32,
        ),
        MPI_LASTUSEDCODE => (&ATTRS.last_used_code, weft_core::error::last_used_code()),
        _ => return None,
    };
    cell.store(value, Ordering::Relaxed);
    Some(cell)
}

pub(crate) unsafe fn mpi_comm_get_attr(
    comm: MPI_Comm,
    comm_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> MpiResult<()> {
    // Predefined attributes hold the same values on every communicator; the handle is checked.
    objects::comm(comm, "MPI_Comm_get_attr", "comm")?;
    non_null(attribute_val, "MPI_Comm_get_attr", "attribute_val")?;
    non_null(flag, "MPI_Comm_get_attr", "flag")?;
    let w = world::get("MPI_Comm_get_attr")?;
    match predefined_attr(comm_keyval, w) {
        Some(cell) => {
            // SAFETY: attribute_val points to a void* the standard lets us fill.
            unsafe {
                attribute_val.cast::<*mut c_int>().write(cell.as_ptr());
                flag.write(1);
            }
            Ok(())
        }
        None if comm_keyval == MPI_KEYVAL_INVALID => {
            Err(MpiError::new(ErrorClass::Keyval, "MPI_Comm_get_attr(comm_keyval=MPI_KEYVAL_INVALID): invalid keyval"))
        }
        None => Err(MpiError::new(
            ErrorClass::Keyval,
            format!("MPI_Comm_get_attr(comm_keyval={comm_keyval}): not a keyval (user keyvals are not implemented yet)"),
        )),
    }
}
