//! Arguments of the collective operations, shared by `coll.rs`, `coll_data.rs` and
//! `neighbor.rs`: the communicator and root, typed buffers from (address, count, datatype)
//! and from count/displacement arrays, `MPI_IN_PLACE`, aliasing, and `finish`, which runs
//! a collective in its mode.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use weft_core::coll;
use weft_core::datatype::{Buf, Type};
use weft_core::error::MpiResult;
use weft_core::mpi_err;
use weft_core::object::Comm;
use weft_core::op::Reduction;
use weft_core::request::{PersistentOp, ReqId, StartFn};
use weft_core::threadcomm::ThreadComm;

use crate::api::family::Mode;
use crate::api::op::reduction;
use crate::api::pt2pt::prefix;
use crate::args::non_null;
use crate::args::Int;
use crate::constants::*;
use crate::ctypes::*;
use crate::datatypes::TypeRef;
use crate::objects::CommRef;
use crate::requests::request_handle;
use crate::small::Small;
use crate::{datatypes, objects};

pub(crate) fn is_in_place(p: *const c_void) -> bool {
    p as usize == MPI_IN_PLACE
}

pub(crate) fn comm_of(comm: MPI_Comm, func: &str) -> MpiResult<Arc<Comm>> {
    objects::comm(comm, func, "comm")
}

/// `comm_of` for the blocking paths of the small collectives: no reference count or lock
/// unless calls may overlap (`objects::comm_ref`).
pub(crate) fn comm_ref(comm: MPI_Comm, func: &str) -> MpiResult<CommRef> {
    objects::comm_ref(comm, func, "comm")
}

/// A communicator for an operation the standard defines on intracommunicators only.
pub(crate) fn intra_of(comm: MPI_Comm, func: &str) -> MpiResult<Arc<Comm>> {
    let c = objects::comm(comm, func, "comm")?;
    intra_only(&c, func)?;
    Ok(c)
}

pub(crate) fn intra_only(c: &Comm, func: &str) -> MpiResult<()> {
    if c.is_inter() {
        return Err(mpi_err!(
            Comm,
            "{func}(comm): not defined on an intercommunicator"
        ));
    }
    Ok(())
}

/// The root argument: a rank of the communicator, or on an intercommunicator `MPI_ROOT`
/// (`coll::ROOT`), `MPI_PROC_NULL` (`coll::PROC_NULL`) or a rank of the remote group.
pub(crate) fn root_of(c: &Comm, root: c_int, func: &str) -> MpiResult<u32> {
    if c.is_inter() {
        match root {
            MPI_ROOT => return Ok(coll::ROOT),
            MPI_PROC_NULL => return Ok(coll::PROC_NULL),
            r if r >= 0 && (r as u32) < c.peer_size() => return Ok(r as u32),
            _ => {
                return Err(mpi_err!(Root, "{func}(root={root}): not MPI_ROOT, MPI_PROC_NULL or a rank of the remote group (size {})",
                        c.peer_size()))
            }
        }
    }
    rank_root(root, c.size(), "communicator", func)
}

/// A root that must be a rank of a group of `size` (the `what`'s).
fn rank_root(root: c_int, size: u32, what: &str, func: &str) -> MpiResult<u32> {
    if root < 0 || root as u32 >= size {
        return Err(mpi_err!(
            Root,
            "{func}(root={root}): not a rank of the {what} (size {size})"
        ));
    }
    Ok(root as u32)
}

/// Whether this process holds the root's buffers (the root, or `MPI_ROOT`).
pub(crate) fn at_root(c: &Comm, root: u32) -> bool {
    if c.is_inter() {
        root == coll::ROOT
    } else {
        c.rank == root
    }
}

/// Whether this process takes part with data (not `MPI_PROC_NULL` on an intercommunicator).
pub(crate) fn takes_part(c: &Comm, root: u32) -> bool {
    !(c.is_inter() && root == coll::PROC_NULL)
}

/// A committed datatype.
pub(crate) fn dtype(handle: MPI_Datatype, func: &str, arg: &str) -> MpiResult<Arc<Type>> {
    datatypes::committed(handle, func, arg)
}

