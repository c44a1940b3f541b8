//! File handles (lookup layer): the table of open files and their resolution with the
//! errors the standard asks for (`MPI_ERR_FILE`).

use std::sync::Arc;

use weft_core::error::MpiResult;
use weft_core::io::File;
use weft_core::mpi_err;

use crate::constants::MPI_FILE_NULL;
use crate::ctypes::MPI_File;
use crate::handles::{Kind, Table};

pub static FILES: Table<File> = Table::new(Kind::File);

/// The open file a handle names.
pub fn file(handle: MPI_File, func: &str) -> MpiResult<Arc<File>> {
    if handle == MPI_FILE_NULL {
        return Err(mpi_err!(
            File,
            "{func}(fh=MPI_FILE_NULL): a valid file handle is required"
        ));
    }
    FILES.get(handle).map_err(|why| {
        mpi_err!(
            File,
            "{func}(fh={handle:#x}): file handle: {}",
            why.describe()
        )
    })
}
