//! Process topologies: Cartesian, graph and distributed-graph communicators and their queries.

use std::ffi::c_int;
use std::sync::Arc;

use weft_core::error::{ErrorClass, MpiResult};
use weft_core::mpi_err;
use weft_core::object::comm as core_comm;
use weft_core::object::topo::{self, Topology};
use weft_core::object::Comm;

use crate::api::group::int_array;
use crate::args::{index_below, non_null, write};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;
use crate::objects::out_comm;

fn topology(c: &Comm, func: &str) -> MpiResult<Arc<Topology>> {
    c.topo
        .clone()
        .ok_or_else(|| mpi_err!(Topology, "{func}(comm): the communicator has no topology"))
}

fn cart(c: &Comm, func: &str) -> MpiResult<(Vec<i32>, Vec<bool>)> {
    match &*topology(c, func)? {
        Topology::Cart { dims, periods } => Ok((dims.clone(), periods.clone())),
        _ => Err(mpi_err!(
            Topology,
            "{func}(comm): not a Cartesian communicator"
        )),
    }
}

fn graph(c: &Comm, func: &str) -> MpiResult<(Vec<i32>, Vec<i32>)> {
    match &*topology(c, func)? {
        Topology::Graph { index, edges } => Ok((index.clone(), edges.clone())),
        _ => Err(mpi_err!(Topology, "{func}(comm): not a graph communicator")),
    }
}

/// Write `values` into a C array of at least `values.len()` ints (null allowed when empty).
unsafe fn write_ints(ptr: *mut c_int, values: &[i32], func: &str, arg: &str) -> MpiResult<()> {
    if values.is_empty() {
        return Ok(());
    }
    non_null(ptr, func, arg)?;
    // SAFETY: the caller guarantees room for values.len() ints.
    unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), ptr, values.len()) };
    Ok(())
}

fn intra(c: &Comm, func: &str, arg: &str) -> MpiResult<()> {
    if c.is_inter() {
        return Err(mpi_err!(
            Comm,
            "{func}({arg}): topologies need an intracommunicator"
        ));
    }
    Ok(())
}

/// The start of a topology constructor: `comm_old` an intracommunicator, and the output
/// handle (checked non-null) set to `MPI_COMM_NULL`, which a later error leaves there, as
/// MPICH does (errors/topo/cartsmall).
///
/// # Safety
/// `out` is null or valid for a write.
unsafe fn creation(
    comm_old: MPI_Comm,
    out: *mut MPI_Comm,
    func: &str,
    arg: &str,
) -> MpiResult<Arc<Comm>> {
    let c = objects::comm(comm_old, func, "comm_old")?;
    intra(&c, func, "comm_old")?;
    non_null(out, func, arg)?;
    // SAFETY: checked non-null.
    unsafe { out_comm(out, None) };
    Ok(c)
}

/// A `max*` argument of a query too small for the grid's `ndims` dimensions.
fn room_for_dims(maxdims: c_int, ndims: usize, func: &str) -> MpiResult<()> {
    if maxdims < ndims as c_int {
        return Err(mpi_err!(
            Arg,
            "{func}(maxdims={maxdims}): the grid has {ndims} dimensions"
        ));
    }
    Ok(())
}

/// The `newrank` of the map functions: this rank in a layout of `n` processes, or
/// `MPI_UNDEFINED` outside it.
fn mapped_rank(c: &Comm, n: u32) -> c_int {
    if c.rank < n {
        c.rank as c_int
    } else {
        MPI_UNDEFINED
    }
}

/// The `index` and `edges` arrays of a graph of `nnodes` nodes.
///
/// # Safety
/// `index` holds `nnodes` ints and `edges` `index[nnodes-1]`.
unsafe fn graph_arrays<'a>(
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    func: &str,
) -> MpiResult<(&'a [c_int], &'a [c_int])> {
    // SAFETY: the caller passes nnodes ints.
    let idx = unsafe { int_array(index, nnodes, func, "index")? };
    let nedges = idx.last().copied().unwrap_or(0);
    // SAFETY: the caller passes index[nnodes-1] ints.
    let e = unsafe { int_array(edges, nedges, func, "edges")? };
    Ok((idx, e))
}

