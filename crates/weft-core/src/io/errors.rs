//! File-system errors as MPI error classes, with messages naming the function and the file.
#![forbid(unsafe_code)]

use std::io;

use crate::error::{ErrorClass, MpiError};

/// The class the standard gives an operating-system error on a file.
pub fn class_of(e: &io::Error) -> ErrorClass {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENOTDIR) => ErrorClass::NoSuchFile,
        Some(libc::EACCES) | Some(libc::EPERM) => ErrorClass::Access,
        Some(libc::EEXIST) => ErrorClass::FileExists,
        Some(libc::EROFS) => ErrorClass::ReadOnly,
        Some(libc::ENOSPC) => ErrorClass::NoSpace,
        Some(libc::EDQUOT) => ErrorClass::Quota,
        Some(libc::EISDIR) | Some(libc::ENAMETOOLONG) | Some(libc::ELOOP) | Some(libc::EINVAL) => {
            ErrorClass::BadFile
        }
        Some(libc::ETXTBSY) | Some(libc::EBUSY) => ErrorClass::FileInUse,
        _ => ErrorClass::Io,
    }
}

/// `func(filename): what: error`.
pub fn file_error(func: &str, name: &str, what: &str, e: &io::Error) -> MpiError {
    MpiError::new(class_of(e), format!("{func}(\"{name}\"): {what}: {e}"))
}
