//! Opening, closing and deleting files; sizes, hints, atomicity, sync, group and mode.

use std::ffi::{c_char, c_int};
use std::sync::Arc;

use weft_core::error::MpiResult;
use weft_core::io::{file as core_file, File};
use weft_core::object::Info;

use super::{amode_bits, amode_of, offset_arg};
use crate::args::{c_str, non_null, write};
use crate::boundary::{raise_on, Scope};
use crate::constants::*;
use crate::ctypes::*;
use crate::file_object::{file, FILES};
use crate::objects;

/// The pairs of an info argument (`MPI_INFO_NULL`: none).
pub(crate) fn info_pairs(info: MPI_Info, func: &str) -> MpiResult<Vec<(String, String)>> {
    if info == MPI_INFO_NULL {
        return Ok(Vec::new());
    }
    Ok(objects::info_object(info, func)?.pairs())
}

pub(crate) unsafe fn mpi_file_open(
    comm: MPI_Comm,
    filename: *const c_char,
    amode: c_int,
    info: MPI_Info,
    fh: *mut MPI_File,
) -> MpiResult<()> {
    let func = "MPI_File_open";
    // A failed open has no file: its error goes to MPI_FILE_NULL's errhandler, except a bad
    // communicator, which is the communicator's business.
    let c = objects::comm(comm, func, "comm")?;
    raise_on(Scope::File(MPI_FILE_NULL));
    non_null(fh, func, "fh")?;
    // SAFETY: the caller passes a NUL-terminated file name (checked for null).
    let name = unsafe { c_str(filename, func, "filename")? }.into_owned();
    let mode = amode_of(amode, func)?;
    let pairs = info_pairs(info, func)?;
    let f = File::open(&c, &name, mode, pairs, func)?;
    // Set up the nonblocking engine now, so the first nonblocking access does not pay for it.
    weft_core::io::nb::prepare(&c.session.instance);
    let h = FILES.insert(f);
    // SAFETY: checked non-null; the caller passes a writable MPI_File.
    unsafe { fh.write(h) };
    crate::boundary::clear_raise_on();
    Ok(())
}

pub(crate) unsafe fn mpi_file_close(fh: *mut MPI_File) -> MpiResult<()> {
    let func = "MPI_File_close";
    non_null(fh, func, "fh")?;
    // SAFETY: checked non-null; the caller passes a valid MPI_File pointer.
    let h = unsafe { fh.read() };
    let f = file(h, func)?;
    let r = f.close(func);
    FILES.remove(h).ok();
    // SAFETY: as above.
    unsafe { fh.write(MPI_FILE_NULL) };
    r
}

pub(crate) unsafe fn mpi_file_delete(filename: *const c_char, info: MPI_Info) -> MpiResult<()> {
    let func = "MPI_File_delete";
    raise_on(Scope::File(MPI_FILE_NULL));
    // SAFETY: the caller passes a NUL-terminated file name (checked for null).
    let name = unsafe { c_str(filename, func, "filename")? };
    info_pairs(info, func)?;
    core_file::delete(&name, func)?;
    crate::boundary::clear_raise_on();
    Ok(())
}

pub(crate) fn mpi_file_set_size(fh: MPI_File, size: MPI_Offset) -> MpiResult<()> {
    let func = "MPI_File_set_size";
    let f = file(fh, func)?;
    f.set_size(offset_arg(size, func, "size")?, func)
}

pub(crate) fn mpi_file_preallocate(fh: MPI_File, size: MPI_Offset) -> MpiResult<()> {
    let func = "MPI_File_preallocate";
    let f = file(fh, func)?;
    f.preallocate(offset_arg(size, func, "size")?, func)
}

pub(crate) unsafe fn mpi_file_get_size(fh: MPI_File, size: *mut MPI_Offset) -> MpiResult<()> {
    let func = "MPI_File_get_size";
    let n = file(fh, func)?.size(func)?;
    // SAFETY: null-checked by `write`; the caller passes a writable MPI_Offset.
    unsafe { write(size, n as MPI_Offset, func, "size") }
}

pub(crate) unsafe fn mpi_file_get_group(fh: MPI_File, group: *mut MPI_Group) -> MpiResult<()> {
    let func = "MPI_File_get_group";
    let f = file(fh, func)?;
    non_null(group, func, "group")?;
    let h = objects::group_handle(f.comm.group.clone());
    // SAFETY: checked non-null.
    unsafe { group.write(h) };
    Ok(())
}

pub(crate) unsafe fn mpi_file_get_amode(fh: MPI_File, amode: *mut c_int) -> MpiResult<()> {
    let func = "MPI_File_get_amode";
    let f = file(fh, func)?;
    // SAFETY: null-checked by `write`.
    unsafe { write(amode, amode_bits(&f.amode), func, "amode") }
}

pub(crate) fn mpi_file_set_info(fh: MPI_File, info: MPI_Info) -> MpiResult<()> {
    let func = "MPI_File_set_info";
    let f = file(fh, func)?;
    f.set_info(info_pairs(info, func)?);
    Ok(())
}

pub(crate) unsafe fn mpi_file_get_info(fh: MPI_File, info_used: *mut MPI_Info) -> MpiResult<()> {
    let func = "MPI_File_get_info";
    let f = file(fh, func)?;
    non_null(info_used, func, "info_used")?;
    let h = objects::INFOS.insert(Arc::new(Info::from_pairs(f.info())));
    // SAFETY: checked non-null.
    unsafe { info_used.write(h) };
    Ok(())
}

pub(crate) fn mpi_file_set_atomicity(fh: MPI_File, flag: c_int) -> MpiResult<()> {
    let func = "MPI_File_set_atomicity";
    file(fh, func)?.set_atomicity(flag != 0, func)
}

pub(crate) unsafe fn mpi_file_get_atomicity(fh: MPI_File, flag: *mut c_int) -> MpiResult<()> {
    let func = "MPI_File_get_atomicity";
    let atomic = file(fh, func)?.state().atomic;
    // SAFETY: null-checked by `write`.
    unsafe { write(flag, atomic as c_int, func, "flag") }
}

pub(crate) fn mpi_file_sync(fh: MPI_File) -> MpiResult<()> {
    let func = "MPI_File_sync";
    file(fh, func)?.sync(func)
}
