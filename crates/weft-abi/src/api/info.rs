//! Info objects: the whole API, usable before `MPI_Init`, after `MPI_Finalize` and from any
//! thread (each object has its own lock).

use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::mpi_err;
use weft_core::object::Info;

use crate::args::{c_str, copy_out_str, non_null, write};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;

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
    objects::info_object(handle, "MPI_Info_free")?;
    objects::INFOS
        .remove(handle)
        .map_err(|why| mpi_err!(Info, "MPI_Info_free(info={handle:#x}): {}", why.describe()))?;
    // SAFETY: as above.
    unsafe { write(info, MPI_INFO_NULL, "MPI_Info_free", "info") }
}

pub(crate) unsafe fn mpi_info_set(
    info: MPI_Info,
    key: *const c_char,
    value: *const c_char,
) -> MpiResult<()> {
    let i = self::objects::info_object(info, "MPI_Info_set")?;
    if info == MPI_INFO_ENV {
        return Err(MpiError::new(
            ErrorClass::Info,
            "MPI_Info_set(info=MPI_INFO_ENV): the predefined info object cannot be changed",
        ));
    }
    // SAFETY: the caller passes NUL-terminated strings (checked for null).
    let (key, value) = unsafe {
        (
            c_str(key, "MPI_Info_set", "key")?,
            c_str(value, "MPI_Info_set", "value")?,
        )
    };
    i.set("MPI_Info_set", &key, &value)
}

