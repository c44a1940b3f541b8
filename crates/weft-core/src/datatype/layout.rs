//! The compiled form of a committed type (built by `compile.rs`), and packing and unpacking
//! by it: a small tree of layout nodes, normalized so that
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
    pub disp: isize,
    pub node: Node,
    /// Bytes before this part.
    pub before: usize,
    /// Merged segments that begin before this part.
    pub lo: u64,
    pub join_in: bool,
    pub join_out: bool,
    /// With `join_out`: where the merged segment starting at this part's last one ends.
    pub chain_end: isize,
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
        // The first k segments end at before(k) (k < n).
        let k = self.segment_at(max_bytes);
        (k, self.segment(k).1 as u64)
    }

    /// The segment holding packed byte `at`: the last k whose preceding bytes are <= `at`
    /// (0 when there are no segments).
    pub fn segment_at(&self, at: u64) -> u64 {
        let (mut lo, mut hi) = (0u64, self.segments().saturating_sub(1));
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.segment(mid).1 as u64 <= at {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
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
    // Every stream offset is below `len`, per the contract.
    // SAFETY: (the whole body) every address is inside the instance (the tree describes it).
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

/// Move packed bytes `offset..offset+len` of `count` instances of a type laid out as
/// `layout` (`size` bytes of data each, instances `extent` apart) at user address `addr`.
///
/// # Safety
/// The `count` instances are valid user memory (readable to pack, writable to unpack),
/// `stream` is valid for `len` bytes, `offset + len <= count * size`.
pub(crate) unsafe fn move_range<const UNPACK: bool>(
    layout: &Compiled,
    size: usize,
    extent: isize,
    addr: usize,
    offset: usize,
    stream: *mut u8,
    len: usize,
) {
    let Some(root) = &layout.root else {
        return;
    };
    let mut i = offset / size;
    let mut off = offset % size;
    let mut done = 0;
    let base = |i: usize| {
        addr.wrapping_add_signed(i as isize * extent)
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
            strided::<UNPACK>(base(i), extent, size, whole, stream.add(done));
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