/// `count` instances of `t` at address `addr`.
///
/// # Safety
/// `addr` holds `count` instances of `t` (the standard's rule for a message buffer), left
/// alone until the collective completes.
pub(crate) unsafe fn buf_at(
    addr: usize,
    count: i64,
    t: &Arc<Type>,
    func: &str,
    buf_arg: &str,
    count_arg: impl std::fmt::Display,
) -> MpiResult<Buf> {
    if count < 0 {
        return Err(mpi_err!(
            Count,
            "{func}({count_arg}={count}): negative count"
        ));
    }
    let bytes = usize::try_from(count)
        .ok()
        .and_then(|c| t.bytes_for(c))
        .filter(|&b| {
            b == 0 || (count as u128) * (t.extent.unsigned_abs() as u128) <= isize::MAX as u128
        })
        .ok_or_else(|| {
            mpi_err!(
                Count,
                "{func}({count_arg}={count}): the message size overflows"
            )
        })?;
    // A derived type may address absolute memory from MPI_BOTTOM (null).
    if addr == 0 && bytes > 0 && t.predefined.is_some() {
        return Err(mpi_err!(
            Buffer,
            "{func}({buf_arg}=NULL): a buffer is required for count {count}"
        ));
    }
    if addr == MPI_IN_PLACE && bytes > 0 {
        return Err(mpi_err!(
            Buffer,
            "{func}({buf_arg}=MPI_IN_PLACE): not allowed here"
        ));
    }
    // The type stays alive through the handle table during the call and through `finish`'s `keep`
    // (and the core's plans and requests) after it.
    // SAFETY: the caller's contract for the buffer; the type stays alive (above).
    Ok(unsafe { Buf::typed(addr, count as usize, t) })
}

/// The types of typed buffers, for whoever holds the buffers past the call.
pub(crate) trait Keep {
    fn keep_into(&self, out: &mut Vec<Arc<Type>>);
}
impl Keep for Buf {
    fn keep_into(&self, out: &mut Vec<Arc<Type>>) {
        out.extend(self.keep());
    }
}
impl<T: Keep> Keep for Option<T> {
    fn keep_into(&self, out: &mut Vec<Arc<Type>>) {
        if let Some(b) = self {
            b.keep_into(out)
        }
    }
}
impl<T: Keep> Keep for Vec<T> {
    fn keep_into(&self, out: &mut Vec<Arc<Type>>) {
        for b in self {
            b.keep_into(out)
        }
    }
}

pub(crate) fn keep(bufs: &[&dyn Keep]) -> Vec<Arc<Type>> {
    let mut out = Vec::new();
    for b in bufs {
        b.keep_into(&mut out);
    }
    out
}

/// The `n` entries of a count, displacement or datatype array, borrowed (no copy).
///
/// # Safety
/// `p` must be null or point to `n` readable entries, left alone for the call.
pub(crate) unsafe fn array<'a, T>(
    p: *const T,
    n: usize,
    func: &str,
    arg: &str,
) -> MpiResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    non_null(p, func, arg)?;
    // SAFETY: non-null and `n` elements long per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// The parts of a `v` buffer.
pub(crate) type Parts = Small<Buf>;

impl Small<Buf> {
    /// No parts (the side of a rooted collective that a non-root leaves out).
    pub(crate) fn none() -> Parts {
        Small::filled(0, Buf::EMPTY)
    }
}

impl Keep for Parts {
    fn keep_into(&self, out: &mut Vec<Arc<Type>>) {
        for b in self.iter() {
            b.keep_into(out)
        }
    }
}

/// The checked datatypes of a `v` or `w` buffer's parts.
pub(crate) enum PartTypes<'a> {
    /// One datatype for every part; `None` only where there are no parts.
    One(Option<TypeRef>),
    /// A handle per part (the `w` forms) and their argument's name: each part resolves its
    /// own, already checked by `each`.
    Each(&'a [MPI_Datatype], &'a str),
}

impl<'a> PartTypes<'a> {
    /// `handle` for `n` parts, checked only where there are parts.
    pub(crate) fn one(handle: MPI_Datatype, n: usize, func: &str, arg: &str) -> MpiResult<Self> {
        let t = (n > 0).then(|| datatypes::committed_ref(handle, func, arg));
        Ok(PartTypes::One(t.transpose()?))
    }

