//! Views, file pointers and positions, type extents in a file, data representations.

use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use weft_core::datatype::Datatype;
use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::io::datarep::{self, MemData, UserRep};
use weft_core::io::{self as core_io, View, Whence};
use weft_core::mpi_err;

use super::offset_arg;
use super::open::info_pairs;
use crate::args::{c_str, copy_out_str, non_null, write, Int};
use crate::boundary::{raise_on, Scope};
use crate::constants::*;
use crate::ctypes::*;
use crate::datatypes::{self, committed};
use crate::file_object::file;

pub(crate) unsafe fn mpi_file_set_view(
    fh: MPI_File,
    disp: MPI_Offset,
    etype: MPI_Datatype,
    filetype: MPI_Datatype,
    datarep: *const c_char,
    info: MPI_Info,
) -> MpiResult<()> {
    let func = "MPI_File_set_view";
    let f = file(fh, func)?;
    let e = committed(etype, func, "etype")?;
    let ft = committed(filetype, func, "filetype")?;
    // SAFETY: the caller passes a NUL-terminated name (checked for null).
    let rep_name = unsafe { c_str(datarep, func, "datarep")? };
    let rep = datarep::lookup(&rep_name, func)?;
    let disp = if disp == MPI_DISPLACEMENT_CURRENT {
        if !f.amode.sequential {
            return Err(mpi_err!(Arg, "{func}(disp=MPI_DISPLACEMENT_CURRENT): only for files opened with MPI_MODE_SEQUENTIAL"));
        }
        core_io::byte_offset(&f, core_io::position_shared(&f))
    } else {
        offset_arg(disp, func, "disp")?
    };
    let esize = rep.size_of(&e)?;
    let fsize = rep.size_of(&ft)?;
    if esize == 0 && fsize > 0 || esize > 0 && fsize % esize != 0 {
        return Err(mpi_err!(
            Type,
            "{func}(filetype): its size ({fsize}) is not a multiple of the etype's ({esize})"
        ));
    }
    // MPICH reports these as MPI_ERR_IO; programs written for it test for that class.
    for (t, arg) in [(&e, "etype"), (&ft, "filetype")] {
        if !weft_core::io::view::is_monotone(t, f.amode.rdonly) {
            return Err(mpi_err!(Io, "{func}({arg}): displacements must be non-negative and non-decreasing (and must not overlap in a file open for writing)"));
        }
    }
    let layout = rep.file_layout(&ft)?;
    let pairs = info_pairs(info, func)?;
    core_io::set_view(&f, View::new(disp, e, ft, rep, layout, esize), func)?;
    f.set_info(pairs);
    Ok(())
}

pub(crate) unsafe fn mpi_file_get_view(
    fh: MPI_File,
    disp: *mut MPI_Offset,
    etype: *mut MPI_Datatype,
    filetype: *mut MPI_Datatype,
    datarep: *mut c_char,
) -> MpiResult<()> {
    let func = "MPI_File_get_view";
    let f = file(fh, func)?;
    non_null(disp, func, "disp")?;
    non_null(etype, func, "etype")?;
    non_null(filetype, func, "filetype")?;
    let v = f.view();
    // SAFETY: the standard requires MPI_MAX_DATAREP_STRING bytes at `datarep`.
    unsafe {
        copy_out_str(
            &v.rep.name(),
            datarep,
            MPI_MAX_DATAREP_STRING as usize,
            std::ptr::null_mut(),
            func,
            "datarep",
        )?;
        disp.write(v.disp as MPI_Offset);
        etype.write(datatypes::handle_for(&v.etype));
        filetype.write(datatypes::handle_for(&v.filetype));
    }
    Ok(())
}

fn whence_of(whence: c_int, func: &str) -> MpiResult<Whence> {
    match whence {
        MPI_SEEK_SET => Ok(Whence::Set),
        MPI_SEEK_CUR => Ok(Whence::Cur),
        MPI_SEEK_END => Ok(Whence::End),
        _ => Err(mpi_err!(
            Arg,
            "{func}(whence={whence}): not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END"
        )),
    }
}

