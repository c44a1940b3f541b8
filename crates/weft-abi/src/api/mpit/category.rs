//! MPI_T categories (`weft_core::tools::CATEGORIES`): fixed for the life of the process.

use std::ffi::{c_char, c_int};

use weft_core::error::MpiResult;
use weft_core::tools::{self, CATEGORIES};

use super::{check_init, index, index_by_name, need, out_str, store, store_required, terr};
use crate::constants::*;

pub(crate) unsafe fn mpi_t_category_get_num(num_cat: *mut c_int) -> MpiResult<()> {
    check_init("MPI_T_category_get_num")?;
    // SAFETY: valid per the standard when not null.
    unsafe {
        store_required(
            num_cat,
            CATEGORIES.len() as c_int,
            "MPI_T_category_get_num",
            "num_cat",
        )
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn mpi_t_category_get_info(
    cat_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    desc: *mut c_char,
    desc_len: *mut c_int,
    num_cvars: *mut c_int,
    num_pvars: *mut c_int,
    num_categories: *mut c_int,
) -> MpiResult<()> {
    const F: &str = "MPI_T_category_get_info";
    check_init(F)?;
    let i = index(cat_index, CATEGORIES.len(), F, "cat_index")?;
    // SAFETY: every pointer is null or valid per the standard.
    unsafe {
        out_str(CATEGORIES[i].name, name, name_len);
        out_str(CATEGORIES[i].desc, desc, desc_len);
        store(num_cvars, tools::category_cvars(i).len() as c_int);
        store(num_pvars, tools::category_pvars(i).len() as c_int);
        store(
            num_categories,
            tools::category_subcategories(i).len() as c_int,
        );
    }
    Ok(())
}

pub(crate) unsafe fn mpi_t_category_get_num_events(
    cat_index: c_int,
    num_events: *mut c_int,
) -> MpiResult<()> {
    const F: &str = "MPI_T_category_get_num_events";
    check_init(F)?;
    let i = index(cat_index, CATEGORIES.len(), F, "cat_index")?;
    // SAFETY: valid per the standard when not null.
    unsafe {
        store_required(
            num_events,
            tools::category_events(i).len() as c_int,
            F,
            "num_events",
        )
    }
}

pub(crate) unsafe fn mpi_t_category_get_index(
    name: *const c_char,
    cat_index: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_T_category_get_index";
    let find = tools::category_index;
    // SAFETY: the caller's guarantees (the standard's rules).
    unsafe { index_by_name(name, cat_index, func, "cat_index", "category", find) }
}

/// `MPI_T_category_get_{cvars,pvars,categories,events}`: up to `len` of the category's `items` in
/// `indices` (`api/gen.py` passes the name and what to list).
///
/// # Safety
/// `indices` valid for `len` ints when `len` > 0.
pub(crate) unsafe fn category_items(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
    func: &str,
    items: impl FnOnce(usize) -> Vec<usize>,
) -> MpiResult<()> {
    check_init(func)?;
    let i = index(cat_index, CATEGORIES.len(), func, "cat_index")?;
    if len < 0 {
        return Err(terr(
            MPI_T_ERR_INVALID,
            format!("{func}(len={len}): negative length"),
        ));
    }
    let items = items(i);
    let n = items.len().min(len as usize);
    if n > 0 {
        need(indices, func, "indices")?;
    }
    for (k, &v) in items.iter().take(n).enumerate() {
        // SAFETY: k < len, for which indices is valid per the caller.
        unsafe { indices.add(k).write(v as c_int) };
    }
    Ok(())
}

pub(crate) unsafe fn mpi_t_category_changed(update_number: *mut c_int) -> MpiResult<()> {
    check_init("MPI_T_category_changed")?;
    // Weft's variables and categories never change while the process runs.
    // SAFETY: valid per the standard when not null.
    unsafe { store_required(update_number, 0, "MPI_T_category_changed", "update_number") }
}
