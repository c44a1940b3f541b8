//! Datatype objects: predefined and derived types, their constructors, bounds, and the
//! envelope/contents that `MPI_Type_get_contents` returns.
//!
//! A `Type` is immutable once built (except its name and committed flag) and shared through
//! `Arc`: a derived type holds its component types, and a `Buf` holds the type it describes,
//! so freeing a handle never invalidates a pending operation or an enclosing type.
#![forbid(unsafe_code)]

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::layout::Compiled;
use super::predefined::{Datatype, TypeClass};
use crate::error::{ErrorClass, MpiError, MpiResult};

/// How a type was created (`MPI_Type_get_envelope`'s combiner).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combiner {
    Named,
    Dup,
    Contiguous,
    Vector,
    Hvector,
    Indexed,
    Hindexed,
    IndexedBlock,
    HindexedBlock,
    Struct,
    Subarray,
    Darray,
    F90Real,
    F90Complex,
    F90Integer,
    Resized,
    ValueIndex,
}

/// The arguments a type was created with, laid out as `MPI_Type_get_contents(_c)` returns
/// them (`counts` is the large-count array, used by types made with the `_c` constructors).
#[derive(Clone, Debug, Default)]
pub struct Contents {
    pub ints: Vec<i32>,
    pub addrs: Vec<isize>,
    pub counts: Vec<i64>,
    pub types: Vec<Arc<Type>>,
}

/// Array storage order for subarray and darray types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    C,
    Fortran,
}

/// How a darray dimension is distributed over the process grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distrib {
    None,
    /// Blocks of the given size (`None`: the default, ceil(gsize/psize)).
    Block(Option<usize>),
    /// Round-robin blocks of the given size (`None`: the default, 1).
    Cyclic(Option<usize>),
}

/// The data layout of one instance, in typemap order.
#[derive(Debug)]
pub(crate) enum Shape {
    /// One predefined element: `size` bytes at displacement 0.
    Basic,
    /// `count` blocks at `stride` bytes, each `blocklen` consecutive instances of `child`.
    Vector {
        count: usize,
        blocklen: usize,
        stride: isize,
        child: Arc<Type>,
    },
    /// Blocks of `lens[i]` consecutive instances of `child` at byte displacement `disps[i]`.
    Blocks {
        lens: Vec<usize>,
        disps: Vec<isize>,
        child: Arc<Type>,
    },
    /// Blocks of `lens[i]` consecutive instances of `children[i]` at `disps[i]`.
    Struct {
        lens: Vec<usize>,
        disps: Vec<isize>,
        children: Vec<Arc<Type>>,
    },
    /// The data of `child`, with other bounds (resized, dup, f90 types).
    Same { child: Arc<Type> },
}

/// A datatype: predefined or derived.
pub struct Type {
    /// Bytes of data in one instance.
    pub size: usize,
    pub lb: isize,
    pub extent: isize,
    pub true_lb: isize,
    pub true_extent: isize,
    /// Basic elements in one instance (a pair type counts two).
    pub elements: u64,
    /// The predefined description, for predefined types.
    pub predefined: Option<&'static Datatype>,
    pub(crate) align: usize,
    pub(crate) lb_marked: bool,
    pub(crate) ub_marked: bool,
    pub(crate) shape: Shape,
    /// The single predefined element type the typemap consists of, if there is one.
    element: Option<&'static Datatype>,
    combiner: Combiner,
    contents: Contents,
    /// Whether the `_c` constructor made it (its counts are large counts).
    large: bool,
    /// Predefined (and f90) types can be neither freed nor given attributes by user code.
    permanent: bool,
    name: Mutex<String>,
    committed: AtomicBool,
    compiled: OnceLock<Compiled>,
}

impl fmt::Debug for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Type")
            .field("name", &self.name())
            .field("combiner", &self.combiner)
            .field("size", &self.size)
            .field("lb", &self.lb)
            .field("extent", &self.extent)
            .finish()
    }
}

fn overflow(what: &str) -> MpiError {
    MpiError::new(
        ErrorClass::Count,
        format!("{what} does not fit in an address-sized integer"),
    )
}

fn fit(v: i128, what: &str) -> MpiResult<isize> {
    isize::try_from(v).map_err(|_| overflow(what))
}

/// Lowest and highest of `0, s, 2s, ..., (n-1)s` (n > 0).
fn span(n: usize, s: isize) -> (i128, i128) {
    let last = (n as i128 - 1) * s as i128;
    (last.min(0), last.max(0))
}