// ----------------------------------------------------------------------------- Cartesian

pub(crate) unsafe fn mpi_cart_create(
    comm_old: MPI_Comm,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    _reorder: c_int,
    comm_cart: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Cart_create";
    // SAFETY: the caller passes a valid `comm_cart`.
    let c = unsafe { creation(comm_old, comm_cart, func, "comm_cart") }?;
    if ndims < 0 {
        return Err(mpi_err!(Dims, "{func}(ndims={ndims}): negative"));
    }
    // SAFETY: the caller passes ndims ints in each array.
    let (d, p) = unsafe {
        (
            int_array(dims, ndims, func, "dims")?,
            int_array(periods, ndims, func, "periods")?,
        )
    };
    let periods: Vec<bool> = p.iter().map(|&x| x != 0).collect();
    let new = core_comm::cart_create(&c, d, &periods)?;
    // SAFETY: checked non-null.
    unsafe { out_comm(comm_cart, new) };
    Ok(())
}

pub(crate) unsafe fn mpi_cartdim_get(comm: MPI_Comm, ndims: *mut c_int) -> MpiResult<()> {
    let func = "MPI_Cartdim_get";
    let c = objects::comm_local(comm, func, "comm")?;
    let (d, _) = cart(&c, func)?;
    // SAFETY: the caller passes a valid int pointer (checked for null).
    unsafe { write(ndims, d.len() as c_int, func, "ndims") }
}

pub(crate) unsafe fn mpi_cart_get(
    comm: MPI_Comm,
    maxdims: c_int,
    dims: *mut c_int,
    periods: *mut c_int,
    coords: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Cart_get";
    let c = objects::comm_local(comm, func, "comm")?;
    let (d, p) = cart(&c, func)?;
    room_for_dims(maxdims, d.len(), func)?;
    let pv: Vec<i32> = p.iter().map(|&x| x as i32).collect();
    let cv = Topology::cart_coords(&d, c.rank);
    // SAFETY: each array holds maxdims >= ndims ints.
    unsafe {
        write_ints(dims, &d, func, "dims")?;
        write_ints(periods, &pv, func, "periods")?;
        write_ints(coords, &cv, func, "coords")?;
    }
    Ok(())
}

pub(crate) unsafe fn mpi_cart_rank(
    comm: MPI_Comm,
    coords: *const c_int,
    rank: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Cart_rank";
    let c = objects::comm_local(comm, func, "comm")?;
    let (d, p) = cart(&c, func)?;
    non_null(rank, func, "rank")?;
    // SAFETY: the caller passes ndims ints.
    let cv = unsafe { int_array(coords, d.len() as c_int, func, "coords")? };
    let r = Topology::cart_rank(&d, &p, cv, func)?;
    // SAFETY: checked non-null.
    unsafe { rank.write(r as c_int) };
    Ok(())
}

pub(crate) unsafe fn mpi_cart_coords(
    comm: MPI_Comm,
    rank: c_int,
    maxdims: c_int,
    coords: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Cart_coords";
    let c = objects::comm_local(comm, func, "comm")?;
    let (d, _) = cart(&c, func)?;
    let what = (ErrorClass::Rank, "a rank of the communicator");
    index_below(rank, c.size() as usize, what, func, "rank")?;
    room_for_dims(maxdims, d.len(), func)?;
    let cv = Topology::cart_coords(&d, rank as u32);
    // SAFETY: coords holds maxdims >= ndims ints.
    unsafe { write_ints(coords, &cv, func, "coords") }
}

