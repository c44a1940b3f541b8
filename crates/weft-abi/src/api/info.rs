//! Info objects (the essentials; the whole API arrives with the communicators issue).

use std::ffi::{c_char, c_int};
use std::sync::{Arc, LazyLock};

use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::object::Info;

use crate::args::{c_str, copy_out_str, non_null, write};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;

/// `MPI_INFO_ENV`: how the process was started (the standard's reserved keys that a process
/// knows by itself).
static INFO_ENV: LazyLock<Arc<Info>> = LazyLock::new(|| {
    let mut args = std::env::args();
    let mut pairs = Vec::new();
    if let Some(command) = args.next() {
        pairs.push(("command".to_owned(), command));
    }
    let rest: Vec<String> = args.collect();
    if !rest.is_empty() {
        pairs.push(("argv".to_owned(), rest.join(" ")));
    }
    if let Ok(dir) = std::env::current_dir() {
        pairs.push(("wdir".to_owned(), dir.display().to_string()));
    }
    Arc::new(Info::from_pairs(pairs))
});

fn info(handle: MPI_Info, func: &str) -> MpiResult<Arc<Info>> {
    if handle == MPI_INFO_ENV {
        return Ok(INFO_ENV.clone());
    }
    if handle == MPI_INFO_NULL {
        return Err(MpiError::new(
            ErrorClass::Info,
            format!("{func}(info=MPI_INFO_NULL): a valid info object is required"),
        ));
    }
    objects::INFOS.get(handle).map_err(|why| {
        MpiError::new(
            ErrorClass::Info,
            format!("{func}(info={handle:#x}): {}", why.describe()),
        )
    })
}

pub(crate) unsafe fn mpi_info_create(info: *mut MPI_Info) -> MpiResult<()> {
    non_null(info, "MPI_Info_create", "info")?;
    let handle = objects::INFOS.insert(Arc::new(Info::new()));
    // SAFETY: checked non-null; the caller passes a valid MPI_Info pointer.
    unsafe { write(info, handle, "MPI_Info_create", "info") }
}

pub(crate) unsafe fn mpi_info_free(info: *mut MPI_Info) -> MpiResult<()> {
    non_null(info, "MPI_Info_free", "info")?;
    // SAFETY: checked non-null.
    let handle = unsafe { *info };
    if handle == MPI_INFO_ENV {
        return Err(MpiError::new(
            ErrorClass::Info,
            "MPI_Info_free(info=MPI_INFO_ENV): a predefined info object cannot be freed",
        ));
    }
    self::info(handle, "MPI_Info_free")?;
    objects::INFOS.remove(handle).map_err(|why| {
        MpiError::new(
            ErrorClass::Info,
            format!("MPI_Info_free(info={handle:#x}): {}", why.describe()),
        )
    })?;
    // SAFETY: as above.
    unsafe { write(info, MPI_INFO_NULL, "MPI_Info_free", "info") }
}

pub(crate) unsafe fn mpi_info_set(
    info: MPI_Info,
    key: *const c_char,
    value: *const c_char,
) -> MpiResult<()> {
    let i = self::info(info, "MPI_Info_set")?;
    // SAFETY: the caller passes NUL-terminated strings (checked for null).
    let (key, value) = unsafe {
        (
            c_str(key, "MPI_Info_set", "key")?,
            c_str(value, "MPI_Info_set", "value")?,
        )
    };
    i.set("MPI_Info_set", key, value)
}

pub(crate) unsafe fn mpi_info_get_string(
    info: MPI_Info,
    key: *const c_char,
    buflen: *mut c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> MpiResult<()> {
    let i = self::info(info, "MPI_Info_get_string")?;
    // SAFETY: the caller passes a NUL-terminated key (checked for null).
    let key = unsafe { c_str(key, "MPI_Info_get_string", "key")? };
    non_null(buflen, "MPI_Info_get_string", "buflen")?;
    non_null(flag, "MPI_Info_get_string", "flag")?;
    // SAFETY: buflen and flag are valid pointers (checked for null); value has *buflen bytes.
    unsafe {
        match i.get(key) {
            None => flag.write(0),
            Some(v) => {
                let capacity = *buflen;
                if capacity > 0 {
                    copy_out_str(
                        &v,
                        value,
                        capacity as usize,
                        std::ptr::null_mut(),
                        "MPI_Info_get_string",
                        "value",
                    )?;
                }
                buflen.write(v.len() as c_int + 1);
                flag.write(1);
            }
        }
    }
    Ok(())
}

pub(crate) unsafe fn mpi_info_get_nkeys(info: MPI_Info, nkeys: *mut c_int) -> MpiResult<()> {
    let i = self::info(info, "MPI_Info_get_nkeys")?;
    // SAFETY: the caller passes a valid int pointer (checked for null).
    unsafe { write(nkeys, i.len() as c_int, "MPI_Info_get_nkeys", "nkeys") }
}

pub(crate) unsafe fn mpi_info_get_nthkey(
    info: MPI_Info,
    n: c_int,
    key: *mut c_char,
) -> MpiResult<()> {
    let i = self::info(info, "MPI_Info_get_nthkey")?;
    let k = usize::try_from(n)
        .ok()
        .and_then(|n| i.nth_key(n))
        .ok_or_else(|| {
            MpiError::new(
                ErrorClass::Arg,
                format!(
                    "MPI_Info_get_nthkey(n={n}): the info object has {} keys",
                    i.len()
                ),
            )
        })?;
    // SAFETY: the standard requires a buffer of MPI_MAX_INFO_KEY bytes.
    unsafe {
        copy_out_str(
            &k,
            key,
            MPI_MAX_INFO_KEY as usize,
            std::ptr::null_mut(),
            "MPI_Info_get_nthkey",
            "key",
        )
    }
}