/// Accumulates bounds over the placements of component types.
#[derive(Default)]
struct Bounds {
    data: Option<(i128, i128)>,
    lb_mark: Option<i128>,
    ub_mark: Option<i128>,
    lb: Option<i128>,
    ub: Option<i128>,
    align: usize,
}

impl Bounds {
    /// `child` placed at offsets whose lowest is `lo` and highest `hi`.
    fn add(&mut self, child: &Type, lo: i128, hi: i128) {
        self.align = self.align.max(child.align);
        if child.size > 0 {
            let (a, b) = (
                lo + child.true_lb as i128,
                hi + child.true_lb as i128 + child.true_extent as i128,
            );
            self.data = Some(match self.data {
                None => (a, b),
                Some((x, y)) => (x.min(a), y.max(b)),
            });
        }
        let (l, u) = (
            lo + child.lb as i128,
            hi + child.lb as i128 + child.extent as i128,
        );
        let min = |o: Option<i128>, v| Some(o.map_or(v, |x: i128| x.min(v)));
        let max = |o: Option<i128>, v| Some(o.map_or(v, |x: i128| x.max(v)));
        if child.lb_marked {
            self.lb_mark = min(self.lb_mark, l);
        } else if child.size > 0 {
            self.lb = min(self.lb, l);
        }
        if child.ub_marked {
            self.ub_mark = max(self.ub_mark, u);
        } else if child.size > 0 {
            self.ub = max(self.ub, u);
        }
    }
}

/// Everything computed about a new type from its shape.
struct Props {
    size: usize,
    elements: u64,
    lb: isize,
    extent: isize,
    true_lb: isize,
    true_extent: isize,
    align: usize,
    lb_marked: bool,
    ub_marked: bool,
    element: Option<&'static Datatype>,
}

fn same_element(children: &[&Arc<Type>]) -> Option<&'static Datatype> {
    let mut found: Option<&'static Datatype> = None;
    for c in children.iter().filter(|c| c.size > 0) {
        let e = c.element?;
        match found {
            None => found = Some(e),
            Some(f) if std::ptr::eq(f, e) => {}
            Some(_) => return None,
        }
    }
    found
}

fn props(shape: &Shape, pad: bool) -> MpiResult<Props> {
    let mut b = Bounds::default();
    let mut size: u128 = 0;
    let mut elements: u128 = 0;
    let mut kids: Vec<&Arc<Type>> = Vec::new();
    let mut place = |b: &mut Bounds, c: &Arc<Type>, n: usize, lo: i128, hi: i128| {
        if n > 0 {
            b.add(c, lo, hi);
            size += n as u128 * c.size as u128;
            elements += n as u128 * c.elements as u128;
        }
    };
    match shape {
        Shape::Basic => unreachable!("basic types are made by Type::basic"),
        Shape::Vector {
            count,
            blocklen,
            stride,
            child,
        } => {
            let (a, z) = span(*count, *stride);
            let (c, d) = span(*blocklen, child.extent);
            if *count > 0 {
                place(&mut b, child, count * blocklen, a + c, z + d);
            }
            kids.push(child);
        }
        Shape::Blocks { lens, disps, child } => {
            for (&n, &d) in lens.iter().zip(disps) {
                if n > 0 {
                    let (c, e) = span(n, child.extent);
                    place(&mut b, child, n, d as i128 + c, d as i128 + e);
                }
            }
            kids.push(child);
        }
        Shape::Struct {
            lens,
            disps,
            children,
        } => {
            for ((&n, &d), child) in lens.iter().zip(disps).zip(children) {
                if n > 0 {
                    let (c, e) = span(n, child.extent);
                    place(&mut b, child, n, d as i128 + c, d as i128 + e);
                    kids.push(child);
                }
            }
        }
        Shape::Same { child } => {
            place(&mut b, child, 1, 0, 0);
            kids.push(child);
        }
    }
    let size = usize::try_from(size)
        .ok()
        .filter(|&s| s <= isize::MAX as usize)
        .ok_or_else(|| overflow("the type's size"))?;
    let elements = u64::try_from(elements).map_err(|_| overflow("the element count"))?;
    let (tl, tu) = b.data.unwrap_or((0, 0));
    let lb = b.lb_mark.or(b.lb).unwrap_or(0);
    let mut ub = b.ub_mark.or(b.ub).unwrap_or(0);
    if pad && b.ub_mark.is_none() && b.align > 1 {
        let ext = ub - lb;
        let a = b.align as i128;
        ub += (a - ext.rem_euclid(a)) % a;
    }
    Ok(Props {
        size,
        elements,
        lb: fit(lb, "the lower bound")?,
        extent: fit(ub - lb, "the extent")?,
        true_lb: fit(tl, "the true lower bound")?,
        true_extent: fit(tu - tl, "the true extent")?,
        align: b.align.max(1),
        lb_marked: b.lb_mark.is_some(),
        ub_marked: b.ub_mark.is_some(),
        element: same_element(&kids),
    })
}

