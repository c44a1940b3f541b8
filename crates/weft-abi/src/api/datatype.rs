//! Datatype constructors and queries: every `MPI_Type_*` (and `_c`/`_x`), `MPI_Get_address`,
//! `MPI_Get_elements`, `MPI_Status_set_elements`.

use std::ffi::{c_char, c_int};
use std::sync::Arc;

use weft_core::datatype::{Combiner, Distrib, Order, Type};
use weft_core::error::{MpiError, MpiResult};
use weft_core::mpi_err;

use crate::args::{c_str, copy_out_str, non_null, write, Int};
use crate::constants::*;
use crate::ctypes::*;
use crate::datatypes::{self, committed, handle_for, type_of, TYPES};
use crate::status;

/// A count argument: non-negative.
pub(crate) fn count_arg(v: i64, func: &str, arg: &str) -> MpiResult<usize> {
    usize::try_from(v).map_err(|_| mpi_err!(Count, "{func}({arg}={v}): negative count"))
}

/// A block length or size argument: non-negative.
fn len_arg(v: i64, func: &str, arg: &str) -> MpiResult<usize> {
    usize::try_from(v).map_err(|_| mpi_err!(Arg, "{func}({arg}={v}): must not be negative"))
}

/// A C array argument of `n` elements.
///
/// # Safety
/// `p` null or valid for `n` elements.
unsafe fn array<'a, T>(p: *const T, n: usize, func: &str, arg: &str) -> MpiResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    non_null(p, func, arg)?;
    // SAFETY: non-null and valid for n elements per the caller.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

fn prefix(func: &str, e: MpiError) -> MpiError {
    MpiError::with_code(e.code, format!("{func}: {}", e.message))
}

/// Store a new type's handle.
///
/// # Safety
/// `out` null or writable.
unsafe fn store(out: *mut MPI_Datatype, t: MpiResult<Arc<Type>>, func: &str) -> MpiResult<()> {
    non_null(out, func, "newtype")?;
    let t = t.map_err(|e| prefix(func, e))?;
    // SAFETY: checked non-null above.
    unsafe { write(out, TYPES.insert(t), func, "newtype") }
}

// ------------------------------------------------------------------ constructors

/// `MPI_Type_contiguous` and its `_c` twin.
///
/// # Safety
/// `newtype` null or writable.
pub(crate) unsafe fn type_contiguous<C: Int>(
    count: C,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
    func: &str,
) -> MpiResult<()> {
    let n = count_arg(count.get(), func, "count")?;
    let o = type_of(oldtype, func, "oldtype")?;
    // SAFETY: forwarded caller contract.
    unsafe { store(newtype, Type::contiguous(n, &o, C::LARGE), func) }
}

/// `MPI_Type_vector` (stride in elements), `MPI_Type_create_hvector` (`bytes`: stride in
/// bytes) and their `_c` twins (`api/gen.py` passes `bytes` and the function's name).
///
/// # Safety
/// `newtype` null or writable.
pub(crate) unsafe fn strided<C: Int, D: Int>(
    count: C,
    blocklength: C,
    stride: D,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
    bytes: bool,
    func: &str,
) -> MpiResult<()> {
    let n = count_arg(count.get(), func, "count")?;
    let bl = len_arg(blocklength.get(), func, "blocklength")?;
    let o = type_of(oldtype, func, "oldtype")?;
    let t = Type::vector(n, bl, stride.get(), bytes, &o, C::LARGE);
    // SAFETY: forwarded caller contract.
    unsafe { store(newtype, t, func) }
}

/// The block lengths of an indexed type: one per block (`array_of_blocklengths`) or one
/// for all (`blocklength`, the `_block` constructors).
#[derive(Clone, Copy)]
pub(crate) enum Lengths<C> {
    Each(*const C),
    Block(C),
}

impl<C> From<*const C> for Lengths<C> {
    fn from(p: *const C) -> Self {
        Lengths::Each(p)
    }
}

impl<C: Int> From<C> for Lengths<C> {
    fn from(b: C) -> Self {
        Lengths::Block(b)
    }
}

