//! MPI_T control variables and enumerations (`weft_core::tools::cvars`).

use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use weft_core::error::MpiResult;
use weft_core::object::Comm;
use weft_core::tools::cvars::{self, Bind, Scope, WriteError};

use super::{
    check_init, index, index_by_name, need, out_str, store, store_required, terr, Handles,
};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;

/// An allocated control-variable handle: the variable, and its communicator if bound.
struct CvarHandle {
    index: usize,
    comm: Option<Arc<Comm>>,
}

static HANDLES: Handles<CvarHandle> = Handles::new();

pub(super) fn release_all() {
    HANDLES.clear();
}

/// Enumeration handles name the control variable whose choices they list.
const ENUM_BASE: usize = 0x7e00_0000;

fn enum_handle(cvar: usize) -> MPI_T_enum {
    ENUM_BASE + cvar * 16
}

fn enum_of(h: MPI_T_enum, func: &str) -> MpiResult<&'static [&'static str]> {
    let all = cvars::cvars();
    let cvar = h.wrapping_sub(ENUM_BASE);
    if h >= ENUM_BASE && cvar.is_multiple_of(16) && cvar / 16 < all.len() {
        if let Some(choices) = &all[cvar / 16].choices {
            return Ok(choices);
        }
    }
    Err(terr(
        MPI_T_ERR_INVALID_HANDLE,
        format!("{func}(enumtype={h:#x}): not an enumeration MPI_T gave out"),
    ))
}