    /// A handle per part, each checked (in order) to be a committed datatype.
    pub(crate) fn each(handles: &'a [MPI_Datatype], func: &str, arg: &'a str) -> MpiResult<Self> {
        for &h in handles {
            datatypes::committed_ref(h, func, arg)?;
        }
        Ok(PartTypes::Each(handles, arg))
    }
}

/// The parts of a `v` buffer for `n` peers: part i is `count` instances at
/// `base + displ * extent` (bytes for `byte_displs`), where `(count, displ) = layout(i)`.
///
/// # Safety
/// Each part is a message buffer (`buf_at`'s contract); `PartTypes::Each` holds `n` handles.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn parts(
    base: *const c_void,
    n: usize,
    layout: impl Fn(usize) -> (i64, i64),
    types: &PartTypes,
    byte_displs: bool,
    func: &str,
    (buf_arg, counts_arg): (&str, &str),
) -> MpiResult<Parts> {
    let part = |i: usize, dt: &Arc<Type>| {
        let (c, d) = layout(i);
        let scale = if byte_displs { 1 } else { dt.extent as i64 };
        let addr = (base as usize).wrapping_add_signed(d.wrapping_mul(scale) as isize);
        let addr = if c == 0 { base as usize } else { addr };
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        if let Some(b) = unsafe { dense_part(addr, c, dt) } {
            return Ok(b);
        }
        // The argument's name is only formatted for an error message.
        // SAFETY: forwarded caller contract (the buffers hold what the counts say).
        unsafe {
            buf_at(
                addr,
                c,
                dt,
                func,
                buf_arg,
                format_args!("{counts_arg}[{i}]"),
            )
        }
    };
    match types {
        PartTypes::One(Some(dt)) => Small::try_from_fn(n, Buf::EMPTY, |i| part(i, dt)),
        PartTypes::One(None) => Ok(Parts::none()),
        PartTypes::Each(handles, arg) => Small::try_from_fn(n, Buf::EMPTY, |i| {
            let t = datatypes::committed_ref(handles[i], func, arg)?;
            part(i, &t)
        }),
    }
}

/// `buf_at` for a predefined type whose instances are consecutive bytes, in a few
/// instructions; `None` for any other type, and where `buf_at` has an error to report.
///
/// # Safety
/// `buf_at`'s contract.
#[inline(always)]
unsafe fn dense_part(addr: usize, count: i64, t: &Type) -> Option<Buf> {
    if t.predefined.is_none() || !t.is_contiguous() {
        return None;
    }
    let bytes = usize::try_from(count)
        .ok()?
        .checked_mul(t.size)
        .filter(|&b| b <= isize::MAX as usize)?;
    if bytes > 0 && (addr == 0 || addr == MPI_IN_PLACE) {
        return None;
    }
    // These bytes are the instances (a predefined contiguous type's first byte is at its
    // address), what `Buf::typed` would make of them.
    // SAFETY: the caller's contract.
    Some(unsafe { Buf::new(addr, bytes) })
}

/// The parts of a `v` buffer from its arrays: part i is `counts[i]` instances at `displs[i]`
/// (see `parts`).
///
/// # Safety
/// `parts`' contract; `counts` and `displs` are equally long.
pub(crate) unsafe fn parts_of<C: Int, D: Int>(
    base: *const c_void,
    (counts, displs): (&[C], &[D]),
    types: &PartTypes,
    byte_displs: bool,
    func: &str,
    names: (&str, &str),
) -> MpiResult<Parts> {
    let layout = |i: usize| (counts[i].get(), displs[i].get());
    // SAFETY: forwarded caller contract.
    unsafe { parts(base, counts.len(), layout, types, byte_displs, func, names) }
}

pub(crate) fn op_for(
    op: MPI_Op,
    datatype: MPI_Datatype,
    func: &str,
) -> MpiResult<(TypeRef, Reduction)> {
    let t = datatypes::committed_ref(datatype, func, "datatype")?;
    let red = reduction(op, datatype, &t, func)?;
    Ok((t, red))
}