/// `MPI_Type_indexed`, `MPI_Type_create_hindexed` and their `_block` forms, with their `_c`
/// twins (generated forwards): `bytes` says the displacements count bytes (`h` forms)
/// rather than extents of `oldtype`.
///
/// # Safety
/// The arrays hold `count` elements; `newtype` null or writable.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn indexed<C: Int, D: Int>(
    count: C,
    lengths: impl Into<Lengths<C>>,
    array_of_displacements: *const D,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
    bytes: bool,
    func: &str,
) -> MpiResult<()> {
    let n = count_arg(count.get(), func, "count")?;
    let (lens, block) = match lengths.into() {
        // SAFETY: the caller's contract: `count` block lengths.
        Lengths::Each(p) => (unsafe { wide(p, n, func, "array_of_blocklengths")? }, false),
        Lengths::Block(b) => (vec![b.get()], true),
    };
    let what = if block {
        "blocklength"
    } else {
        "array_of_blocklengths"
    };
    let lens = lens
        .into_iter()
        .map(|l| len_arg(l, func, what))
        .collect::<MpiResult<Vec<usize>>>()?;
    // SAFETY: the caller's contract: `count` displacements.
    let disps = unsafe { wide(array_of_displacements, n, func, "array_of_displacements")? };
    let o = type_of(oldtype, func, "oldtype")?;
    let t = Type::indexed(&lens, &disps, bytes, block, &o, C::LARGE);
    // SAFETY: forwarded caller contract.
    unsafe { store(newtype, t, func) }
}

/// Widen `n` C counts or displacements at `p` to i64.
///
/// # Safety
/// `p` null or valid for `n` elements.
unsafe fn wide<T: Int>(p: *const T, n: usize, func: &str, arg: &str) -> MpiResult<Vec<i64>> {
    // SAFETY: forwarded caller contract.
    Ok(unsafe { array(p, n, func, arg)? }
        .iter()
        .map(|&v| v.get())
        .collect())
}

unsafe fn create_struct(
    count: i64,
    lens: &dyn Fn(usize) -> MpiResult<Vec<i64>>,
    disps: &dyn Fn(usize) -> MpiResult<Vec<i64>>,
    types: *const MPI_Datatype,
    out: *mut MPI_Datatype,
    large: bool,
    func: &str,
) -> MpiResult<()> {
    let n = count_arg(count, func, "count")?;
    let lens = lens(n)?
        .into_iter()
        .map(|l| len_arg(l, func, "array_of_blocklengths"))
        .collect::<MpiResult<Vec<usize>>>()?;
    let disps = disps(n)?;
    // SAFETY: forwarded caller contract.
    let handles = unsafe { array(types, n, func, "array_of_types")? };
    let types = handles
        .iter()
        .map(|&h| type_of(h, func, "array_of_types"))
        .collect::<MpiResult<Vec<_>>>()?;
    // SAFETY: forwarded caller contract.
    unsafe { store(out, Type::create_struct(&lens, &disps, &types, large), func) }
}

/// `MPI_Type_create_struct` and its `_c` twin.
///
/// # Safety
/// The arrays hold `count` elements; `newtype` null or writable.
pub(crate) unsafe fn type_create_struct<C: Int, D: Int>(
    count: C,
    array_of_blocklengths: *const C,
    array_of_displacements: *const D,
    array_of_types: *const MPI_Datatype,
    newtype: *mut MPI_Datatype,
    func: &str,
) -> MpiResult<()> {
    let (n, types) = (count.get(), array_of_types);
    // SAFETY: forwarded caller contract (the closures read the caller's arrays).
    unsafe {
        let lens = |n| wide(array_of_blocklengths, n, func, "array_of_blocklengths");
        let disps = |n| wide(array_of_displacements, n, func, "array_of_displacements");
        create_struct(n, &lens, &disps, types, newtype, C::LARGE, func)
    }
}

fn order_arg(order: c_int, func: &str) -> MpiResult<Order> {
    match order {
        MPI_ORDER_C => Ok(Order::C),
        MPI_ORDER_FORTRAN => Ok(Order::Fortran),
        o => Err(mpi_err!(
            Arg,
            "{func}(order={o}): must be MPI_ORDER_C or MPI_ORDER_FORTRAN"
        )),
    }
}

#[allow(clippy::too_many_arguments)]
unsafe fn subarray(
    ndims: c_int,
    sizes: Vec<i64>,
    subs: Vec<i64>,
    starts: Vec<i64>,
    order: c_int,
    old: MPI_Datatype,
    out: *mut MPI_Datatype,
    large: bool,
    func: &str,
) -> MpiResult<()> {
    let mut sz = Vec::new();
    let mut su = Vec::new();
    let mut st = Vec::new();
    for i in 0..ndims as usize {
        let (a, b, c) = (sizes[i], subs[i], starts[i]);
        if a < 1 || b < 1 || b > a || c < 0 || c > a - b {
            return Err(mpi_err!(Arg, "{func}: dimension {i}: size {a}, subsize {b}, start {c} do not describe a subarray (need 1 <= subsize <= size, 0 <= start <= size - subsize)"));
        }
        sz.push(a as usize);
        su.push(b as usize);
        st.push(c as usize);
    }
    let order = order_arg(order, func)?;
    let o = type_of(old, func, "oldtype")?;
    // SAFETY: forwarded caller contract.
    unsafe { store(out, Type::subarray(&sz, &su, &st, order, &o, large), func) }
}