pub(crate) unsafe fn mpi_cart_shift(
    comm: MPI_Comm,
    direction: c_int,
    disp: c_int,
    rank_source: *mut c_int,
    rank_dest: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Cart_shift";
    let c = objects::comm_local(comm, func, "comm")?;
    let (d, p) = cart(&c, func)?;
    non_null(rank_source, func, "rank_source")?;
    non_null(rank_dest, func, "rank_dest")?;
    if direction < 0 || direction as usize >= d.len() {
        return Err(mpi_err!(
            Arg,
            "{func}(direction={direction}): the grid has {} dimensions",
            d.len()
        ));
    }
    let (s, t) = Topology::cart_shift(&d, &p, c.rank, direction as usize, disp);
    let v = |x: Option<u32>| x.map_or(MPI_PROC_NULL, |r| r as c_int);
    // SAFETY: both checked non-null.
    unsafe {
        rank_source.write(v(s));
        rank_dest.write(v(t));
    }
    Ok(())
}

pub(crate) unsafe fn mpi_cart_sub(
    comm: MPI_Comm,
    remain_dims: *const c_int,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Cart_sub";
    let c = objects::comm(comm, func, "comm")?;
    let (d, _) = cart(&c, func)?;
    non_null(newcomm, func, "newcomm")?;
    // SAFETY: the caller passes ndims ints.
    let r = unsafe { int_array(remain_dims, d.len() as c_int, func, "remain_dims")? };
    let remain: Vec<bool> = r.iter().map(|&x| x != 0).collect();
    let new = core_comm::cart_sub(&c, &remain)?;
    // SAFETY: checked non-null.
    unsafe { out_comm(newcomm, new) };
    Ok(())
}

pub(crate) unsafe fn mpi_cart_map(
    comm: MPI_Comm,
    ndims: c_int,
    dims: *const c_int,
    _periods: *const c_int,
    newrank: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Cart_map";
    let c = objects::comm_local(comm, func, "comm")?;
    intra(&c, func, "comm")?;
    non_null(newrank, func, "newrank")?;
    // SAFETY: the caller passes ndims ints.
    let d = unsafe { int_array(dims, ndims, func, "dims")? };
    let n = topo::cart_size(d, func)?;
    if n > c.size() {
        return Err(mpi_err!(
            Dims,
            "{func}(dims): the grid has {n} processes, more than the communicator's {}",
            c.size()
        ));
    }
    // SAFETY: checked non-null.
    unsafe { newrank.write(mapped_rank(&c, n)) };
    Ok(())
}

pub(crate) unsafe fn mpi_dims_create(
    nnodes: c_int,
    ndims: c_int,
    dims: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Dims_create";
    if ndims < 0 {
        return Err(mpi_err!(Dims, "{func}(ndims={ndims}): negative"));
    }
    if ndims == 0 {
        return Ok(());
    }
    non_null(dims, func, "dims")?;
    // SAFETY: the caller passes ndims ints.
    let mut d = unsafe { std::slice::from_raw_parts(dims, ndims as usize) }.to_vec();
    topo::dims_create(nnodes, &mut d, func)?;
    // SAFETY: as above; written only on success.
    unsafe { std::ptr::copy_nonoverlapping(d.as_ptr(), dims, d.len()) };
    Ok(())
}

// --------------------------------------------------------------------------------- graph

pub(crate) unsafe fn mpi_graph_create(
    comm_old: MPI_Comm,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    _reorder: c_int,
    comm_graph: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Graph_create";
    // SAFETY: the caller passes a valid `comm_graph`.
    let c = unsafe { creation(comm_old, comm_graph, func, "comm_graph") }?;
    // SAFETY: the caller passes the arrays of a graph of nnodes nodes.
    let (idx, e) = unsafe { graph_arrays(nnodes, index, edges, func) }?;
    let new = core_comm::graph_create(&c, idx, e)?;
    // SAFETY: checked non-null.
    unsafe { out_comm(comm_graph, new) };
    Ok(())
}