/// The send side of a reduction: `None` for `MPI_IN_PLACE`.
///
/// # Safety
/// The buffer arguments hold what their counts and datatypes say (the standard's rule).
pub(crate) unsafe fn send_side(
    sendbuf: *const c_void,
    count: i64,
    dt: &Arc<Type>,
    allowed: bool,
    func: &str,
) -> MpiResult<Option<Buf>> {
    if is_in_place(sendbuf) {
        if !allowed {
            return Err(mpi_err!(
                Buffer,
                "{func}(sendbuf=MPI_IN_PLACE): only the root may pass MPI_IN_PLACE"
            ));
        }
        return Ok(None);
    }
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    unsafe { buf_at(sendbuf as usize, count, dt, func, "sendbuf", "count") }.map(Some)
}

/// Refuse send and receive buffers that share memory (MPI 4.1 §2.4.1: a buffer passed as
/// both, which `MPI_IN_PLACE` is for), before anything moves: two contiguous parts share
/// memory when their byte ranges overlap; a non-contiguous part (whose layout may
/// interleave with the other without touching it) only when it starts at the same address
/// as a part of the other side. `send` and `recv` are every part of each side.
pub(crate) fn check_alias(send: &[Buf], recv: &[Buf], func: &str) -> MpiResult<()> {
    if buffers_overlap(send, recv) {
        return Err(mpi_err!(Buffer, "{func}(sendbuf, recvbuf): the send and receive buffers are the same memory (pass MPI_IN_PLACE instead)"));
    }
    Ok(())
}

/// Whether a part of `a` shares memory with a part of `b` (see `check_alias`): the
/// contiguous parts are swept in address order, O(n log n).
pub(crate) fn buffers_overlap(a: &[Buf], b: &[Buf]) -> bool {
    // The common case first, without allocating: contiguous parts whose sides' hulls are
    // disjoint.
    if let (Some(ha), Some(hb)) = (contiguous_hull(a), contiguous_hull(b)) {
        if ha.1 <= hb.0 || hb.1 <= ha.0 {
            return false;
        }
    }
    let live =
        |parts: &[Buf]| -> Vec<Buf> { parts.iter().filter(|p| !p.is_empty()).copied().collect() };
    let (a, b) = (live(a), live(b));
    let starts = |parts: &[Buf]| -> std::collections::HashSet<usize> {
        parts.iter().map(|p| p.addr()).collect()
    };
    let (starts_a, starts_b) = (starts(&a), starts(&b));
    let scattered = |parts: &[Buf], other: &std::collections::HashSet<usize>| {
        parts
            .iter()
            .any(|p| !p.is_contiguous() && other.contains(&p.addr()))
    };
    if scattered(&a, &starts_b) || scattered(&b, &starts_a) {
        return true;
    }
    // (start, end, side) of the contiguous parts; a part overlaps an earlier-starting one
    // of the other side when it starts before the latest end seen on that side.
    let mut spans: Vec<(usize, usize, usize)> = [&a, &b]
        .into_iter()
        .enumerate()
        .flat_map(|(side, parts)| {
            parts
                .iter()
                .filter(|p| p.is_contiguous())
                .map(move |p| (p.addr(), p.addr().saturating_add(p.len()), side))
        })
        .collect();
    spans.sort_unstable();
    let mut end_of = [0usize; 2];
    for (start, end, side) in spans {
        if start < end_of[1 - side] {
            return true;
        }
        end_of[side] = end_of[side].max(end);
    }
    false
}

/// (lowest start, highest end) of the non-empty parts, when all of them are contiguous
/// (`(usize::MAX, 0)` when none is non-empty, disjoint from anything); `None` when one is not.
fn contiguous_hull(parts: &[Buf]) -> Option<(usize, usize)> {
    let mut hull = (usize::MAX, 0);
    for p in parts.iter().filter(|p| !p.is_empty()) {
        if !p.is_contiguous() {
            return None;
        }
        hull.0 = hull.0.min(p.addr());
        hull.1 = hull.1.max(p.addr().saturating_add(p.len()));
    }
    Some(hull)
}

pub(crate) fn core<T>(func: &str, r: MpiResult<T>) -> MpiResult<T> {
    r.map_err(|e| prefix(func, e))
}