fn ndims_arg(ndims: c_int, func: &str) -> MpiResult<usize> {
    if ndims < 1 {
        return Err(mpi_err!(Arg, "{func}(ndims={ndims}): must be positive"));
    }
    Ok(ndims as usize)
}

/// `MPI_Type_create_subarray` and its `_c` twin.
///
/// # Safety
/// The arrays hold `ndims` elements; `newtype` null or writable.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn type_create_subarray<C: Int>(
    ndims: c_int,
    array_of_sizes: *const C,
    array_of_subsizes: *const C,
    array_of_starts: *const C,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
    func: &str,
) -> MpiResult<()> {
    let n = ndims_arg(ndims, func)?;
    // SAFETY: forwarded caller contract (arrays of ndims elements).
    unsafe {
        let a = wide(array_of_sizes, n, func, "array_of_sizes")?;
        let b = wide(array_of_subsizes, n, func, "array_of_subsizes")?;
        let c = wide(array_of_starts, n, func, "array_of_starts")?;
        subarray(ndims, a, b, c, order, oldtype, newtype, C::LARGE, func)
    }
}

#[allow(clippy::too_many_arguments)]
unsafe fn darray(
    (size, rank): (c_int, c_int),
    gsizes: Vec<i64>,
    (distribs, dargs, psizes): (*const c_int, *const c_int, *const c_int),
    order: c_int,
    old: MPI_Datatype,
    out: *mut MPI_Datatype,
    large: bool,
    func: &str,
) -> MpiResult<()> {
    let n = gsizes.len();
    if size < 1 || rank < 0 || rank >= size {
        return Err(mpi_err!(
            Arg,
            "{func}(size={size}, rank={rank}): need 0 <= rank < size"
        ));
    }
    // SAFETY: forwarded caller contract (arrays of ndims elements).
    let (ds, da, ps) = unsafe {
        (
            array(distribs, n, func, "array_of_distribs")?,
            array(dargs, n, func, "array_of_dargs")?,
            array(psizes, n, func, "array_of_psizes")?,
        )
    };
    let mut g = Vec::new();
    let mut dist = Vec::new();
    let mut grid: i64 = 1;
    for i in 0..n {
        if gsizes[i] < 1 || ps[i] < 1 {
            return Err(mpi_err!(
                Arg,
                "{func}: dimension {i}: gsize {} and psize {} must be positive",
                gsizes[i],
                ps[i]
            ));
        }
        grid = grid.saturating_mul(ps[i] as i64);
        let darg = match da[i] {
            MPI_DISTRIBUTE_DFLT_DARG => None,
            d if d >= 1 => Some(d as usize),
            d => {
                return Err(mpi_err!(
                    Arg,
                    "{func}(array_of_dargs[{i}]={d}): must be positive or MPI_DISTRIBUTE_DFLT_DARG"
                ))
            }
        };
        dist.push(match ds[i] {
            MPI_DISTRIBUTE_NONE => {
                if ps[i] != 1 {
                    return Err(mpi_err!(Arg, "{func}: dimension {i} is MPI_DISTRIBUTE_NONE but its psize is {}", ps[i]));
                }
                Distrib::None
            }
            MPI_DISTRIBUTE_BLOCK => {
                if let Some(b) = darg {
                    if (b as i64).saturating_mul(ps[i] as i64) < gsizes[i] {
                        return Err(mpi_err!(Arg, "{func}: dimension {i}: block size {b} times {} processes does not cover {} elements", ps[i], gsizes[i]));
                    }
                }
                Distrib::Block(darg)
            }
            MPI_DISTRIBUTE_CYCLIC => Distrib::Cyclic(darg),
            d => return Err(mpi_err!(Arg, "{func}(array_of_distribs[{i}]={d}): not a distribution")),
        });
        g.push(gsizes[i] as usize);
    }
    if grid != size as i64 {
        return Err(mpi_err!(
            Arg,
            "{func}: the process grid has {grid} processes, not size={size}"
        ));
    }
    let order = order_arg(order, func)?;
    let o = type_of(old, func, "oldtype")?;
    let p: Vec<usize> = ps.iter().map(|&v| v as usize).collect();
    // SAFETY: forwarded caller contract.
    unsafe {
        store(
            out,
            Type::darray(
                size as usize,
                rank as usize,
                &g,
                &dist,
                &p,
                order,
                &o,
                (ds, da),
                large,
            ),
            func,
        )
    }
}