pub(crate) unsafe fn mpi_graphdims_get(
    comm: MPI_Comm,
    nnodes: *mut c_int,
    nedges: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Graphdims_get";
    let c = objects::comm_local(comm, func, "comm")?;
    let (i, e) = graph(&c, func)?;
    non_null(nedges, func, "nedges")?;
    // SAFETY: checked for null.
    unsafe {
        write(nnodes, i.len() as c_int, func, "nnodes")?;
        nedges.write(e.len() as c_int);
    }
    Ok(())
}

pub(crate) unsafe fn mpi_graph_get(
    comm: MPI_Comm,
    maxindex: c_int,
    maxedges: c_int,
    index: *mut c_int,
    edges: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Graph_get";
    let c = objects::comm_local(comm, func, "comm")?;
    let (i, e) = graph(&c, func)?;
    let mi = (maxindex.max(0) as usize).min(i.len());
    let me = (maxedges.max(0) as usize).min(e.len());
    // SAFETY: the arrays hold maxindex and maxedges ints.
    unsafe {
        write_ints(index, &i[..mi], func, "index")?;
        write_ints(edges, &e[..me], func, "edges")?;
    }
    Ok(())
}

fn graph_rank(c: &Comm, rank: c_int, n: usize, func: &str) -> MpiResult<u32> {
    if rank < 0 || rank as usize >= n {
        return Err(mpi_err!(
            Rank,
            "{func}(rank={rank}): not a node of the graph ({n} nodes)"
        ));
    }
    let _ = c;
    Ok(rank as u32)
}

pub(crate) unsafe fn mpi_graph_neighbors_count(
    comm: MPI_Comm,
    rank: c_int,
    nneighbors: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Graph_neighbors_count";
    let c = objects::comm_local(comm, func, "comm")?;
    let (i, e) = graph(&c, func)?;
    let r = graph_rank(&c, rank, i.len(), func)?;
    let n = topo::graph_neighbors(&i, &e, r).len();
    // SAFETY: checked for null.
    unsafe { write(nneighbors, n as c_int, func, "nneighbors") }
}

pub(crate) unsafe fn mpi_graph_neighbors(
    comm: MPI_Comm,
    rank: c_int,
    maxneighbors: c_int,
    neighbors: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Graph_neighbors";
    let c = objects::comm_local(comm, func, "comm")?;
    let (i, e) = graph(&c, func)?;
    let r = graph_rank(&c, rank, i.len(), func)?;
    let nb = topo::graph_neighbors(&i, &e, r);
    let m = (maxneighbors.max(0) as usize).min(nb.len());
    // SAFETY: neighbors holds maxneighbors ints.
    unsafe { write_ints(neighbors, &nb[..m], func, "neighbors") }
}

pub(crate) unsafe fn mpi_graph_map(
    comm: MPI_Comm,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    newrank: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Graph_map";
    let c = objects::comm_local(comm, func, "comm")?;
    intra(&c, func, "comm")?;
    non_null(newrank, func, "newrank")?;
    // SAFETY: the caller passes the arrays of a graph of nnodes nodes.
    let (idx, e) = unsafe { graph_arrays(nnodes, index, edges, func) }?;
    topo::check_graph(nnodes, idx, e, func)?;
    if nnodes as u32 > c.size() {
        return Err(mpi_err!(
            Arg,
            "{func}(nnodes={nnodes}): more nodes than the communicator's {} processes",
            c.size()
        ));
    }
    // SAFETY: checked non-null.
    unsafe { newrank.write(mapped_rank(&c, nnodes as u32)) };
    Ok(())
}

// --------------------------------------------------------------------- distributed graph