/// Run the blocking form, or (`nb` holds the communicator handle, the request's owner) start
/// the nonblocking one (made by `nonblocking`) and return its request handle. `keep` gives
/// the buffers' types, held for as long as a persistent request may start the operation
/// again. Both are built only when needed: the blocking form takes no reference counts.
pub(crate) fn finish<F>(
    func: &str,
    nb: Mode,
    c: &Comm,
    keep: impl FnOnce() -> Vec<Arc<Type>>,
    blocking: impl FnOnce() -> MpiResult<()>,
    nonblocking: impl FnOnce() -> F,
) -> MpiResult<MPI_Request>
where
    F: Fn(usize) -> MpiResult<ReqId> + Send + Sync + 'static,
{
    match nb {
        Mode::Blocking => core(func, blocking()).map(|_| MPI_REQUEST_NULL),
        Mode::Nonblocking(owner) => core(func, nonblocking()(owner)).map(request_handle),
        Mode::Persistent(owner) => {
            let (types, start) = (keep(), nonblocking());
            Ok(request_handle(coll::persistent::init(c, owner, move |o| {
                let _types = &types;
                start(o)
            })))
        }
    }
}

/// One side of a regular gather/scatter/allgather/alltoall: `count` elements (times `times`
/// blocks) of `datatype` at `buf`.
///
/// # Safety
/// `buf` is a message buffer of that many elements (`buf_at`'s contract).
pub(crate) unsafe fn side(
    buf: *const c_void,
    count: i64,
    times: i64,
    datatype: MPI_Datatype,
    func: &str,
    names: (&str, &str, &str),
) -> MpiResult<Buf> {
    let dt = datatypes::committed_ref(datatype, func, names.2)?;
    if count < 0 {
        return Err(mpi_err!(
            Count,
            "{func}({}={count}): negative count",
            names.1
        ));
    }
    // SAFETY: forwarded caller contract (the buffers hold what the counts say).
    unsafe {
        buf_at(
            buf as usize,
            count.saturating_mul(times),
            &dt,
            func,
            names.0,
            names.1,
        )
    }
}

pub(crate) const SEND: (&str, &str, &str) = ("sendbuf", "sendcount", "sendtype");
pub(crate) const RECV: (&str, &str, &str) = ("recvbuf", "recvcount", "recvtype");
pub(crate) const SEND_V: (&str, &str, &str) = ("sendbuf", "sendcounts", "sendtype");
pub(crate) const RECV_V: (&str, &str, &str) = ("recvbuf", "recvcounts", "recvtype");

/// The one-block side of a rooted gather or scatter (each rank's send of a gather, receive of
/// a scatter): `None` at the root with `MPI_IN_PLACE`, and on the root's side of an
/// intercommunicator, where it takes no part.
///
/// # Safety
/// `buf` is a message buffer of that many elements (`buf_at`'s contract).
pub(crate) unsafe fn leaf_side(
    c: &Comm,
    root: u32,
    (buf, count, datatype): (*const c_void, i64, MPI_Datatype),
    func: &str,
    names: (&str, &str, &str),
) -> MpiResult<Option<Buf>> {
    if (is_in_place(buf) && at_root(c, root)) || (c.is_inter() && root >= coll::PROC_NULL) {
        return Ok(None);
    }
    // SAFETY: forwarded caller contract.
    unsafe { side(buf, count, 1, datatype, func, names) }.map(Some)
}

/// The root's side of a rooted gather or scatter: `n` blocks at the root, empty elsewhere.
///
/// # Safety
/// At the root, `buf` is a message buffer of that many elements (`buf_at`'s contract).
pub(crate) unsafe fn root_blocks(
    is_root: bool,
    (buf, count, datatype): (*const c_void, i64, MPI_Datatype),
    n: i64,
    func: &str,
    names: (&str, &str, &str),
) -> MpiResult<Buf> {
    if !is_root {
        return Ok(Buf::EMPTY);
    }
    // SAFETY: forwarded caller contract.
    unsafe { side(buf, count, n, datatype, func, names) }
}

/// The root's side of a rooted `v` collective: `n` parts at the root, none elsewhere.
///
/// # Safety
/// At the root, `counts` and `displs` hold `n` entries and the buffer holds every part.
pub(crate) unsafe fn root_parts<C: Int, D: Int>(
    is_root: bool,
    buf: *const c_void,
    arrays: (*const C, *const D),
    datatype: MPI_Datatype,
    n: usize,
    func: &str,
    names: (&str, &str, &str),
) -> MpiResult<Parts> {
    if !is_root {
        return Ok(Parts::none());
    }
    // SAFETY: forwarded caller contract.
    unsafe { varying(buf, arrays, datatype, n, func, names) }
}