impl Type {
    fn from_props(p: Props, shape: Shape, combiner: Combiner, contents: Contents) -> Type {
        Type {
            size: p.size,
            lb: p.lb,
            extent: p.extent,
            true_lb: p.true_lb,
            true_extent: p.true_extent,
            elements: p.elements,
            predefined: None,
            align: p.align,
            lb_marked: p.lb_marked,
            ub_marked: p.ub_marked,
            shape,
            element: p.element,
            combiner,
            contents,
            large: false,
            permanent: false,
            name: Mutex::new(String::new()),
            committed: AtomicBool::new(false),
            compiled: OnceLock::new(),
        }
    }

    fn make(shape: Shape, combiner: Combiner, contents: Contents, large: bool) -> MpiResult<Type> {
        let pad = matches!(combiner, Combiner::Struct);
        let p = props(&shape, pad)?;
        let mut t = Type::from_props(p, shape, combiner, contents);
        t.large = large;
        Ok(t)
    }

    /// A predefined single-element type (`MPI_INT`, `MPI_DOUBLE`, ...), committed.
    pub fn basic(d: &'static Datatype) -> Arc<Type> {
        let align = match d.class {
            TypeClass::Complex => d.size / 2,
            _ => d.size,
        }
        .clamp(1, 16);
        let t = Type {
            size: d.size,
            lb: 0,
            extent: d.extent as isize,
            true_lb: 0,
            true_extent: d.size as isize,
            elements: 1,
            predefined: Some(d),
            align,
            lb_marked: false,
            ub_marked: false,
            shape: Shape::Basic,
            element: Some(d),
            combiner: Combiner::Named,
            contents: Contents::default(),
            large: false,
            permanent: true,
            name: Mutex::new(d.name.to_owned()),
            committed: AtomicBool::new(true),
            compiled: OnceLock::new(),
        };
        Arc::new(t)
    }

    /// A predefined pair type (`MPI_DOUBLE_INT`, ...): `first` at 0, `second` at `disp`,
    /// laid out as the C struct, committed.
    pub fn pair(
        d: &'static Datatype,
        first: &Arc<Type>,
        second: &Arc<Type>,
        disp: isize,
    ) -> Arc<Type> {
        let shape = Shape::Struct {
            lens: vec![1, 1],
            disps: vec![0, disp],
            children: vec![first.clone(), second.clone()],
        };
        let p = props(&shape, true).expect("pair types are small");
        let mut t = Type::from_props(p, shape, Combiner::Named, Contents::default());
        t.predefined = Some(d);
        t.element = Some(d);
        t.permanent = true;
        *t.name.get_mut().unwrap_or_else(|e| e.into_inner()) = d.name.to_owned();
        t.committed = AtomicBool::new(true);
        debug_assert_eq!(t.extent, d.extent as isize, "{}", d.name);
        Arc::new(t)
    }

    pub fn contiguous(count: usize, old: &Arc<Type>, large: bool) -> MpiResult<Arc<Type>> {
        let contents = if large {
            Contents {
                counts: vec![count as i64],
                types: vec![old.clone()],
                ..Contents::default()
            }
        } else {
            Contents {
                ints: vec![count as i32],
                types: vec![old.clone()],
                ..Contents::default()
            }
        };
        let shape = Shape::Vector {
            count: 1,
            blocklen: count,
            stride: 0,
            child: old.clone(),
        };
        Type::make(shape, Combiner::Contiguous, contents, large).map(Arc::new)
    }