/// `MPI_Type_create_darray` and its `_c` twin.
///
/// # Safety
/// The arrays hold `ndims` elements; `newtype` null or writable.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn type_create_darray<C: Int>(
    size: c_int,
    rank: c_int,
    ndims: c_int,
    array_of_gsizes: *const C,
    array_of_distribs: *const c_int,
    array_of_dargs: *const c_int,
    array_of_psizes: *const c_int,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
    func: &str,
) -> MpiResult<()> {
    let n = ndims_arg(ndims, func)?;
    let (grid, place) = (
        (array_of_distribs, array_of_dargs, array_of_psizes),
        (size, rank),
    );
    // SAFETY: forwarded caller contract.
    unsafe {
        let g = wide(array_of_gsizes, n, func, "array_of_gsizes")?;
        darray(place, g, grid, order, oldtype, newtype, C::LARGE, func)
    }
}

/// `MPI_Type_create_resized` and its `_c` twin.
///
/// # Safety
/// `newtype` null or writable.
pub(crate) unsafe fn type_create_resized<D: Int>(
    oldtype: MPI_Datatype,
    lb: D,
    extent: D,
    newtype: *mut MPI_Datatype,
    func: &str,
) -> MpiResult<()> {
    let o = type_of(oldtype, func, "oldtype")?;
    let t = Type::resized(&o, lb.get(), extent.get(), D::LARGE);
    // SAFETY: forwarded caller contract.
    unsafe { store(newtype, t, func) }
}

pub(crate) unsafe fn mpi_type_dup(
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    let f = "MPI_Type_dup";
    let o = type_of(oldtype, f, "oldtype")?;
    non_null(newtype, f, "newtype")?;
    let h = TYPES.insert(Type::dup(&o));
    // Copy the attributes through their copy callbacks; on failure the new type goes away
    // and newtype is MPI_DATATYPE_NULL (as MPICH does, and its test suite checks; the same
    // as MPI_Comm_dup).
    if let Err(e) = crate::api::attr::type_attrs_dup(oldtype, h, f) {
        let _ = TYPES.remove(h);
        // SAFETY: checked non-null above.
        unsafe { newtype.write(MPI_DATATYPE_NULL) };
        return Err(e);
    }
    // SAFETY: checked non-null above.
    unsafe { write(newtype, h, f, "newtype") }
}

pub(crate) unsafe fn mpi_type_commit(datatype: *mut MPI_Datatype) -> MpiResult<()> {
    let f = "MPI_Type_commit";
    non_null(datatype, f, "datatype")?;
    // SAFETY: checked non-null; readable per the caller.
    let h = unsafe { *datatype };
    type_of(h, f, "datatype")?.commit();
    Ok(())
}

pub(crate) unsafe fn mpi_type_free(datatype: *mut MPI_Datatype) -> MpiResult<()> {
    let f = "MPI_Type_free";
    non_null(datatype, f, "datatype")?;
    // SAFETY: checked non-null; readable per the caller.
    let h = unsafe { *datatype };
    let t = type_of(h, f, "datatype")?;
    if t.is_permanent() {
        return Err(mpi_err!(
            Type,
            "{f}(datatype={}): predefined datatypes cannot be freed",
            t.name()
        ));
    }
    // Delete callbacks run first (they may still query the type through its handle).
    crate::api::attr::type_attrs_free(h, f)?;
    // Operations in flight hold their own reference (through their buffer's request), and
    // derived types hold their components, so only the handle goes away here.
    TYPES
        .remove(h)
        .map_err(|_| mpi_err!(Type, "{f}(datatype={h:#x}): the datatype was already freed"))?;
    // SAFETY: checked non-null; writable per the caller.
    unsafe { *datatype = MPI_DATATYPE_NULL };
    Ok(())
}

// ------------------------------------------------------------------ envelope and contents

