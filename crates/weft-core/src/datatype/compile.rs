//! The compiled form of a committed type: a small tree of layout nodes, normalized so that
//! adjacent contiguous pieces are merged, which packs and unpacks with specialised loops and
//! answers "where is merged segment k" in O(depth) steps (a binary search inside irregular
//! block lists), never by walking segments 0..k.
//!
//! Node kinds:
//! - `Contig`: `size` bytes at displacement 0.
//! - `Repeat`: `count` instances of a child at `stride` bytes (vectors, contiguous runs of
//!   non-contiguous children); `join` says the last segment of one instance touches the
//!   first of the next (then they merge into one segment).
//! - `Blocks`: contiguous runs at arbitrary displacements (indexed types of contiguous
//!   children), with prefix sums of their bytes.
//! - `List`: arbitrary children at displacements (structs, indexed types of
//!   non-contiguous children), with prefix sums of bytes and of merged segments.
//!
//! Invariant: a node with exactly one merged segment is `Contig`.

use super::types::{Shape, Type};

/// One contiguous piece: displacement and length in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Seg {
    pub start: isize,
    pub len: usize,
}

#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub size: usize,
    /// Merged segments in one instance.
    pub segs: u64,
    pub first: Seg,
    pub last: Seg,
    pub kind: Kind,
}

#[derive(Clone, Debug)]
pub(crate) enum Kind {
    Contig,
    Repeat {
        count: usize,
        stride: isize,
        join: bool,
        child: Box<Node>,
    },
    Blocks {
        disps: Box<[isize]>,
        lens: Box<[usize]>,
        /// Bytes before block i.
        before: Box<[usize]>,
    },
    List {
        parts: Box<[Part]>,
    },
}

#[derive(Clone, Debug)]
pub(crate) struct Part {
    disp: isize,
    node: Node,
    /// Bytes before this part.
    before: usize,
    /// Merged segments that begin before this part.
    lo: u64,
    join_in: bool,
    join_out: bool,
    /// With `join_out`: where the merged segment starting at this part's last one ends.
    chain_end: isize,
}

/// A node placed at a displacement.
#[derive(Clone, Debug)]
pub(crate) struct Placed {
    pub disp: isize,
    pub node: Node,
}

/// A committed type's compiled layout (`None`: no data).
#[derive(Clone, Debug)]
pub struct Compiled {
    pub(crate) root: Option<Placed>,
}

fn contig(len: usize) -> Node {
    Node {
        size: len,
        segs: 1,
        first: Seg { start: 0, len },
        last: Seg { start: 0, len },
        kind: Kind::Contig,
    }
}