    /// `MPI_Type_vector` (`stride` in elements of `old`) or, with `bytes`, `hvector`.
    pub fn vector(
        count: usize,
        blocklen: usize,
        stride: i64,
        bytes: bool,
        old: &Arc<Type>,
        large: bool,
    ) -> MpiResult<Arc<Type>> {
        let byte_stride = if bytes {
            stride as i128
        } else {
            stride as i128 * old.extent as i128
        };
        let byte_stride = fit(byte_stride, "the stride in bytes")?;
        let (combiner, contents) = match (bytes, large) {
            (_, true) => (
                if bytes {
                    Combiner::Hvector
                } else {
                    Combiner::Vector
                },
                Contents {
                    counts: vec![count as i64, blocklen as i64, stride],
                    types: vec![old.clone()],
                    ..Contents::default()
                },
            ),
            (false, false) => (
                Combiner::Vector,
                Contents {
                    ints: vec![count as i32, blocklen as i32, stride as i32],
                    types: vec![old.clone()],
                    ..Contents::default()
                },
            ),
            (true, false) => (
                Combiner::Hvector,
                Contents {
                    ints: vec![count as i32, blocklen as i32],
                    addrs: vec![stride as isize],
                    types: vec![old.clone()],
                    ..Contents::default()
                },
            ),
        };
        let shape = Shape::Vector {
            count,
            blocklen,
            stride: byte_stride,
            child: old.clone(),
        };
        Type::make(shape, combiner, contents, large).map(Arc::new)
    }

    /// The indexed family: `indexed` (`lens`, displacements in elements), `hindexed`
    /// (`bytes`), and with `block` the `_block` forms (`lens` holds the one block length).
    pub fn indexed(
        lens: &[usize],
        disps: &[i64],
        bytes: bool,
        block: bool,
        old: &Arc<Type>,
        large: bool,
    ) -> MpiResult<Arc<Type>> {
        let count = disps.len();
        let byte_disps = disps
            .iter()
            .map(|&d| {
                fit(
                    if bytes {
                        d as i128
                    } else {
                        d as i128 * old.extent as i128
                    },
                    "a displacement in bytes",
                )
            })
            .collect::<MpiResult<Vec<isize>>>()?;
        let all_lens: Vec<usize> = if block {
            vec![lens.first().copied().unwrap_or(0); count]
        } else {
            lens.to_vec()
        };
        let combiner = match (bytes, block) {
            (false, false) => Combiner::Indexed,
            (true, false) => Combiner::Hindexed,
            (false, true) => Combiner::IndexedBlock,
            (true, true) => Combiner::HindexedBlock,
        };
        let mut c = Contents {
            types: vec![old.clone()],
            ..Contents::default()
        };
        if large {
            c.counts.push(count as i64);
            c.counts.extend(lens.iter().map(|&l| l as i64));
            c.counts.extend_from_slice(disps);
        } else {
            c.ints.push(count as i32);
            c.ints.extend(lens.iter().map(|&l| l as i32));
            if bytes {
                c.addrs.extend(disps.iter().map(|&d| d as isize));
            } else {
                c.ints.extend(disps.iter().map(|&d| d as i32));
            }
        }
        let shape = Shape::Blocks {
            lens: all_lens,
            disps: byte_disps,
            child: old.clone(),
        };
        Type::make(shape, combiner, c, large).map(Arc::new)
    }

    pub fn create_struct(
        lens: &[usize],
        disps: &[i64],
        types: &[Arc<Type>],
        large: bool,
    ) -> MpiResult<Arc<Type>> {
        let mut c = Contents {
            types: types.to_vec(),
            ..Contents::default()
        };
        if large {
            c.counts.push(lens.len() as i64);
            c.counts.extend(lens.iter().map(|&l| l as i64));
            c.counts.extend_from_slice(disps);
        } else {
            c.ints.push(lens.len() as i32);
            c.ints.extend(lens.iter().map(|&l| l as i32));
            c.addrs.extend(disps.iter().map(|&d| d as isize));
        }
        let shape = Shape::Struct {
            lens: lens.to_vec(),
            disps: disps.iter().map(|&d| d as isize).collect(),
            children: types.to_vec(),
        };
        Type::make(shape, Combiner::Struct, c, large).map(Arc::new)
    }

    pub fn resized(old: &Arc<Type>, lb: i64, extent: i64, large: bool) -> MpiResult<Arc<Type>> {
        let c = if large {
            Contents {
                counts: vec![lb, extent],
                types: vec![old.clone()],
                ..Contents::default()
            }
        } else {
            Contents {
                addrs: vec![lb as isize, extent as isize],
                types: vec![old.clone()],
                ..Contents::default()
            }
        };
        Type::resized_as(
            old,
            lb as isize,
            extent as isize,
            Combiner::Resized,
            c,
            large,
        )
    }