fn combiner_value(c: Combiner) -> c_int {
    match c {
        Combiner::Named => MPI_COMBINER_NAMED,
        Combiner::Dup => MPI_COMBINER_DUP,
        Combiner::Contiguous => MPI_COMBINER_CONTIGUOUS,
        Combiner::Vector => MPI_COMBINER_VECTOR,
        Combiner::Hvector => MPI_COMBINER_HVECTOR,
        Combiner::Indexed => MPI_COMBINER_INDEXED,
        Combiner::Hindexed => MPI_COMBINER_HINDEXED,
        Combiner::IndexedBlock => MPI_COMBINER_INDEXED_BLOCK,
        Combiner::HindexedBlock => MPI_COMBINER_HINDEXED_BLOCK,
        Combiner::Struct => MPI_COMBINER_STRUCT,
        Combiner::Subarray => MPI_COMBINER_SUBARRAY,
        Combiner::Darray => MPI_COMBINER_DARRAY,
        Combiner::F90Real => MPI_COMBINER_F90_REAL,
        Combiner::F90Complex => MPI_COMBINER_F90_COMPLEX,
        Combiner::F90Integer => MPI_COMBINER_F90_INTEGER,
        Combiner::Resized => MPI_COMBINER_RESIZED,
        Combiner::ValueIndex => MPI_COMBINER_VALUE_INDEX,
    }
}

pub(crate) unsafe fn mpi_type_get_envelope(
    datatype: MPI_Datatype,
    num_integers: *mut c_int,
    num_addresses: *mut c_int,
    num_datatypes: *mut c_int,
    combiner: *mut c_int,
) -> MpiResult<()> {
    let (ints, addrs, types) = (num_integers, num_addresses, num_datatypes);
    let no_counts = std::ptr::null_mut();
    let func = "MPI_Type_get_envelope";
    // SAFETY: forwarded caller contract.
    unsafe { type_envelope(datatype, ints, addrs, no_counts, types, combiner, func) }
}

/// `MPI_Type_get_envelope_c` (forwarded by api/gen.py) and, through `mpi_type_get_envelope`,
/// the int form (which has no `num_large_counts` and refuses a large-count type).
///
/// # Safety
/// Each pointer is null or writable.
pub(crate) unsafe fn type_envelope<C: Int>(
    datatype: MPI_Datatype,
    num_integers: *mut C,
    num_addresses: *mut C,
    num_large_counts: *mut C,
    num_datatypes: *mut C,
    combiner: *mut c_int,
    func: &str,
) -> MpiResult<()> {
    let t = type_of(datatype, func, "datatype")?;
    if t.is_large() && !C::LARGE {
        return Err(mpi_err!(Type, "{func}(datatype={datatype:#x}): made by a large-count constructor; use MPI_Type_get_envelope_c"));
    }
    let c = t.contents();
    let mut outs = vec![
        (num_integers, "num_integers", c.ints.len()),
        (num_addresses, "num_addresses", c.addrs.len()),
    ];
    if C::LARGE {
        outs.push((num_large_counts, "num_large_counts", c.counts.len()));
    }
    outs.push((num_datatypes, "num_datatypes", c.types.len()));
    for &(p, arg, _) in &outs {
        non_null(p, func, arg)?;
    }
    non_null(combiner, func, "combiner")?;
    // SAFETY: all checked non-null; writable per the caller.
    unsafe {
        for (p, _, n) in outs {
            p.write(C::or_undefined(n as i64));
        }
        *combiner = combiner_value(t.combiner());
    }
    Ok(())
}

/// Copy `src` into the user's array `dst` of capacity `max`.
///
/// # Safety
/// `dst` null or valid for `max` elements.
unsafe fn fill<T: Copy>(dst: *mut T, max: i64, src: &[T], func: &str, arg: &str) -> MpiResult<()> {
    if (max as i128) < src.len() as i128 {
        return Err(mpi_err!(
            Arg,
            "{func}(max for {arg}={max}): the type has {} of them",
            src.len()
        ));
    }
    if src.is_empty() {
        return Ok(());
    }
    non_null(dst, func, arg)?;
    // SAFETY: room for src.len() <= max elements per the caller.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
    Ok(())
}

