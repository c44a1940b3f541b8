//! `MPIX_Type_iov_len` and `MPIX_Type_iov` (EXTENSIONS.md section B): the merged contiguous
//! segments of one instance of a datatype, any segment reached in O(depth of the type).

use std::ffi::c_void;

use weft_core::error::MpiResult;
use weft_core::mpi_err;

use crate::args::non_null;
use crate::ctypes::*;
use crate::datatypes::type_of;

pub(crate) unsafe fn mpix_type_iov_len(
    datatype: MPI_Datatype,
    max_iov_bytes: MPI_Count,
    iov_len: *mut MPI_Count,
    actual_iov_bytes: *mut MPI_Count,
) -> MpiResult<()> {
    let f = "MPIX_Type_iov_len";
    let t = type_of(datatype, f, "datatype")?;
    if max_iov_bytes < -1 {
        return Err(mpi_err!(
            Arg,
            "{f}(max_iov_bytes={max_iov_bytes}): must be -1 (no limit) or non-negative"
        ));
    }
    non_null(iov_len, f, "iov_len")?;
    non_null(actual_iov_bytes, f, "actual_iov_bytes")?;
    let max = if max_iov_bytes == -1 {
        u64::MAX
    } else {
        max_iov_bytes as u64
    };
    let (n, bytes) = t.compiled_layout().segments_within(max);
    // SAFETY: both checked non-null; writable per the caller.
    unsafe {
        *iov_len = n as MPI_Count;
        *actual_iov_bytes = bytes as MPI_Count;
    }
    Ok(())
}

pub(crate) unsafe fn mpix_type_iov(
    datatype: MPI_Datatype,
    iov_offset: MPI_Count,
    iov: *mut MPIX_Iov,
    max_iov_len: MPI_Count,
    actual_iov_len: *mut MPI_Count,
) -> MpiResult<()> {
    let f = "MPIX_Type_iov";
    let t = type_of(datatype, f, "datatype")?;
    if iov_offset < 0 {
        return Err(mpi_err!(
            Arg,
            "{f}(iov_offset={iov_offset}): must not be negative"
        ));
    }
    if max_iov_len < 0 {
        return Err(mpi_err!(
            Arg,
            "{f}(max_iov_len={max_iov_len}): must not be negative"
        ));
    }
    non_null(actual_iov_len, f, "actual_iov_len")?;
    let c = t.compiled_layout();
    let total = c.segments();
    let first = iov_offset as u64;
    let n = total.saturating_sub(first).min(max_iov_len as u64);
    if n > 0 {
        non_null(iov, f, "iov")?;
    }
    for i in 0..n {
        let (s, _) = c.segment(first + i);
        // SAFETY: the caller's array has room for max_iov_len >= n entries.
        unsafe {
            iov.add(i as usize).write(MPIX_Iov {
                iov_base: s.start as *mut c_void,
                iov_len: s.len as MPI_Aint,
            })
        };
    }
    // SAFETY: checked non-null; writable per the caller.
    unsafe { *actual_iov_len = n as MPI_Count };
    Ok(())
}