    fn resized_as(
        old: &Arc<Type>,
        lb: isize,
        extent: isize,
        combiner: Combiner,
        contents: Contents,
        large: bool,
    ) -> MpiResult<Arc<Type>> {
        let shape = Shape::Same { child: old.clone() };
        let mut p = props(&shape, false)?;
        fit(lb as i128 + extent as i128, "the upper bound")?;
        p.lb = lb;
        p.extent = extent;
        p.lb_marked = true;
        p.ub_marked = true;
        let mut t = Type::from_props(p, shape, combiner, contents);
        t.large = large;
        Ok(Arc::new(t))
    }

    /// `MPI_Type_dup`: the same typemap; committed if `old` is.
    pub fn dup(old: &Arc<Type>) -> Arc<Type> {
        let shape = Shape::Same { child: old.clone() };
        let mut p = props(&shape, false).expect("a dup has the bounds of its original");
        p.lb = old.lb;
        p.extent = old.extent;
        p.lb_marked = old.lb_marked;
        p.ub_marked = old.ub_marked;
        p.align = old.align;
        let t = Type::from_props(
            p,
            shape,
            Combiner::Dup,
            Contents {
                types: vec![old.clone()],
                ..Contents::default()
            },
        );
        t.committed.store(old.is_committed(), Ordering::Relaxed);
        Arc::new(t)
    }

    /// The parameterized Fortran types: the predefined `base`, with combiner `kind` and
    /// `ints` as contents; permanent and committed.
    pub fn f90(base: &Arc<Type>, kind: Combiner, ints: Vec<i32>) -> Arc<Type> {
        let shape = Shape::Same {
            child: base.clone(),
        };
        let p = props(&shape, false).expect("f90 types are predefined sizes");
        let mut t = Type::from_props(
            p,
            shape,
            kind,
            Contents {
                ints,
                ..Contents::default()
            },
        );
        t.predefined = base.predefined;
        t.permanent = true;
        t.lb = base.lb;
        t.extent = base.extent;
        *t.name.get_mut().unwrap_or_else(|e| e.into_inner()) = base.name();
        t.committed = AtomicBool::new(true);
        Arc::new(t)
    }

    /// `MPI_Type_create_subarray`. Arguments are checked by the caller: `sizes[i] >= 1`,
    /// `1 <= subsizes[i] <= sizes[i]`, `starts[i] + subsizes[i] <= sizes[i]`.
    pub fn subarray(
        sizes: &[usize],
        subsizes: &[usize],
        starts: &[usize],
        order: Order,
        old: &Arc<Type>,
        large: bool,
    ) -> MpiResult<Arc<Type>> {
        let n = sizes.len();
        let dims: Vec<usize> = match order {
            Order::C => (0..n).rev().collect(),
            Order::Fortran => (0..n).collect(),
        };
        // Build from the fastest-varying dimension outwards.
        let mut t = old.clone();
        let mut stride: i128 = old.extent as i128;
        let mut offset: i128 = 0;
        for &d in &dims {
            let s = fit(stride, "the subarray's stride")?;
            t = Arc::new(Type::make(
                Shape::Vector {
                    count: subsizes[d],
                    blocklen: 1,
                    stride: s,
                    child: t,
                },
                Combiner::Hvector,
                Contents::default(),
                false,
            )?);
            offset += starts[d] as i128 * stride;
            stride *= sizes[d] as i128;
        }
        let placed = Arc::new(Type::make(
            Shape::Blocks {
                lens: vec![1],
                disps: vec![fit(offset, "the subarray's offset")?],
                child: t,
            },
            Combiner::Hindexed,
            Contents::default(),
            false,
        )?);
        let mut c = Contents {
            types: vec![old.clone()],
            ..Contents::default()
        };
        let order_int = if order == Order::C { 0xC } else { 0xF };
        c.ints.push(n as i32);
        if large {
            for a in [sizes, subsizes, starts] {
                c.counts.extend(a.iter().map(|&v| v as i64));
            }
        } else {
            for a in [sizes, subsizes, starts] {
                c.ints.extend(a.iter().map(|&v| v as i32));
            }
        }
        c.ints.push(order_int);
        let extent = fit(stride, "the subarray's extent")?;
        Type::resized_as(&placed, 0, extent, Combiner::Subarray, c, large)
    }