/// `MPI_Type_get_contents_c` (forwarded by api/gen.py with `large_ok`) and, through
/// `mpi_type_get_contents`, the int form.
///
/// # Safety
/// Each array is null or holds its maximum of elements.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn type_contents(
    datatype: MPI_Datatype,
    max_i: i64,
    max_a: i64,
    max_c: i64,
    max_d: i64,
    ints: *mut c_int,
    addrs: *mut MPI_Aint,
    counts: *mut MPI_Count,
    types: *mut MPI_Datatype,
    func: &str,
    large_ok: bool,
) -> MpiResult<()> {
    let t = type_of(datatype, func, "datatype")?;
    if t.combiner() == Combiner::Named {
        return Err(mpi_err!(
            Type,
            "{func}(datatype={}): a predefined datatype has no contents",
            t.name()
        ));
    }
    if t.is_large() && !large_ok {
        return Err(mpi_err!(Type, "{func}(datatype={datatype:#x}): made by a large-count constructor; use MPI_Type_get_contents_c"));
    }
    let c = t.contents();
    let addr_vals: Vec<MPI_Aint> = c.addrs.iter().map(|&a| a as MPI_Aint).collect();
    // Check every capacity before writing anything.
    for (max, n, a) in [
        (max_i, c.ints.len(), "max_integers"),
        (max_a, c.addrs.len(), "max_addresses"),
        (max_c, c.counts.len(), "max_large_counts"),
        (max_d, c.types.len(), "max_datatypes"),
    ] {
        if (max as i128) < n as i128 {
            return Err(mpi_err!(Arg, "{func}({a}={max}): the type has {n}"));
        }
    }
    // SAFETY: forwarded caller contract.
    unsafe {
        fill(ints, max_i, &c.ints, func, "array_of_integers")?;
        fill(addrs, max_a, &addr_vals, func, "array_of_addresses")?;
        if !counts.is_null() || !c.counts.is_empty() {
            fill(counts, max_c, &c.counts, func, "array_of_large_counts")?;
        }
        let handles: Vec<MPI_Datatype> = c.types.iter().map(handle_for).collect();
        fill(types, max_d, &handles, func, "array_of_datatypes")?;
    }
    Ok(())
}

pub(crate) unsafe fn mpi_type_get_contents(
    datatype: MPI_Datatype,
    max_integers: c_int,
    max_addresses: c_int,
    max_datatypes: c_int,
    array_of_integers: *mut c_int,
    array_of_addresses: *mut MPI_Aint,
    array_of_datatypes: *mut MPI_Datatype,
) -> MpiResult<()> {
    // SAFETY: forwarded caller contract.
    unsafe {
        type_contents(
            datatype,
            max_integers.into(),
            max_addresses.into(),
            0,
            max_datatypes.into(),
            array_of_integers,
            array_of_addresses,
            std::ptr::null_mut(),
            array_of_datatypes,
            "MPI_Type_get_contents",
            false,
        )
    }
}

// ------------------------------------------------------------------ size, extent, name

/// `MPI_Type_size` and its `_c` twin (`MPI_UNDEFINED` when the size does not fit).
///
/// # Safety
/// `size` null or writable.
pub(crate) unsafe fn type_size<C: Int>(
    datatype: MPI_Datatype,
    size: *mut C,
    func: &str,
) -> MpiResult<()> {
    let t = type_of(datatype, func, "datatype")?;
    // SAFETY: checked by write.
    unsafe { write(size, C::or_undefined(t.size as i64), func, "size") }
}

/// Write a pair of outputs after checking both.
///
/// # Safety
/// Both null or writable.
unsafe fn pair<T>(
    a: *mut T,
    av: T,
    b: *mut T,
    bv: T,
    func: &str,
    an: &str,
    bn: &str,
) -> MpiResult<()> {
    non_null(a, func, an)?;
    non_null(b, func, bn)?;
    // SAFETY: checked non-null; writable per the caller.
    unsafe {
        a.write(av);
        b.write(bv);
    }
    Ok(())
}

/// `MPI_Type_get_extent` and `MPI_Type_get_true_extent` (`true_extent`), their `_c` twins
/// and `_x` forms (`api/gen.py` passes `true_extent` and the name).
///
/// # Safety
/// `lb` and `extent` null or writable.
pub(crate) unsafe fn extent_pair<D: Int>(
    datatype: MPI_Datatype,
    lb: *mut D,
    extent: *mut D,
    true_extent: bool,
    func: &str,
) -> MpiResult<()> {
    let t = type_of(datatype, func, "datatype")?;
    let (l, e, args) = match true_extent {
        false => (t.lb, t.extent, ("lb", "extent")),
        true => (t.true_lb, t.true_extent, ("true_lb", "true_extent")),
    };
    let (l, e) = (D::or_undefined(l as i64), D::or_undefined(e as i64));
    // SAFETY: forwarded caller contract.
    unsafe { pair(lb, l, extent, e, func, args.0, args.1) }
}