pub(crate) unsafe fn mpi_info_get_string(
    info: MPI_Info,
    key: *const c_char,
    buflen: *mut c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> MpiResult<()> {
    let i = self::objects::info_object(info, "MPI_Info_get_string")?;
    // SAFETY: the caller passes a NUL-terminated key (checked for null).
    let key = unsafe { c_str(key, "MPI_Info_get_string", "key")? };
    non_null(buflen, "MPI_Info_get_string", "buflen")?;
    non_null(flag, "MPI_Info_get_string", "flag")?;
    // SAFETY: buflen and flag are valid pointers (checked for null); value has *buflen bytes.
    unsafe {
        match i.get(&key) {
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
    let i = self::objects::info_object(info, "MPI_Info_get_nkeys")?;
    // SAFETY: the caller passes a valid int pointer (checked for null).
    unsafe { write(nkeys, i.len() as c_int, "MPI_Info_get_nkeys", "nkeys") }
}

pub(crate) unsafe fn mpi_info_get_nthkey(
    info: MPI_Info,
    n: c_int,
    key: *mut c_char,
) -> MpiResult<()> {
    let i = self::objects::info_object(info, "MPI_Info_get_nthkey")?;
    let k = usize::try_from(n)
        .ok()
        .and_then(|n| i.nth_key(n))
        .ok_or_else(|| {
            mpi_err!(
                Arg,
                "MPI_Info_get_nthkey(n={n}): the info object has {} keys",
                i.len()
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

pub(crate) unsafe fn mpi_info_dup(info: MPI_Info, newinfo: *mut MPI_Info) -> MpiResult<()> {
    let i = self::objects::info_object(info, "MPI_Info_dup")?;
    non_null(newinfo, "MPI_Info_dup", "newinfo")?;
    let handle = objects::INFOS.insert(Arc::new(i.duplicate()));
    // SAFETY: checked non-null.
    unsafe { newinfo.write(handle) };
    Ok(())
}

pub(crate) unsafe fn mpi_info_delete(info: MPI_Info, key: *const c_char) -> MpiResult<()> {
    let i = self::objects::info_object(info, "MPI_Info_delete")?;
    if info == MPI_INFO_ENV {
        return Err(MpiError::new(
            ErrorClass::Info,
            "MPI_Info_delete(info=MPI_INFO_ENV): the predefined info object cannot be changed",
        ));
    }
    // SAFETY: the caller passes a NUL-terminated key (checked for null).
    let key = unsafe { c_str(key, "MPI_Info_delete", "key")? };
    i.delete("MPI_Info_delete", &key)
}

fn check_key_len(key: &str, func: &str) -> MpiResult<()> {
    if key.is_empty() || key.len() >= MPI_MAX_INFO_KEY as usize {
        return Err(mpi_err!(
            InfoKey,
            "{func}(key): empty or longer than MPI_MAX_INFO_KEY"
        ));
    }
    Ok(())
}

/// Deprecated `MPI_Info_get`: copies at most `valuelen` characters and a NUL.
pub(crate) unsafe fn mpi_info_get(
    info: MPI_Info,
    key: *const c_char,
    valuelen: c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Info_get";
    let i = self::objects::info_object(info, func)?;
    // SAFETY: the caller passes a NUL-terminated key (checked for null).
    let key = unsafe { c_str(key, func, "key")? };
    check_key_len(&key, func)?;
    non_null(flag, func, "flag")?;
    if valuelen < 0 {
        return Err(mpi_err!(
            Arg,
            "{func}(valuelen={valuelen}): negative length"
        ));
    }
    match i.get(&key) {
        None => {
            // SAFETY: checked non-null.
            unsafe { flag.write(0) };
        }
        Some(v) => {
            // SAFETY: value holds valuelen + 1 bytes per the standard.
            unsafe {
                copy_out_str(
                    &v,
                    value,
                    valuelen as usize + 1,
                    std::ptr::null_mut(),
                    func,
                    "value",
                )?;
                flag.write(1);
            }
        }
    }
    Ok(())
}

/// Deprecated `MPI_Info_get_valuelen`: the value's length without the NUL.
pub(crate) unsafe fn mpi_info_get_valuelen(
    info: MPI_Info,
    key: *const c_char,
    valuelen: *mut c_int,
    flag: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Info_get_valuelen";
    let i = self::objects::info_object(info, func)?;
    // SAFETY: the caller passes a NUL-terminated key (checked for null).
    let key = unsafe { c_str(key, func, "key")? };
    check_key_len(&key, func)?;
    non_null(valuelen, func, "valuelen")?;
    non_null(flag, func, "flag")?;
    // SAFETY: both checked non-null.
    unsafe {
        match i.get(&key) {
            None => flag.write(0),
            Some(v) => {
                valuelen.write(v.len() as c_int);
                flag.write(1);
            }
        }
    }
    Ok(())
}

/// `MPI_Info_create_env`: the keys of `MPI_INFO_ENV` for the given arguments (or the
/// process's own when `argv` is NULL). Usable before `MPI_Init`.
pub(crate) unsafe fn mpi_info_create_env(
    argc: c_int,
    argv: *mut *mut c_char,
    info: *mut MPI_Info,
) -> MpiResult<()> {
    let func = "MPI_Info_create_env";
    non_null(info, func, "info")?;
    let args: Vec<String> = if argv.is_null() || argc <= 0 {
        std::env::args().collect()
    } else {
        (0..argc as usize)
            .map(|k| {
                // SAFETY: the caller passes argc strings (main's argv), each NUL-terminated.
                let p = unsafe { *argv.add(k) };
                if p.is_null() {
                    Ok(String::new())
                } else {
                    // SAFETY: as above.
                    unsafe { c_str(p, func, "argv") }.map(|a| a.into_owned())
                }
            })
            .collect::<MpiResult<_>>()?
    };
    let handle =
        objects::INFOS.insert(Arc::new(Info::from_pairs(crate::env_info::env_pairs(args))));
    // SAFETY: checked non-null.
    unsafe { info.write(handle) };
    Ok(())
}

/// `MPIX_Info_set_hex`: store `value_size` bytes at `value` under `key`, as two upper-case
/// hex digits per byte in memory order (how `MPIX_Stream_create` reads a `cudaStream_t`).
///
/// # Safety
/// `key` is a NUL-terminated string; `value` holds `value_size` readable bytes.
pub(crate) unsafe fn mpix_info_set_hex(
    info: MPI_Info,
    key: *const c_char,
    value: *const c_void,
    value_size: c_int,
) -> MpiResult<()> {
    let func = "MPIX_Info_set_hex";
    let i = self::objects::info_object(info, func)?;
    if info == MPI_INFO_ENV {
        return Err(mpi_err!(
            Info,
            "{func}(info=MPI_INFO_ENV): the predefined info object cannot be changed"
        ));
    }
    // SAFETY: the caller passes a NUL-terminated string (checked for null).
    let key = unsafe { c_str(key, func, "key")? };
    if value_size < 0 {
        return Err(mpi_err!(
            Arg,
            "{func}(value_size={value_size}): negative size"
        ));
    }
    let bytes: &[u8] = if value_size == 0 {
        &[]
    } else {
        non_null(value, func, "value")?;
        // SAFETY: `value_size` readable bytes per the caller's contract (checked non-null).
        unsafe { std::slice::from_raw_parts(value as *const u8, value_size as usize) }
    };
    i.set(func, &key, &crate::api::stream::encode_hex(bytes))
}
