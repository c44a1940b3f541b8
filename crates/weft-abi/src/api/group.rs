//! Groups: queries, set operations, inclusion/exclusion, and the groups of communicators.

use std::ffi::c_int;

use weft_core::error::MpiResult;
use weft_core::instance;
use weft_core::mpi_err;
use weft_core::object::{Compare, Group};

use crate::args::{non_null, write};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;

/// The C value of a comparison result.
pub(crate) fn compare_value(c: Compare) -> c_int {
    match c {
        Compare::Ident => MPI_IDENT,
        Compare::Congruent => MPI_CONGRUENT,
        Compare::Similar => MPI_SIMILAR,
        Compare::Unequal => MPI_UNEQUAL,
    }
}

/// Read `n` ints (or rank triplets) from a C array (checked: `n >= 0`, non-null when
/// `n > 0`).
///
/// # Safety
/// `ptr` must hold `n` elements when `n > 0`.
pub(crate) unsafe fn int_array<'a, T>(
    ptr: *const T,
    n: c_int,
    func: &str,
    arg: &str,
) -> MpiResult<&'a [T]> {
    if n < 0 {
        return Err(mpi_err!(Arg, "{func}(n={n}): negative count"));
    }
    if n == 0 {
        return Ok(&[]);
    }
    non_null(ptr, func, arg)?;
    // SAFETY: non-null, and the caller guarantees `n` readable elements.
    Ok(unsafe { std::slice::from_raw_parts(ptr, n as usize) })
}

fn out_group(out: *mut MPI_Group, g: Group, func: &str) -> MpiResult<()> {
    non_null(out, func, "newgroup")?;
    let h = objects::group_handle(g);
    // SAFETY: checked non-null; the caller passes a writable MPI_Group.
    unsafe { out.write(h) };
    Ok(())
}

pub(crate) unsafe fn mpi_group_size(group: MPI_Group, size: *mut c_int) -> MpiResult<()> {
    let g = objects::group(group, "MPI_Group_size", "group")?;
    // SAFETY: the caller passes a valid int pointer (checked for null).
    unsafe { write(size, g.size() as c_int, "MPI_Group_size", "size") }
}

pub(crate) unsafe fn mpi_group_rank(group: MPI_Group, rank: *mut c_int) -> MpiResult<()> {
    let g = objects::group(group, "MPI_Group_rank", "group")?;
    let me = instance::job().map(|j| j.rank);
    let r = me
        .and_then(|p| g.rank_of(p))
        .or_else(|| crate::thread_ranks::rank_in(&g))
        .map_or(MPI_UNDEFINED, |r| r as c_int);
    // SAFETY: as above.
    unsafe { write(rank, r, "MPI_Group_rank", "rank") }
}

pub(crate) unsafe fn mpi_group_translate_ranks(
    group1: MPI_Group,
    n: c_int,
    ranks1: *const c_int,
    group2: MPI_Group,
    ranks2: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Group_translate_ranks";
    let g1 = objects::group(group1, func, "group1")?;
    let g2 = objects::group(group2, func, "group2")?;
    // SAFETY: the caller passes n ints.
    let r1 = unsafe { int_array(ranks1, n, func, "ranks1")? };
    let t = g1.translate(r1, &g2, MPI_PROC_NULL, func)?;
    if n > 0 {
        non_null(ranks2, func, "ranks2")?;
    }
    for (i, v) in t.into_iter().enumerate() {
        // SAFETY: ranks2 holds n ints per the standard (checked non-null).
        unsafe { ranks2.add(i).write(v.unwrap_or(MPI_UNDEFINED)) };
    }
    Ok(())
}

pub(crate) unsafe fn mpi_group_compare(
    group1: MPI_Group,
    group2: MPI_Group,
    result: *mut c_int,
) -> MpiResult<()> {
    let g1 = objects::group(group1, "MPI_Group_compare", "group1")?;
    let g2 = objects::group(group2, "MPI_Group_compare", "group2")?;
    let r = compare_value(g1.compare(&g2));
    // SAFETY: the caller passes a valid int pointer (checked for null).
    unsafe { write(result, r, "MPI_Group_compare", "result") }
}

/// `MPI_Group_union`, `MPI_Group_intersection` and `MPI_Group_difference` (`op`).
///
/// # Safety
/// `newgroup` null or writable.
pub(crate) unsafe fn set_op(
    group1: MPI_Group,
    group2: MPI_Group,
    newgroup: *mut MPI_Group,
    func: &str,
    op: fn(&Group, &Group) -> Group,
) -> MpiResult<()> {
    non_null(newgroup, func, "newgroup")?;
    let g1 = objects::group(group1, func, "group1")?;
    let g2 = objects::group(group2, func, "group2")?;
    out_group(newgroup, op(&g1, &g2), func)
}

/// `MPI_Group_incl`/`excl` (`n` ranks) and `MPI_Group_range_incl`/`range_excl` (`n` rank
/// triplets), generated forwards: `op` makes the new group from `items`, named `arg`.
///
/// # Safety
/// `items` holds `n` elements; `newgroup` null or writable.
pub(crate) unsafe fn subset<T>(
    group: MPI_Group,
    n: c_int,
    items: *const T,
    newgroup: *mut MPI_Group,
    func: &str,
    arg: &str,
    op: fn(&Group, &[T], &str) -> MpiResult<Group>,
) -> MpiResult<()> {
    // The output pointer first: a null one is MPI_ERR_ARG whatever the ranks say.
    non_null(newgroup, func, "newgroup")?;
    let g = objects::group(group, func, "group")?;
    // SAFETY: the caller passes n elements.
    let r = unsafe { int_array(items, n, func, arg)? };
    out_group(newgroup, op(&g, r, func)?, func)
}

pub(crate) unsafe fn mpi_group_free(group: *mut MPI_Group) -> MpiResult<()> {
    let func = "MPI_Group_free";
    non_null(group, func, "group")?;
    // SAFETY: checked non-null.
    let h = unsafe { *group };
    if h != MPI_GROUP_EMPTY {
        objects::group(h, func, "group")?;
        objects::GROUPS
            .remove(h)
            .map_err(|why| mpi_err!(Group, "{func}(group={h:#x}): {}", why.describe()))?;
    }
    // SAFETY: as above.
    unsafe { group.write(MPI_GROUP_NULL) };
    Ok(())
}

pub(crate) unsafe fn mpi_comm_group(comm: MPI_Comm, group: *mut MPI_Group) -> MpiResult<()> {
    let func = "MPI_Comm_group";
    let g = if crate::thread_ranks::is_inside(comm) {
        crate::api::threadcomm::comm_group(comm, func)?
    } else {
        objects::comm_local(comm, func, "comm")?.group.clone()
    };
    non_null(group, func, "group")?;
    let h = objects::group_handle(g);
    // SAFETY: checked non-null.
    unsafe { group.write(h) };
    Ok(())
}

pub(crate) unsafe fn mpi_comm_remote_group(comm: MPI_Comm, group: *mut MPI_Group) -> MpiResult<()> {
    let func = "MPI_Comm_remote_group";
    let c = objects::comm_local(comm, func, "comm")?;
    non_null(group, func, "group")?;
    let r = c
        .remote
        .clone()
        .ok_or_else(|| mpi_err!(Comm, "{func}(comm): not an intercommunicator"))?;
    let h = objects::group_handle(r);
    // SAFETY: checked non-null.
    unsafe { group.write(h) };
    Ok(())
}