pub(crate) unsafe fn mpi_type_set_name(
    datatype: MPI_Datatype,
    type_name: *const c_char,
) -> MpiResult<()> {
    let f = "MPI_Type_set_name";
    let t = type_of(datatype, f, "datatype")?;
    // SAFETY: forwarded caller contract.
    let name = unsafe { c_str(type_name, f, "type_name")? };
    let max = MPI_MAX_OBJECT_NAME as usize - 1;
    let mut n = name.len().min(max);
    while !name.is_char_boundary(n) {
        n -= 1;
    }
    t.set_name(&name[..n]);
    Ok(())
}

pub(crate) unsafe fn mpi_type_get_name(
    datatype: MPI_Datatype,
    type_name: *mut c_char,
    resultlen: *mut c_int,
) -> MpiResult<()> {
    let f = "MPI_Type_get_name";
    // The null handle has a name too, as MPICH gives it (mpi4py relies on it).
    let name = if datatype == MPI_DATATYPE_NULL {
        "MPI_DATATYPE_NULL".to_string()
    } else {
        type_of(datatype, f, "datatype")?.name()
    };
    non_null(resultlen, f, "resultlen")?;
    // SAFETY: the standard gives the buffer MPI_MAX_OBJECT_NAME bytes.
    unsafe {
        copy_out_str(
            &name,
            type_name,
            MPI_MAX_OBJECT_NAME as usize,
            resultlen,
            f,
            "type_name",
        )
    }
}

// ------------------------------------------------------------------ predefined lookups

pub(crate) unsafe fn mpi_type_match_size(
    typeclass: c_int,
    size: c_int,
    datatype: *mut MPI_Datatype,
) -> MpiResult<()> {
    let f = "MPI_Type_match_size";
    let list: &[(c_int, MPI_Datatype)] = match typeclass {
        MPI_TYPECLASS_INTEGER => &[
            (1, MPI_INTEGER1),
            (2, MPI_INTEGER2),
            (4, MPI_INTEGER4),
            (8, MPI_INTEGER8),
            (16, MPI_INTEGER16),
        ],
        MPI_TYPECLASS_REAL => &[
            (2, MPI_REAL2),
            (4, MPI_REAL4),
            (8, MPI_REAL8),
            (16, MPI_REAL16),
        ],
        MPI_TYPECLASS_COMPLEX => &[
            (4, MPI_COMPLEX4),
            (8, MPI_COMPLEX8),
            (16, MPI_COMPLEX16),
            (32, MPI_COMPLEX32),
        ],
        c => {
            return Err(mpi_err!(
                Arg,
                "{f}(typeclass={c}): not MPI_TYPECLASS_INTEGER, _REAL or _COMPLEX"
            ))
        }
    };
    let h = list
        .iter()
        .find(|p| p.0 == size)
        .map(|p| p.1)
        .ok_or_else(|| mpi_err!(Arg, "{f}(size={size}): no type of that class has that size"))?;
    // SAFETY: checked by write.
    unsafe { write(datatype, h, f, "datatype") }
}

/// An f90 type: the predefined `base` under combiner `kind`, made once per (kind, p, r).
///
/// # Safety
/// `out` null or writable.
unsafe fn f90(
    kind: Combiner,
    p: c_int,
    r: c_int,
    base: MPI_Datatype,
    ints: Vec<i32>,
    out: *mut MPI_Datatype,
    func: &str,
) -> MpiResult<()> {
    non_null(out, func, "newtype")?;
    let key = (kind as u8, p, r);
    let h = {
        let mut cache = datatypes::F90.lock().unwrap_or_else(|e| e.into_inner());
        match cache.get(&key) {
            Some(e) => e.1,
            None => {
                let b = type_of(base, func, "base")?;
                let t = Type::f90(&b, kind, ints);
                let h = TYPES.insert(t.clone());
                cache.insert(key, (t, h));
                h
            }
        }
    };
    // SAFETY: checked non-null.
    unsafe { write(out, h, func, "newtype") }
}

fn real_kind(p: c_int, r: c_int, func: &str, names: [MPI_Datatype; 3]) -> MpiResult<MPI_Datatype> {
    let p_ok = |max| p == MPI_UNDEFINED || (0..=max).contains(&p);
    let r_ok = |max| r == MPI_UNDEFINED || (0..=max).contains(&r);
    if p == MPI_UNDEFINED && r == MPI_UNDEFINED {
        return Err(mpi_err!(
            Arg,
            "{func}(p=MPI_UNDEFINED, r=MPI_UNDEFINED): at least one must be given"
        ));
    }
    [(6, 37), (15, 307), (33, 4931)]
        .iter()
        .position(|&(mp, mr)| p_ok(mp) && r_ok(mr))
        .map(|i| names[i])
        .ok_or_else(|| {
            mpi_err!(
                Arg,
                "{func}(p={p}, r={r}): no real type has that precision and range"
            )
        })
}