/// The send side of an allgather or alltoall (`times` blocks): `None` for `MPI_IN_PLACE` on
/// an intracommunicator.
///
/// # Safety
/// `buf` is a message buffer of that many elements (`buf_at`'s contract).
pub(crate) unsafe fn own_blocks(
    c: &Comm,
    (buf, count, datatype): (*const c_void, i64, MPI_Datatype),
    times: i64,
    func: &str,
) -> MpiResult<Option<Buf>> {
    if is_in_place(buf) && !c.is_inter() {
        return Ok(None);
    }
    // SAFETY: forwarded caller contract.
    unsafe { side(buf, count, times, datatype, func, SEND) }.map(Some)
}

/// The `v` side of a collective: per-peer `counts` and `displs` (one type, displacements in
/// its extents) for `n` peers; `names` are the buffer, counts and type arguments' names.
///
/// # Safety
/// `counts` and `displs` hold `n` entries and the buffer holds every part.
pub(crate) unsafe fn varying<C: Int, D: Int>(
    buf: *const c_void,
    (counts, displs): (*const C, *const D),
    datatype: MPI_Datatype,
    n: usize,
    func: &str,
    names: (&str, &str, &str),
) -> MpiResult<Parts> {
    let types = PartTypes::One(Some(datatypes::committed_ref(datatype, func, names.2)?));
    // SAFETY: forwarded caller contract (arrays of n entries, then the parts).
    unsafe {
        let counts = array(counts, n, func, names.1)?;
        let displs = array(displs, n, func, "displs")?;
        parts_of(
            buf,
            (counts, displs),
            &types,
            false,
            func,
            (names.0, names.1),
        )
    }
}

// ------------------------------------------------------------------ thread communicators

/// A collective on a thread communicator runs at once by the calling thread rank; a
/// nonblocking form returns a completed request; a persistent form binds `run` to an
/// inactive request whose every `MPI_Start` runs it (by the thread rank that made it) and is
/// complete when the start returns, holding `types` (the buffers' types) meanwhile (docs/threadcomm.md).
pub(crate) fn thread_finish<F>(
    func: &str,
    nb: Mode,
    (c, tc): (&Comm, &Arc<ThreadComm>),
    types: Vec<Arc<Type>>,
    run: F,
) -> MpiResult<MPI_Request>
where
    F: Fn(&ThreadComm) -> MpiResult<()> + Send + Sync + 'static,
{
    match nb {
        Mode::Persistent(owner) => {
            let tc = tc.clone();
            let start = StartFn::new(move |func| {
                let _types = &types;
                core(func, run(&tc)).map(|()| None)
            });
            Ok(crate::api::pt2pt::thread_persistent(
                c,
                PersistentOp::Deferred(start),
                owner,
            ))
        }
        Mode::Blocking => core(func, run(tc)).map(|_| MPI_REQUEST_NULL),
        Mode::Nonblocking(owner) => {
            core(func, run(tc))?;
            Ok(crate::requests::completed_request(
                c,
                weft_core::message::Status::default(),
                owner,
            ))
        }
    }
}

/// One block of `count` elements at `buf` on a thread communicator, `None` where `MPI_IN_PLACE`
/// may stand for it (`in_place_ok`: at the root of a rooted collective, everywhere for the
/// all-to-all ones).
///
/// # Safety
/// The buffer holds what the count and datatype say (the standard's rule).
pub(crate) unsafe fn thread_block(
    in_place_ok: bool,
    buf: *const c_void,
    count: i64,
    datatype: MPI_Datatype,
    func: &str,
    names: (&str, &str, &str),
) -> MpiResult<Option<Buf>> {
    if in_place_ok && is_in_place(buf) {
        return Ok(None);
    }
    // SAFETY: forwarded caller contract.
    Ok(Some(unsafe { side(buf, count, 1, datatype, func, names) }?))
}

/// A root argument on a thread communicator.
pub(crate) fn thread_root(
    tc: &weft_core::threadcomm::ThreadComm,
    root: c_int,
    func: &str,
) -> MpiResult<u32> {
    rank_root(root, tc.size(), "thread communicator", func)
}