/// Weights argument: `None` for `MPI_UNWEIGHTED`, `Some(empty)` for `MPI_WEIGHTS_EMPTY`.
unsafe fn weights<'a>(
    ptr: *const c_int,
    n: c_int,
    func: &str,
    arg: &str,
) -> MpiResult<Option<&'a [c_int]>> {
    match ptr as usize {
        MPI_UNWEIGHTED => Ok(None),
        MPI_WEIGHTS_EMPTY => {
            if n > 0 {
                return Err(mpi_err!(
                    Arg,
                    "{func}({arg}=MPI_WEIGHTS_EMPTY): {n} edges need weights"
                ));
            }
            Ok(Some(&[]))
        }
        // SAFETY: the caller passes n ints.
        _ => unsafe { int_array(ptr, n, func, arg) }.map(Some),
    }
}

fn check_ranks(list: &[c_int], size: u32, func: &str, arg: &str) -> MpiResult<()> {
    for (i, &r) in list.iter().enumerate() {
        if r < 0 || r as u32 >= size {
            return Err(mpi_err!(
                Rank,
                "{func}({arg}[{i}]={r}): not a rank of the communicator (size {size})"
            ));
        }
    }
    Ok(())
}

pub(crate) unsafe fn mpi_dist_graph_create_adjacent(
    comm_old: MPI_Comm,
    indegree: c_int,
    sources: *const c_int,
    sourceweights: *const c_int,
    outdegree: c_int,
    destinations: *const c_int,
    destweights: *const c_int,
    _info: MPI_Info,
    _reorder: c_int,
    comm_dist_graph: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Dist_graph_create_adjacent";
    // SAFETY: the caller passes a valid `comm_dist_graph`.
    let c = unsafe { creation(comm_old, comm_dist_graph, func, "comm_dist_graph") }?;
    // SAFETY: the caller passes indegree/outdegree ints in each array.
    let (s, sw, d, dw) = unsafe {
        (
            int_array(sources, indegree, func, "sources")?,
            weights(sourceweights, indegree, func, "sourceweights")?,
            int_array(destinations, outdegree, func, "destinations")?,
            weights(destweights, outdegree, func, "destweights")?,
        )
    };
    check_ranks(s, c.size(), func, "sources")?;
    check_ranks(d, c.size(), func, "destinations")?;
    let weighted = sw.is_some() || dw.is_some();
    let new = core_comm::dist_graph_create_adjacent(
        &c,
        s.to_vec(),
        sw.map_or_else(|| vec![1; s.len()], <[i32]>::to_vec),
        d.to_vec(),
        dw.map_or_else(|| vec![1; d.len()], <[i32]>::to_vec),
        weighted,
    )?;
    // SAFETY: checked non-null.
    unsafe { out_comm(comm_dist_graph, Some(new)) };
    Ok(())
}

pub(crate) unsafe fn mpi_dist_graph_create(
    comm_old: MPI_Comm,
    n: c_int,
    sources: *const c_int,
    degrees: *const c_int,
    destinations: *const c_int,
    weights_: *const c_int,
    _info: MPI_Info,
    _reorder: c_int,
    comm_dist_graph: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Dist_graph_create";
    // SAFETY: the caller passes a valid `comm_dist_graph`.
    let c = unsafe { creation(comm_old, comm_dist_graph, func, "comm_dist_graph") }?;
    // SAFETY: the caller passes n ints in sources and degrees.
    let (s, deg) = unsafe {
        (
            int_array(sources, n, func, "sources")?,
            int_array(degrees, n, func, "degrees")?,
        )
    };
    check_ranks(s, c.size(), func, "sources")?;
    let mut total: usize = 0;
    for (i, &k) in deg.iter().enumerate() {
        if k < 0 {
            return Err(mpi_err!(Arg, "{func}(degrees[{i}]={k}): negative degree"));
        }
        total += k as usize;
    }
    // SAFETY: the caller passes sum(degrees) ints.
    let (d, w) = unsafe {
        (
            int_array(destinations, total as c_int, func, "destinations")?,
            weights(weights_, total as c_int, func, "weights")?,
        )
    };
    check_ranks(d, c.size(), func, "destinations")?;
    let mut edges = Vec::with_capacity(total);
    let mut k = 0;
    for (i, &src) in s.iter().enumerate() {
        for _ in 0..deg[i] {
            edges.push((src, d[k], w.map_or(1, |w| w[k])));
            k += 1;
        }
    }
    // Whether the graph is weighted must agree everywhere; a process that specified no edges
    // cannot tell, so MPI_UNWEIGHTED anywhere means unweighted.
    let new = core_comm::dist_graph_create(&c, &edges, w.is_some())?;
    // SAFETY: checked non-null.
    unsafe { out_comm(comm_dist_graph, Some(new)) };
    Ok(())
}

