//! `MPI_Status` as the C caller sees it: the public fields, and in the hidden ones the byte
//! count (`MPI_internal[0..2]`, low and high halves) and the cancelled flag (`[2]`).

use std::ffi::c_int;

use weft_core::message::Status;

use crate::constants::*;
use crate::ctypes::MPI_Status;

/// The status of an operation on `MPI_REQUEST_NULL` or with nothing to report: source
/// `MPI_ANY_SOURCE`, tag `MPI_ANY_TAG`, no error, count 0.
pub const EMPTY: Status = Status {
    source: MPI_ANY_SOURCE,
    tag: MPI_ANY_TAG,
    error: MPI_SUCCESS,
    bytes: 0,
    cancelled: false,
    sizes_differ: false,
};

pub fn to_c(status: &Status, out: &mut MPI_Status, with_error: bool) {
    out.MPI_SOURCE = status.source;
    out.MPI_TAG = status.tag;
    if with_error {
        out.MPI_ERROR = status.error;
    }
    out.MPI_internal[0] = status.bytes as u32 as c_int;
    out.MPI_internal[1] = (status.bytes >> 32) as u32 as c_int;
    out.MPI_internal[2] = status.cancelled as c_int;
}

pub fn from_c(status: &MPI_Status) -> Status {
    Status {
        source: status.MPI_SOURCE,
        tag: status.MPI_TAG,
        error: status.MPI_ERROR,
        bytes: (status.MPI_internal[0] as u32 as u64)
            | ((status.MPI_internal[1] as u32 as u64) << 32),
        cancelled: status.MPI_internal[2] != 0,
        sizes_differ: false,
    }
}

/// Write `status` to a user's status pointer unless it is `MPI_STATUS_IGNORE`.
///
/// # Safety
/// `out` must be null or point to a writable `MPI_Status`.
pub unsafe fn store(out: *mut MPI_Status, status: &Status, with_error: bool) {
    if !out.is_null() {
        // SAFETY: non-null and writable per the contract.
        to_c(status, unsafe { &mut *out }, with_error);
    }
}

/// Write the empty status (`EMPTY`, its `MPI_ERROR` included: MPI 4.1 §3.7.3 defines the
/// empty status with error `MPI_SUCCESS`) unless `out` is `MPI_STATUS_IGNORE`.
///
/// # Safety
/// As for `store`.
pub unsafe fn store_empty(out: *mut MPI_Status) {
    // SAFETY: the caller's contract.
    unsafe { store(out, &EMPTY, true) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_large_counts() {
        let s = Status {
            source: 3,
            tag: 9,
            error: 15,
            bytes: (7 << 32) | 5,
            cancelled: true,
            sizes_differ: false,
        };
        let mut c = MPI_Status::default();
        to_c(&s, &mut c, true);
        assert_eq!(from_c(&c), s);
        let mut c2 = MPI_Status {
            MPI_ERROR: 42,
            ..MPI_Status::default()
        };
        to_c(&s, &mut c2, false);
        assert_eq!(
            c2.MPI_ERROR, 42,
            "single-request calls leave MPI_ERROR alone"
        );
    }
}