/// `MPI_Type_create_f90_real` and (`complex`) `MPI_Type_create_f90_complex`, forwarded by
/// api/gen.py.
///
/// # Safety
/// `newtype` null or writable.
pub(crate) unsafe fn f90_floating(
    p: c_int,
    r: c_int,
    newtype: *mut MPI_Datatype,
    complex: bool,
    func: &str,
) -> MpiResult<()> {
    let (combiner, kinds) = if complex {
        let kinds = [MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32];
        (Combiner::F90Complex, kinds)
    } else {
        (Combiner::F90Real, [MPI_REAL4, MPI_REAL8, MPI_REAL16])
    };
    let base = real_kind(p, r, func, kinds)?;
    // SAFETY: forwarded caller contract.
    unsafe { f90(combiner, p, r, base, vec![p, r], newtype, func) }
}

pub(crate) unsafe fn mpi_type_create_f90_integer(
    r: c_int,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    let f = "MPI_Type_create_f90_integer";
    let base = [
        (2, MPI_INTEGER1),
        (4, MPI_INTEGER2),
        (9, MPI_INTEGER4),
        (18, MPI_INTEGER8),
        (38, MPI_INTEGER16),
    ]
    .iter()
    .find(|&&(max, _)| r != MPI_UNDEFINED && (0..=max).contains(&r))
    .map(|&(_, h)| h)
    .ok_or_else(|| mpi_err!(Arg, "{f}(r={r}): no integer type has that range"))?;
    // SAFETY: forwarded caller contract.
    unsafe { f90(Combiner::F90Integer, 0, r, base, vec![r], newtype, f) }
}

pub(crate) unsafe fn mpi_type_get_value_index(
    value_type: MPI_Datatype,
    index_type: MPI_Datatype,
    pair_type: *mut MPI_Datatype,
) -> MpiResult<()> {
    let f = "MPI_Type_get_value_index";
    type_of(value_type, f, "value_type")?;
    type_of(index_type, f, "index_type")?;
    let h = match (value_type, index_type) {
        (MPI_FLOAT, MPI_INT) => MPI_FLOAT_INT,
        (MPI_DOUBLE, MPI_INT) => MPI_DOUBLE_INT,
        (MPI_LONG, MPI_INT) => MPI_LONG_INT,
        (MPI_INT, MPI_INT) => MPI_2INT,
        (MPI_SHORT, MPI_INT) => MPI_SHORT_INT,
        (MPI_LONG_DOUBLE, MPI_INT) => MPI_LONG_DOUBLE_INT,
        (MPI_REAL, MPI_REAL) => MPI_2REAL,
        (MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION) => MPI_2DOUBLE_PRECISION,
        (MPI_INTEGER, MPI_INTEGER) => MPI_2INTEGER,
        _ => MPI_DATATYPE_NULL,
    };
    // SAFETY: checked by write.
    unsafe { write(pair_type, h, f, "pair_type") }
}

pub(crate) unsafe fn mpi_get_address(
    location: *const std::ffi::c_void,
    address: *mut MPI_Aint,
) -> MpiResult<()> {
    // SAFETY: checked by write.
    unsafe { write(address, location as MPI_Aint, "MPI_Get_address", "address") }
}

// ------------------------------------------------------------------ elements

/// `MPI_Status_set_elements`, its `_c` twin and the `_x` form.
///
/// # Safety
/// `status` null or writable.
pub(crate) unsafe fn status_set_elements<C: Int>(
    status: *mut MPI_Status,
    datatype: MPI_Datatype,
    count: C,
    func: &str,
) -> MpiResult<()> {
    let count = count.get();
    let t = type_of(datatype, func, "datatype")?;
    let n = count_arg(count, func, "count")? as u64;
    let bytes = t
        .bytes_of_elements(n)
        .ok_or_else(|| mpi_err!(Count, "{func}(count={count}): the byte count overflows"))?;
    non_null(status, func, "status")?;
    // SAFETY: checked non-null; writable per the caller.
    let c = unsafe { &mut *status };
    let mut st = status::from_c(c);
    st.bytes = bytes;
    status::to_c(&st, c, true);
    Ok(())
}

/// `committed` re-exported for the pack and iov modules.
pub(crate) fn committed_type(h: MPI_Datatype, func: &str) -> MpiResult<Arc<Type>> {
    committed(h, func, "datatype")
}