pub(crate) fn mpi_file_seek(fh: MPI_File, offset: MPI_Offset, whence: c_int) -> MpiResult<()> {
    let func = "MPI_File_seek";
    let f = file(fh, func)?;
    core_io::seek(&f, offset, whence_of(whence, func)?, func)
}

pub(crate) fn mpi_file_seek_shared(
    fh: MPI_File,
    offset: MPI_Offset,
    whence: c_int,
) -> MpiResult<()> {
    let func = "MPI_File_seek_shared";
    let f = file(fh, func)?;
    core_io::seek_shared(&f, offset, whence_of(whence, func)?, func)
}

pub(crate) unsafe fn mpi_file_get_position(fh: MPI_File, offset: *mut MPI_Offset) -> MpiResult<()> {
    let func = "MPI_File_get_position";
    let f = file(fh, func)?;
    // SAFETY: null-checked by `write`.
    unsafe { write(offset, core_io::position(&f) as MPI_Offset, func, "offset") }
}

pub(crate) unsafe fn mpi_file_get_position_shared(
    fh: MPI_File,
    offset: *mut MPI_Offset,
) -> MpiResult<()> {
    let func = "MPI_File_get_position_shared";
    let f = file(fh, func)?;
    // SAFETY: null-checked by `write`.
    unsafe {
        write(
            offset,
            core_io::position_shared(&f) as MPI_Offset,
            func,
            "offset",
        )
    }
}

pub(crate) unsafe fn mpi_file_get_byte_offset(
    fh: MPI_File,
    offset: MPI_Offset,
    disp: *mut MPI_Offset,
) -> MpiResult<()> {
    let func = "MPI_File_get_byte_offset";
    let f = file(fh, func)?;
    let o = offset_arg(offset, func, "offset")?;
    // SAFETY: null-checked by `write`.
    unsafe {
        write(
            disp,
            core_io::byte_offset(&f, o) as MPI_Offset,
            func,
            "disp",
        )
    }
}

/// `MPI_File_get_type_extent(_c)`.
pub(crate) unsafe fn file_get_type_extent<I: Int>(
    fh: MPI_File,
    datatype: MPI_Datatype,
    extent: *mut I,
    func: &str,
) -> MpiResult<()> {
    let f = file(fh, func)?;
    let t = datatypes::type_of(datatype, func, "datatype")?;
    let ext = f.view().rep.extent_of(&t)?;
    let v = I::of(ext).ok_or_else(|| {
        mpi_err!(
            ValueTooLarge,
            "{func}(extent): {ext} does not fit (use MPI_File_get_type_extent_c)"
        )
    })?;
    // SAFETY: null-checked by `write`.
    unsafe { write(extent, v, func, "extent") }
}

// ------------------------------------------------------------------ user representations

/// The conversion functions of `MPI_Register_datarep` (int counts) or `_c` (large counts).
pub(crate) enum Conversion {
    Int(
        Option<MPI_Datarep_conversion_function>,
        Option<MPI_Datarep_conversion_function>,
    ),
    Large(
        Option<MPI_Datarep_conversion_function_c>,
        Option<MPI_Datarep_conversion_function_c>,
    ),
}

/// A conversion function type of `MPI_Register_datarep` (int counts) or its `_c` twin.
pub(crate) trait ConversionFn: Sized {
    /// The pair as the `Conversion` of its count width.
    fn pair(read: Option<Self>, write: Option<Self>) -> Conversion;
}

impl ConversionFn for MPI_Datarep_conversion_function {
    fn pair(read: Option<Self>, write: Option<Self>) -> Conversion {
        Conversion::Int(read, write)
    }
}

impl ConversionFn for MPI_Datarep_conversion_function_c {
    fn pair(read: Option<Self>, write: Option<Self>) -> Conversion {
        Conversion::Large(read, write)
    }
}

struct CRep {
    name: String,
    conv: Conversion,
    extent: Option<MPI_Datarep_extent_function>,
    extra: usize,
}