    /// `MPI_Type_create_darray`. Arguments are checked by the caller (grid matches `size`,
    /// `rank < size`, `Distrib::None` only with `psizes[i] == 1`).
    #[allow(clippy::too_many_arguments)]
    pub fn darray(
        size: usize,
        rank: usize,
        gsizes: &[usize],
        distribs: &[Distrib],
        psizes: &[usize],
        order: Order,
        old: &Arc<Type>,
        raw: (&[i32], &[i32]),
        large: bool,
    ) -> MpiResult<Arc<Type>> {
        let n = gsizes.len();
        // Process coordinates: the grid is row-major whatever the array order.
        let mut coords = vec![0usize; n];
        let mut r = rank;
        for d in (0..n).rev() {
            coords[d] = r % psizes[d];
            r /= psizes[d];
        }
        let dims: Vec<usize> = match order {
            Order::C => (0..n).rev().collect(),
            Order::Fortran => (0..n).collect(),
        };
        let mut t = old.clone();
        let mut stride: i128 = old.extent as i128;
        for &d in &dims {
            let (g, p, c) = (gsizes[d], psizes[d], coords[d]);
            let mut lens = Vec::new();
            let mut disps = Vec::new();
            let mut run = |start: usize, len: usize| -> MpiResult<()> {
                lens.push(len);
                disps.push(fit(start as i128 * stride, "a darray displacement")?);
                Ok(())
            };
            match distribs[d] {
                Distrib::None => run(0, g)?,
                Distrib::Block(b) => {
                    let b = b.unwrap_or(g.div_ceil(p.max(1)));
                    let start = c.saturating_mul(b);
                    if start < g {
                        run(start, b.min(g - start))?;
                    }
                }
                Distrib::Cyclic(b) => {
                    let b = b.unwrap_or(1).max(1);
                    let mut start = c.saturating_mul(b);
                    while start < g {
                        run(start, b.min(g - start))?;
                        start = start.saturating_add(p.saturating_mul(b));
                    }
                }
            }
            t = Arc::new(Type::make(
                Shape::Blocks {
                    lens,
                    disps,
                    child: t,
                },
                Combiner::Hindexed,
                Contents::default(),
                false,
            )?);
            stride *= g as i128;
            // One instance spans the whole dimension: the next dimension's runs repeat it at
            // this stride.
            let ext = fit(stride, "the darray's extent")?;
            t = Type::resized_as(&t, 0, ext, Combiner::Resized, Contents::default(), false)?;
        }
        let (distrib_ints, dargs) = raw;
        let mut c = Contents {
            types: vec![old.clone()],
            ..Contents::default()
        };
        c.ints.extend([size as i32, rank as i32, n as i32]);
        if large {
            c.counts.extend(gsizes.iter().map(|&v| v as i64));
        } else {
            c.ints.extend(gsizes.iter().map(|&v| v as i32));
        }
        c.ints.extend_from_slice(distrib_ints);
        c.ints.extend_from_slice(dargs);
        c.ints.extend(psizes.iter().map(|&v| v as i32));
        c.ints.push(if order == Order::C { 0xC } else { 0xF });
        let extent = fit(stride, "the darray's extent")?;
        Type::resized_as(&t, 0, extent, Combiner::Darray, c, large)
    }

    // ------------------------------------------------------------------ queries

    pub fn name(&self) -> String {
        self.name.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn set_name(&self, name: &str) {
        *self.name.lock().unwrap_or_else(|e| e.into_inner()) = name.to_owned();
    }

    pub fn combiner(&self) -> Combiner {
        self.combiner
    }

    /// The creation arguments (empty for predefined types).
    pub fn contents(&self) -> &Contents {
        &self.contents
    }

    /// Whether a `_c` constructor made it.
    pub fn is_large(&self) -> bool {
        self.large
    }

    /// Predefined and f90 types: never freed by the user.
    pub fn is_permanent(&self) -> bool {
        self.permanent
    }

    pub fn is_committed(&self) -> bool {
        self.committed.load(Ordering::Acquire)
    }

    /// Record that the type is committed (`compile.rs`: `commit`).
    pub(crate) fn mark_committed(&self) {
        self.committed.store(true, Ordering::Release);
    }

    /// Where the compiled layout is kept (`compile.rs` fills it on first use).
    pub(crate) fn layout_cell(&self) -> &OnceLock<Compiled> {
        &self.compiled
    }

    /// The one predefined element type (a pair type counts as one) that every basic element
    /// of the typemap has, if there is one: what reductions on this type operate on.
    pub fn element(&self) -> Option<&'static Datatype> {
        self.element
    }

