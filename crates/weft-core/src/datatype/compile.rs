//! Compiling a committed type into its layout (`layout.rs`): children first (each type
//! compiles once, on first use), then repeats and lists merged so that adjacent contiguous
//! pieces become one.

use super::layout::{seg, Compiled, Kind, Node, Part, Placed, Seg};
use super::types::{Shape, Type};

fn contig(len: usize) -> Node {
    Node {
        size: len,
        segs: 1,
        first: Seg { start: 0, len },
        last: Seg { start: 0, len },
        kind: Kind::Contig,
    }
}

fn finish(size: usize, segs: u64, kind: Kind) -> Node {
    let mut n = Node {
        size,
        segs,
        first: Seg::default(),
        last: Seg::default(),
        kind,
    };
    n.first = seg(&n, 0).0;
    n.last = seg(&n, segs - 1).0;
    n
}

/// `count` instances of `p` at `stride` bytes.
fn repeat(count: usize, stride: isize, p: Option<Placed>) -> Option<Placed> {
    let p = p?;
    if count == 0 {
        return None;
    }
    if count == 1 {
        return Some(p);
    }
    let c = p.node;
    let flat = match &c.kind {
        Kind::Repeat {
            count: n2,
            stride: s2,
            ..
        } => stride == *n2 as isize * *s2,
        _ => false,
    };
    let node = if matches!(c.kind, Kind::Contig) && stride == c.size as isize {
        contig(c.size * count)
    } else if flat {
        let size = c.size * count;
        let Kind::Repeat {
            count: n2,
            stride: s2,
            join,
            child,
        } = c.kind
        else {
            unreachable!("checked above")
        };
        let n = (count * n2) as u64;
        let segs = if join {
            n * child.segs - (n - 1)
        } else {
            n * child.segs
        };
        finish(
            size,
            segs,
            Kind::Repeat {
                count: count * n2,
                stride: s2,
                join,
                child,
            },
        )
    } else {
        let join = c.last.start + c.last.len as isize == stride + c.first.start;
        let segs = if join {
            count as u64 * c.segs - (count as u64 - 1)
        } else {
            count as u64 * c.segs
        };
        finish(
            c.size * count,
            segs,
            Kind::Repeat {
                count,
                stride,
                join,
                child: Box::new(c),
            },
        )
    };
    Some(Placed { disp: p.disp, node })
}

/// Children in typemap order, at their displacements.
fn list(items: Vec<Placed>) -> Option<Placed> {
    let mut parts: Vec<Placed> = Vec::with_capacity(items.len());
    for it in items {
        if it.node.size == 0 {
            continue;
        }
        if let Some(prev) = parts.last_mut() {
            if matches!(prev.node.kind, Kind::Contig)
                && matches!(it.node.kind, Kind::Contig)
                && prev.disp + prev.node.size as isize == it.disp
            {
                prev.node = contig(prev.node.size + it.node.size);
                continue;
            }
        }
        parts.push(it);
    }
    match parts.len() {
        0 => return None,
        1 => return parts.pop(),
        _ => {}
    }
    if parts.iter().all(|p| matches!(p.node.kind, Kind::Contig)) {
        let mut before = Vec::with_capacity(parts.len());
        let mut total = 0usize;
        for p in &parts {
            before.push(total);
            total += p.node.size;
        }
        let segs = parts.len() as u64;
        let node = finish(
            total,
            segs,
            Kind::Blocks {
                disps: parts.iter().map(|p| p.disp).collect(),
                lens: parts.iter().map(|p| p.node.size).collect(),
                before: before.into(),
            },
        );
        return Some(Placed { disp: 0, node });
    }
    let n = parts.len();
    let end = |p: &Placed| p.disp + p.node.last.start + p.node.last.len as isize;
    let start = |p: &Placed| p.disp + p.node.first.start;
    let joins: Vec<bool> = (0..n)
        .map(|i| i + 1 < n && end(&parts[i]) == start(&parts[i + 1]))
        .collect();
    let mut chain_end = vec![0isize; n];
    for i in (0..n).rev() {
        if joins[i] {
            let next = &parts[i + 1];
            chain_end[i] = if next.node.segs == 1 && joins[i + 1] {
                chain_end[i + 1]
            } else {
                start(next) + next.node.first.len as isize
            };
        }
    }
    let mut out = Vec::with_capacity(n);
    let (mut before, mut lo) = (0usize, 0u64);
    for (i, p) in parts.into_iter().enumerate() {
        let join_in = i > 0 && joins[i - 1];
        let (size, segs) = (p.node.size, p.node.segs);
        out.push(Part {
            disp: p.disp,
            node: p.node,
            before,
            lo,
            join_in,
            join_out: joins[i],
            chain_end: chain_end[i],
        });
        before += size;
        lo += segs - join_in as u64;
    }
    let node = finish(before, lo, Kind::List { parts: out.into() });
    Some(if node.segs == 1 {
        Placed {
            disp: node.first.start,
            node: contig(node.size),
        }
    } else {
        Placed { disp: 0, node }
    })
}

fn build(t: &Type) -> Option<Placed> {
    if t.size == 0 {
        return None;
    }
    match &t.shape {
        Shape::Basic => Some(Placed {
            disp: 0,
            node: contig(t.size),
        }),
        Shape::Vector {
            count,
            blocklen,
            stride,
            child,
        } => {
            let block = repeat(*blocklen, child.extent, child.compiled().root.clone());
            repeat(*count, *stride, block)
        }
        Shape::Blocks { lens, disps, child } => {
            let c = child.compiled().root.clone();
            let items = lens
                .iter()
                .zip(disps)
                .filter_map(|(&n, &d)| {
                    repeat(n, child.extent, c.clone()).map(|mut p| {
                        p.disp += d;
                        p
                    })
                })
                .collect();
            list(items)
        }
        Shape::Struct {
            lens,
            disps,
            children,
        } => {
            let items = lens
                .iter()
                .zip(disps)
                .zip(children)
                .filter_map(|((&n, &d), c)| {
                    repeat(n, c.extent, c.compiled().root.clone()).map(|mut p| {
                        p.disp += d;
                        p
                    })
                })
                .collect();
            list(items)
        }
        Shape::Same { child } => child.compiled().root.clone(),
    }
}

impl Type {
    /// `MPI_Type_commit`: compile the layout for packing (once).
    pub fn commit(&self) {
        self.compiled();
        self.mark_committed();
    }

    /// The compiled layout (segments for iov queries).
    pub fn compiled_layout(&self) -> &Compiled {
        self.compiled()
    }

    /// The compiled layout (built on first use).
    pub(crate) fn compiled(&self) -> &Compiled {
        self.layout_cell()
            .get_or_init(|| Compiled { root: build(self) })
    }

    /// Whether `count` instances occupy `count * size` consecutive bytes starting at the
    /// buffer address plus `true_lb`.
    pub fn is_contiguous(&self) -> bool {
        self.compiled().contiguous_run().is_some()
            && self.true_extent == self.size as isize
            && self.extent == self.size as isize
    }
}