pub(crate) unsafe fn mpi_t_cvar_get_num(num_cvar: *mut c_int) -> MpiResult<()> {
    check_init("MPI_T_cvar_get_num")?;
    // SAFETY: valid per the standard when not null.
    unsafe {
        store_required(
            num_cvar,
            cvars::cvars().len() as c_int,
            "MPI_T_cvar_get_num",
            "num_cvar",
        )
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn mpi_t_cvar_get_info(
    cvar_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    datatype: *mut MPI_Datatype,
    enumtype: *mut MPI_T_enum,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
    scope: *mut c_int,
) -> MpiResult<()> {
    const F: &str = "MPI_T_cvar_get_info";
    check_init(F)?;
    let i = index(cvar_index, cvars::cvars().len(), F, "cvar_index")?;
    let var = &cvars::cvars()[i];
    // SAFETY: every pointer is null or valid per the standard.
    unsafe {
        out_str(var.name, name, name_len);
        out_str(var.desc, desc, desc_len);
        store(
            verbosity,
            if var.scope == Scope::ReadOnly {
                MPI_T_VERBOSITY_USER_DETAIL
            } else {
                MPI_T_VERBOSITY_TUNER_BASIC
            },
        );
        store(datatype, MPI_INT);
        store(
            enumtype,
            if var.choices.is_some() {
                enum_handle(i)
            } else {
                MPI_T_ENUM_NULL
            },
        );
        store(
            bind,
            match var.bind {
                Bind::NoObject => MPI_T_BIND_NO_OBJECT,
                Bind::Comm => MPI_T_BIND_MPI_COMM,
            },
        );
        store(
            scope,
            match var.scope {
                Scope::ReadOnly => MPI_T_SCOPE_READONLY,
                Scope::Local => MPI_T_SCOPE_LOCAL,
                Scope::GroupEq => MPI_T_SCOPE_GROUP_EQ,
            },
        );
    }
    Ok(())
}

pub(crate) unsafe fn mpi_t_cvar_get_index(
    name: *const c_char,
    cvar_index: *mut c_int,
) -> MpiResult<()> {
    let (func, what) = ("MPI_T_cvar_get_index", "control variable");
    // SAFETY: the caller's guarantees (the standard's rules).
    unsafe { index_by_name(name, cvar_index, func, "cvar_index", what, cvars::index_of) }
}

/// The communicator `obj_handle` points to, for a variable bound to one.
///
/// # Safety
/// `obj_handle` null or pointing to an `MPI_Comm`.
pub(super) unsafe fn bound_comm(obj_handle: *mut c_void, func: &str) -> MpiResult<Arc<Comm>> {
    need(obj_handle, func, "obj_handle")?;
    // SAFETY: non-null; the standard makes it point to a handle of the bound kind.
    let handle = unsafe { obj_handle.cast::<MPI_Comm>().read() };
    objects::comm(handle, func, "obj_handle").map_err(|e| terr(MPI_T_ERR_INVALID_HANDLE, e.message))
}

pub(crate) unsafe fn mpi_t_cvar_handle_alloc(
    cvar_index: c_int,
    obj_handle: *mut c_void,
    handle: *mut MPI_T_cvar_handle,
    count: *mut c_int,
) -> MpiResult<()> {
    const F: &str = "MPI_T_cvar_handle_alloc";
    check_init(F)?;
    let i = index(cvar_index, cvars::cvars().len(), F, "cvar_index")?;
    need(handle, F, "handle")?;
    need(count, F, "count")?;
    let comm = match cvars::cvars()[i].bind {
        // SAFETY: per the standard, obj_handle points to an MPI_Comm for a bound variable.
        Bind::Comm => Some(unsafe { bound_comm(obj_handle, F) }?),
        Bind::NoObject => None,
    };
    let h = HANDLES.insert(CvarHandle { index: i, comm });
    // SAFETY: checked non-null.
    unsafe {
        handle.write(h);
        count.write(1);
    }
    Ok(())
}

pub(crate) unsafe fn mpi_t_cvar_handle_free(handle: *mut MPI_T_cvar_handle) -> MpiResult<()> {
    const F: &str = "MPI_T_cvar_handle_free";
    check_init(F)?;
    need(handle, F, "handle")?;
    // SAFETY: checked non-null.
    let h = unsafe { handle.read() };
    if HANDLES.remove(h).is_none() {
        return Err(terr(
            MPI_T_ERR_INVALID_HANDLE,
            format!("{F}(handle={h:#x}): not a live control-variable handle"),
        ));
    }
    // SAFETY: checked non-null.
    unsafe { handle.write(MPI_T_CVAR_HANDLE_NULL) };
    Ok(())
}

pub(crate) unsafe fn mpi_t_cvar_read(handle: MPI_T_cvar_handle, buf: *mut c_void) -> MpiResult<()> {
    const F: &str = "MPI_T_cvar_read";
    check_init(F)?;
    let (i, comm) = HANDLES.with(handle, MPI_T_ERR_INVALID_HANDLE, F, "handle", |h| {
        Ok((h.index, h.comm.clone()))
    })?;
    need(buf, F, "buf")?;
    let v = cvars::read(i, comm.as_deref());
    // SAFETY: checked non-null; the buffer holds one int (the variable's count and type).
    unsafe {
        buf.cast::<c_int>()
            .write(v.clamp(c_int::MIN.into(), c_int::MAX.into()) as c_int)
    };
    Ok(())
}

pub(crate) unsafe fn mpi_t_cvar_write(
    handle: MPI_T_cvar_handle,
    buf: *const c_void,
) -> MpiResult<()> {
    const F: &str = "MPI_T_cvar_write";
    check_init(F)?;
    let (i, comm) = HANDLES.with(handle, MPI_T_ERR_INVALID_HANDLE, F, "handle", |h| {
        Ok((h.index, h.comm.clone()))
    })?;
    need(buf, F, "buf")?;
    // SAFETY: checked non-null; the buffer holds one int.
    let v = unsafe { buf.cast::<c_int>().read() };
    cvars::write(i, comm.as_deref(), v.into()).map_err(|e| match e {
        WriteError::Never => terr(
            MPI_T_ERR_CVAR_SET_NEVER,
            format!(
                "{F}: {} is fixed when the process starts",
                cvars::cvars()[i].name
            ),
        ),
        WriteError::Invalid(why) => terr(MPI_T_ERR_INVALID, format!("{F}(buf): {why}")),
    })
}

pub(crate) unsafe fn mpi_t_enum_get_info(
    enumtype: MPI_T_enum,
    num: *mut c_int,
    name: *mut c_char,
    name_len: *mut c_int,
) -> MpiResult<()> {
    const F: &str = "MPI_T_enum_get_info";
    check_init(F)?;
    let choices = enum_of(enumtype, F)?;
    let var = &cvars::cvars()[(enumtype - ENUM_BASE) / 16];
    need(num, F, "num")?;
    // SAFETY: checked non-null; name/name_len null or valid per the standard.
    unsafe {
        num.write(choices.len() as c_int);
        out_str(var.name, name, name_len);
    }
    Ok(())
}

pub(crate) unsafe fn mpi_t_enum_get_item(
    enumtype: MPI_T_enum,
    item: c_int,
    value: *mut c_int,
    name: *mut c_char,
    name_len: *mut c_int,
) -> MpiResult<()> {
    const F: &str = "MPI_T_enum_get_item";
    check_init(F)?;
    let choices = enum_of(enumtype, F)?;
    let k = index(item, choices.len(), F, "index")?;
    need(value, F, "value")?;
    // SAFETY: checked non-null; name/name_len null or valid per the standard.
    unsafe {
        value.write(k as c_int);
        out_str(choices[k], name, name_len);
    }
    Ok(())
}