    /// Bytes in `count` instances, if that fits.
    pub fn bytes_for(&self, count: usize) -> Option<usize> {
        count
            .checked_mul(self.size)
            .filter(|&b| b <= isize::MAX as usize)
    }

    /// `MPI_Get_elements`: basic elements in the first `bytes` bytes of a message of this
    /// type; `None` when `bytes` ends inside a basic element.
    pub fn elements_in(&self, bytes: u64) -> Option<u64> {
        if self.size == 0 {
            return (bytes == 0).then_some(0);
        }
        let whole = bytes / self.size as u64;
        let rest = (bytes % self.size as u64) as usize;
        Some(whole * self.elements + self.prefix_elements(rest)?)
    }

    /// `MPI_Status_set_elements`: the bytes of the first `n` basic elements of a message.
    pub fn bytes_of_elements(&self, n: u64) -> Option<u64> {
        if self.elements == 0 {
            return (n == 0).then_some(0);
        }
        let whole = n / self.elements;
        let rest = n % self.elements;
        whole
            .checked_mul(self.size as u64)?
            .checked_add(self.prefix_bytes(rest))
    }

    /// Bytes of the first `n` (< `elements`) basic elements of one instance, walking the
    /// type's tree (cost: its depth times the blocks of a level), not its elements.
    fn prefix_bytes(&self, mut n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        // `k` instances of `child`: consume them whole, or stop inside them.
        let run = |child: &Type, k: usize, n: &mut u64, acc: &mut u64| -> bool {
            let total = k as u64 * child.elements;
            if *n >= total {
                *n -= total;
                *acc += k as u64 * child.size as u64;
                false
            } else {
                *acc += *n / child.elements * child.size as u64
                    + child.prefix_bytes(*n % child.elements);
                *n = 0;
                true
            }
        };
        let mut acc = 0;
        match &self.shape {
            // A basic type is one element (n < 1 returned above); split evenly otherwise.
            Shape::Basic => n * (self.size as u64 / self.elements.max(1)),
            Shape::Vector {
                count,
                blocklen,
                child,
                ..
            } => {
                run(child, count * blocklen, &mut n, &mut acc);
                acc
            }
            Shape::Blocks { lens, child, .. } => {
                for &k in lens {
                    if run(child, k, &mut n, &mut acc) {
                        break;
                    }
                }
                acc
            }
            Shape::Struct { lens, children, .. } => {
                for (&k, c) in lens.iter().zip(children) {
                    if run(c, k, &mut n, &mut acc) {
                        break;
                    }
                }
                acc
            }
            Shape::Same { child } => child.prefix_bytes(n),
        }
    }

    /// Basic elements in the first `bytes` (< size) bytes of one instance.
    fn prefix_elements(&self, mut bytes: usize) -> Option<u64> {
        if bytes == 0 {
            return Some(0);
        }
        let run = |child: &Type, n: usize, bytes: &mut usize, acc: &mut u64| -> Option<bool> {
            let total = n * child.size;
            if *bytes >= total {
                *bytes -= total;
                *acc += n as u64 * child.elements;
                Some(false)
            } else {
                let whole = *bytes / child.size;
                *acc +=
                    whole as u64 * child.elements + child.prefix_elements(*bytes % child.size)?;
                Some(true)
            }
        };
        let mut acc = 0;
        match &self.shape {
            Shape::Basic => None,
            Shape::Vector {
                count,
                blocklen,
                child,
                ..
            } => {
                run(child, count * blocklen, &mut bytes, &mut acc)?;
                Some(acc)
            }
            Shape::Blocks { lens, child, .. } => {
                for &n in lens {
                    if run(child, n, &mut bytes, &mut acc)? {
                        break;
                    }
                }
                Some(acc)
            }
            Shape::Struct { lens, children, .. } => {
                for (&n, c) in lens.iter().zip(children) {
                    if c.size > 0 && run(c, n, &mut bytes, &mut acc)? {
                        break;
                    }
                }
                Some(acc)
            }
            Shape::Same { child } => child.prefix_elements(bytes),
        }
    }