fn conversion_error(name: &str, code: c_int) -> MpiError {
    let class = crate::error_codes::class_of(code)
        .and_then(ErrorClass::from_i32)
        .unwrap_or(ErrorClass::Conversion);
    MpiError::new(
        class,
        format!("data representation \"{name}\": the conversion function returned {code}"),
    )
}

impl CRep {
    fn convert(
        &self,
        read: bool,
        mem: &MemData,
        position: u64,
        count: u64,
        file: *mut c_void,
    ) -> MpiResult<()> {
        let user = mem.addr as *mut c_void;
        let extra = self.extra as *mut c_void;
        // Called as the standard says: the user's buffer and datatype of the access, a file buffer
        // of the converted size.
        // SAFETY: user callbacks given to MPI_Register_datarep.
        let code = unsafe {
            match &self.conv {
                Conversion::Int(r, w) => match if read { r } else { w } {
                    Some(f) => f(
                        user,
                        mem.handle,
                        count as c_int,
                        file,
                        position as MPI_Offset,
                        extra,
                    ),
                    None => MPI_SUCCESS,
                },
                Conversion::Large(r, w) => match if read { r } else { w } {
                    Some(f) => f(
                        user,
                        mem.handle,
                        count as MPI_Count,
                        file,
                        position as MPI_Offset,
                        extra,
                    ),
                    None => MPI_SUCCESS,
                },
            }
        };
        if code != MPI_SUCCESS {
            return Err(conversion_error(&self.name, code));
        }
        Ok(())
    }
}

impl UserRep for CRep {
    fn name(&self) -> &str {
        &self.name
    }

    fn file_extent(&self, d: &'static Datatype) -> MpiResult<u64> {
        let Some(f) = self.extent else {
            return Ok(d.size as u64);
        };
        let handle = datatypes::predefined_handle(d).unwrap_or(MPI_BYTE);
        let mut ext: MPI_Aint = 0;
        // SAFETY: the user's extent callback with a predefined handle and a live output.
        let code = unsafe { f(handle, &mut ext, self.extra as *mut c_void) };
        if code != MPI_SUCCESS || ext < 0 {
            return Err(conversion_error(&self.name, code));
        }
        Ok(ext as u64)
    }

    fn converts(&self) -> bool {
        match &self.conv {
            Conversion::Int(r, w) => r.is_some() || w.is_some(),
            Conversion::Large(r, w) => r.is_some() || w.is_some(),
        }
    }

    fn to_file(&self, mem: &MemData, position: u64, count: u64, file: &mut [u8]) -> MpiResult<()> {
        self.convert(false, mem, position, count, file.as_mut_ptr().cast())
    }

    fn from_file(&self, mem: &MemData, position: u64, count: u64, file: &[u8]) -> MpiResult<()> {
        self.convert(true, mem, position, count, file.as_ptr() as *mut c_void)
    }
}

/// `MPI_Register_datarep` and its `_c` twin (api/gen.py emits the thin calls).
///
/// # Safety
/// `datarep` null or NUL-terminated; the functions follow the standard's contracts.
pub(crate) unsafe fn register_datarep<F: ConversionFn>(
    datarep: *const c_char,
    read_conversion_fn: Option<F>,
    write_conversion_fn: Option<F>,
    extent: Option<MPI_Datarep_extent_function>,
    extra_state: *mut c_void,
    func: &str,
) -> MpiResult<()> {
    let conv = F::pair(read_conversion_fn, write_conversion_fn);
    // No file is involved: errors go to MPI_FILE_NULL's errhandler, as for MPI_File_open.
    raise_on(Scope::File(MPI_FILE_NULL));
    // SAFETY: the caller passes a NUL-terminated name (checked for null).
    let name = unsafe { c_str(datarep, func, "datarep")? }.into_owned();
    if name.len() >= MPI_MAX_DATAREP_STRING as usize {
        return Err(mpi_err!(
            Arg,
            "{func}(datarep): longer than MPI_MAX_DATAREP_STRING"
        ));
    }
    datarep::register(
        Arc::new(CRep {
            name,
            conv,
            extent,
            extra: extra_state as usize,
        }),
        func,
    )?;
    crate::boundary::clear_raise_on();
    Ok(())
}