/// Merged segment `k` of one instance at displacement 0, and the packed bytes before it.
pub(crate) fn seg(node: &Node, k: u64) -> (Seg, usize) {
    match &node.kind {
        Kind::Contig => (
            Seg {
                start: 0,
                len: node.size,
            },
            0,
        ),
        Kind::Repeat {
            count,
            stride,
            join,
            child,
        } => {
            let m = child.segs;
            let (i, j) = if !*join {
                (k / m, k % m)
            } else if k < m {
                (0, k)
            } else {
                (1 + (k - m) / (m - 1), 1 + (k - m) % (m - 1))
            };
            let (mut s, b) = seg(child, j);
            if *join && j == m - 1 && (i as usize) + 1 < *count {
                s.len += child.first.len;
            }
            s.start += i as isize * stride;
            (s, i as usize * child.size + b)
        }
        Kind::Blocks {
            disps,
            lens,
            before,
        } => {
            let k = k as usize;
            (
                Seg {
                    start: disps[k],
                    len: lens[k],
                },
                before[k],
            )
        }
        Kind::List { parts } => {
            let p = parts.partition_point(|p| p.lo <= k) - 1;
            let part = &parts[p];
            let j = k - part.lo + part.join_in as u64;
            let (mut s, b) = seg(&part.node, j);
            s.start += part.disp;
            if part.join_out && j == part.node.segs - 1 {
                s.len = (part.chain_end - s.start) as usize;
            }
            (s, part.before + b)
        }
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

pub(crate) fn compile(t: &Type) -> Compiled {
    Compiled { root: build(t) }
}

impl Compiled {
    /// The single contiguous run of one instance, if it is one: (displacement, length).
    pub fn contiguous_run(&self) -> Option<(isize, usize)> {
        match &self.root {
            None => Some((0, 0)),
            Some(p) if matches!(p.node.kind, Kind::Contig) => Some((p.disp, p.node.size)),
            _ => None,
        }
    }

    /// Merged segments of one instance.
    pub fn segments(&self) -> u64 {
        self.root.as_ref().map_or(0, |p| p.node.segs)
    }

    /// Merged segment `k` (< `segments()`) and the packed bytes before it.
    pub fn segment(&self, k: u64) -> (Seg, usize) {
        let p = self.root.as_ref().expect("a type with segments has data");
        let (mut s, b) = seg(&p.node, k);
        s.start += p.disp;
        (s, b)
    }

    /// How many whole segments fit in `max_bytes` packed bytes, and their bytes.
    pub fn segments_within(&self, max_bytes: u64) -> (u64, u64) {
        let n = self.segments();
        let size = self.root.as_ref().map_or(0, |p| p.node.size) as u64;
        if max_bytes >= size {
            return (n, size);
        }
        // The first k segments end at before(k) (k < n); find the largest k with before(k) <= max.
        let (mut lo, mut hi) = (0u64, n - 1);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.segment(mid).1 as u64 <= max_bytes {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        (lo, self.segment(lo).1 as u64)
    }
}

// ------------------------------------------------------------------ pack and unpack

/// Copy `len` bytes between user memory at `user` and the packed stream at `stream`.
///
/// # Safety
/// Both ranges valid (user readable for pack, writable for unpack; stream the reverse) and
/// not overlapping.
#[inline(always)]
unsafe fn copy<const UNPACK: bool>(user: usize, stream: *mut u8, len: usize) {
    // SAFETY: forwarded contract.
    unsafe {
        if UNPACK {
            std::ptr::copy_nonoverlapping(stream as *const u8, user as *mut u8, len)
        } else {
            std::ptr::copy_nonoverlapping(user as *const u8, stream, len)
        }
    }
}

/// `n` blocks of `N` bytes at `stride`: fixed-size moves the compiler turns into registers.
///
/// # Safety
/// As `copy`, for every block.
#[inline(always)]
unsafe fn strided_fixed<const UNPACK: bool, const N: usize>(
    mut user: usize,
    stride: isize,
    n: usize,
    stream: *mut u8,
) {
    for i in 0..n {
        // SAFETY: block i lies in the user buffer and stream bytes i*N..i*N+N in the stream.
        unsafe {
            let s = stream.add(i * N);
            if UNPACK {
                let v = std::ptr::read_unaligned(s as *const [u8; N]);
                std::ptr::write_unaligned(user as *mut [u8; N], v);
            } else {
                let v = std::ptr::read_unaligned(user as *const [u8; N]);
                std::ptr::write_unaligned(s as *mut [u8; N], v);
            }
        }
        user = user.wrapping_add_signed(stride);
    }
}

/// `n` blocks of `len` bytes at `stride` to/from consecutive stream bytes.
///
/// # Safety
/// As `copy`, for every block.
unsafe fn strided<const UNPACK: bool>(
    user: usize,
    stride: isize,
    len: usize,
    n: usize,
    stream: *mut u8,
) {
    // SAFETY: forwarded contract; each arm moves the same bytes.
    unsafe {
        match len {
            1 => strided_fixed::<UNPACK, 1>(user, stride, n, stream),
            2 => strided_fixed::<UNPACK, 2>(user, stride, n, stream),
            4 => strided_fixed::<UNPACK, 4>(user, stride, n, stream),
            8 => strided_fixed::<UNPACK, 8>(user, stride, n, stream),
            12 => strided_fixed::<UNPACK, 12>(user, stride, n, stream),
            16 => strided_fixed::<UNPACK, 16>(user, stride, n, stream),
            24 => strided_fixed::<UNPACK, 24>(user, stride, n, stream),
            32 => strided_fixed::<UNPACK, 32>(user, stride, n, stream),
            _ => {
                let mut u = user;
                for i in 0..n {
                    copy::<UNPACK>(u, stream.add(i * len), len);
                    u = u.wrapping_add_signed(stride);
                }
            }
        }
    }
}

/// Move packed bytes `skip..skip+len` of one instance of `node` at user address `base`.
///
/// # Safety
/// `skip + len <= node.size`; the instance's bytes are valid user memory and `stream` is
/// valid for `len` bytes.
pub(crate) unsafe fn walk<const UNPACK: bool>(
    node: &Node,
    base: usize,
    skip: usize,
    stream: *mut u8,
    len: usize,
) {
    if len == 0 {
        return;
    }
    // SAFETY (whole body): every address is inside the instance (the tree describes it) and
    // every stream offset below `len`, per the contract.
    unsafe {
        match &node.kind {
            Kind::Contig => copy::<UNPACK>(base + skip, stream, len),
            Kind::Repeat { stride, child, .. } => {
                let cs = child.size;
                let mut i = skip / cs;
                let mut off = skip % cs;
                let mut done = 0;
                if matches!(child.kind, Kind::Contig) {
                    if off > 0 {
                        let n = (cs - off).min(len);
                        copy::<UNPACK>(
                            base.wrapping_add_signed(i as isize * stride) + off,
                            stream,
                            n,
                        );
                        done = n;
                        i += 1;
                    }
                    let whole = (len - done) / cs;
                    strided::<UNPACK>(
                        base.wrapping_add_signed(i as isize * stride),
                        *stride,
                        cs,
                        whole,
                        stream.add(done),
                    );
                    done += whole * cs;
                    i += whole;
                    if done < len {
                        copy::<UNPACK>(
                            base.wrapping_add_signed(i as isize * stride),
                            stream.add(done),
                            len - done,
                        );
                    }
                } else {
                    while done < len {
                        let n = (cs - off).min(len - done);
                        walk::<UNPACK>(
                            child,
                            base.wrapping_add_signed(i as isize * stride),
                            off,
                            stream.add(done),
                            n,
                        );
                        done += n;
                        off = 0;
                        i += 1;
                    }
                }
            }
            Kind::Blocks {
                disps,
                lens,
                before,
            } => {
                let mut b = before.partition_point(|&x| x <= skip) - 1;
                let mut off = skip - before[b];
                let mut done = 0;
                while done < len {
                    let n = (lens[b] - off).min(len - done);
                    copy::<UNPACK>(
                        base.wrapping_add_signed(disps[b]) + off,
                        stream.add(done),
                        n,
                    );
                    done += n;
                    off = 0;
                    b += 1;
                }
            }
            Kind::List { parts } => {
                let mut p = parts.partition_point(|x| x.before <= skip) - 1;
                let mut off = skip - parts[p].before;
                let mut done = 0;
                while done < len {
                    let part = &parts[p];
                    let n = (part.node.size - off).min(len - done);
                    walk::<UNPACK>(
                        &part.node,
                        base.wrapping_add_signed(part.disp),
                        off,
                        stream.add(done),
                        n,
                    );
                    done += n;
                    off = 0;
                    p += 1;
                }
            }
        }
    }
}

/// Move packed bytes `offset..offset+len` of `count` instances of `t` at user address
/// `addr` (instances `extent` apart).
///
/// # Safety
/// The `count` instances are valid user memory (readable to pack, writable to unpack),
/// `stream` is valid for `len` bytes, `offset + len <= count * size`, `t` is committed.
pub(crate) unsafe fn move_range<const UNPACK: bool>(
    t: &Type,
    addr: usize,
    offset: usize,
    stream: *mut u8,
    len: usize,
) {
    let Some(root) = &t.compiled().root else {
        return;
    };
    let size = t.size;
    let mut i = offset / size;
    let mut off = offset % size;
    let mut done = 0;
    let base = |i: usize| {
        addr.wrapping_add_signed(i as isize * t.extent)
            .wrapping_add_signed(root.disp)
    };
    // SAFETY: forwarded contract; every instance touched is one of the `count`.
    unsafe {
        if matches!(root.node.kind, Kind::Contig) && len > 0 {
            if off > 0 {
                let n = (size - off).min(len);
                copy::<UNPACK>(base(i) + off, stream, n);
                done = n;
                i += 1;
            }
            let whole = (len - done) / size;
            strided::<UNPACK>(base(i), t.extent, size, whole, stream.add(done));
            done += whole * size;
            i += whole;
            if done < len {
                copy::<UNPACK>(base(i), stream.add(done), len - done);
            }
            return;
        }
        while done < len {
            let n = (size - off).min(len - done);
            walk::<UNPACK>(&root.node, base(i), off, stream.add(done), n);
            done += n;
            off = 0;
            i += 1;
        }
    }
}