    /// Visit every basic element of one instance placed at `base`, in typemap order.
    pub(crate) fn for_each_basic(&self, base: isize, f: &mut dyn FnMut(isize, &'static Datatype)) {
        match &self.shape {
            Shape::Basic => f(base, self.predefined.expect("basic types are predefined")),
            Shape::Vector {
                count,
                blocklen,
                stride,
                child,
            } => {
                for i in 0..*count {
                    for j in 0..*blocklen {
                        child.for_each_basic(
                            base + i as isize * stride + j as isize * child.extent,
                            f,
                        );
                    }
                }
            }
            Shape::Blocks { lens, disps, child } => {
                for (&n, &d) in lens.iter().zip(disps) {
                    for j in 0..n {
                        child.for_each_basic(base + d + j as isize * child.extent, f);
                    }
                }
            }
            Shape::Struct {
                lens,
                disps,
                children,
            } => {
                for ((&n, &d), c) in lens.iter().zip(disps).zip(children) {
                    for j in 0..n {
                        c.for_each_basic(base + d + j as isize * c.extent, f);
                    }
                }
            }
            Shape::Same { child } => child.for_each_basic(base, f),
        }
    }

    /// Rebuild a type from its envelope and contents (the inverse of `contents()`), as a
    /// user would with the standard's constructors.
    pub fn from_contents(combiner: Combiner, c: &Contents, large: bool) -> MpiResult<Arc<Type>> {
        let bad = || MpiError::new(ErrorClass::Arg, "malformed type contents".to_owned());
        let ints = &c.ints;
        let old = c.types.first().ok_or_else(bad);
        let u = |v: i64| usize::try_from(v).map_err(|_| bad());
        let nums: Vec<i64> = if large {
            c.counts.clone()
        } else {
            ints.iter().map(|&v| v as i64).collect()
        };
        match combiner {
            Combiner::Dup => Ok(Type::dup(old?)),
            Combiner::Contiguous => Type::contiguous(u(nums[0])?, old?, large),
            Combiner::Vector => Type::vector(u(nums[0])?, u(nums[1])?, nums[2], false, old?, large),
            Combiner::Hvector => {
                let stride = if large { nums[2] } else { c.addrs[0] as i64 };
                Type::vector(u(nums[0])?, u(nums[1])?, stride, true, old?, large)
            }
            Combiner::Indexed
            | Combiner::Hindexed
            | Combiner::IndexedBlock
            | Combiner::HindexedBlock
            | Combiner::Struct => {
                let n = u(nums[0])?;
                let block = matches!(combiner, Combiner::IndexedBlock | Combiner::HindexedBlock);
                let nlens = if block { 1 } else { n };
                let lens = nums[1..1 + nlens]
                    .iter()
                    .map(|&v| u(v))
                    .collect::<MpiResult<Vec<_>>>()?;
                let bytes = !matches!(combiner, Combiner::Indexed | Combiner::IndexedBlock);
                let disps: Vec<i64> = if large || !bytes {
                    nums[1 + nlens..1 + nlens + n].to_vec()
                } else {
                    c.addrs.iter().map(|&a| a as i64).collect()
                };
                if combiner == Combiner::Struct {
                    Type::create_struct(&lens, &disps, &c.types, large)
                } else {
                    Type::indexed(&lens, &disps, bytes, block, old?, large)
                }
            }
            Combiner::Subarray => {
                let n = ints[0] as usize;
                let vals: Vec<usize> = if large {
                    c.counts.iter().map(|&v| v as usize).collect()
                } else {
                    ints[1..1 + 3 * n].iter().map(|&v| v as usize).collect()
                };
                let order = if *ints.last().ok_or_else(bad)? == 0xC {
                    Order::C
                } else {
                    Order::Fortran
                };
                Type::subarray(
                    &vals[..n],
                    &vals[n..2 * n],
                    &vals[2 * n..3 * n],
                    order,
                    old?,
                    large,
                )
            }
            Combiner::Resized => {
                let (lb, ext) = if large {
                    (c.counts[0], c.counts[1])
                } else {
                    (c.addrs[0] as i64, c.addrs[1] as i64)
                };
                Type::resized(old?, lb, ext, large)
            }
            _ => Err(MpiError::new(
                ErrorClass::Arg,
                format!("rebuilding a {combiner:?} type from its contents is not supported"),
            )),
        }
    }
}