fn dist(c: &Comm, func: &str) -> MpiResult<Arc<Topology>> {
    let t = topology(c, func)?;
    match &*t {
        Topology::DistGraph { .. } => Ok(t),
        _ => Err(mpi_err!(
            Topology,
            "{func}(comm): not a distributed-graph communicator"
        )),
    }
}

pub(crate) unsafe fn mpi_dist_graph_neighbors_count(
    comm: MPI_Comm,
    indegree: *mut c_int,
    outdegree: *mut c_int,
    weighted: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Dist_graph_neighbors_count";
    let c = objects::comm_local(comm, func, "comm")?;
    let t = dist(&c, func)?;
    let Topology::DistGraph {
        sources,
        destinations,
        weighted: w,
        ..
    } = &*t
    else {
        unreachable!("checked by dist()")
    };
    non_null(indegree, func, "indegree")?;
    non_null(outdegree, func, "outdegree")?;
    non_null(weighted, func, "weighted")?;
    // SAFETY: all checked non-null.
    unsafe {
        indegree.write(sources.len() as c_int);
        outdegree.write(destinations.len() as c_int);
        weighted.write(*w as c_int);
    }
    Ok(())
}

pub(crate) unsafe fn mpi_dist_graph_neighbors(
    comm: MPI_Comm,
    maxindegree: c_int,
    sources: *mut c_int,
    sourceweights: *mut c_int,
    maxoutdegree: c_int,
    destinations: *mut c_int,
    destweights: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Dist_graph_neighbors";
    let c = objects::comm_local(comm, func, "comm")?;
    let t = dist(&c, func)?;
    let Topology::DistGraph {
        sources: s,
        source_weights: sw,
        destinations: d,
        dest_weights: dw,
        weighted,
    } = &*t
    else {
        unreachable!("checked by dist()")
    };
    let mi = (maxindegree.max(0) as usize).min(s.len());
    let mo = (maxoutdegree.max(0) as usize).min(d.len());
    let is_array = |p: *mut c_int| {
        !p.is_null() && p as usize != MPI_UNWEIGHTED && p as usize != MPI_WEIGHTS_EMPTY
    };
    // SAFETY: each array holds max{in,out}degree ints.
    unsafe {
        write_ints(sources, &s[..mi], func, "sources")?;
        write_ints(destinations, &d[..mo], func, "destinations")?;
        if *weighted && is_array(sourceweights) {
            write_ints(sourceweights, &sw[..mi], func, "sourceweights")?;
        }
        if *weighted && is_array(destweights) {
            write_ints(destweights, &dw[..mo], func, "destweights")?;
        }
    }
    Ok(())
}

pub(crate) unsafe fn mpi_topo_test(comm: MPI_Comm, status: *mut c_int) -> MpiResult<()> {
    let func = "MPI_Topo_test";
    let c = objects::comm_local(comm, func, "comm")?;
    let v = match c.topo.as_deref() {
        None => MPI_UNDEFINED,
        Some(Topology::Cart { .. }) => MPI_CART,
        Some(Topology::Graph { .. }) => MPI_GRAPH,
        Some(Topology::DistGraph { .. }) => MPI_DIST_GRAPH,
    };
    // SAFETY: checked for null.
    unsafe { write(status, v, func, "status") }
}
