//! Property tests of the type engine against a naive reference flattening: random nested
//! types (depth <= 4, every constructor, negative displacements and strides, resized
//! extents). Packing then unpacking matches the reference byte for byte; the iov segments
//! are the reference's merged segments; envelope/contents rebuild an equal type.

use std::sync::Arc;

use super::predefined::{Datatype, TypeClass};
use super::types::{Combiner, Order, Type};
use super::Buf;

static CHAR: Datatype = Datatype::predefined("MPI_CHAR", 1, TypeClass::Char);
static SHORT: Datatype = Datatype::predefined("MPI_SHORT", 2, TypeClass::SignedInt);
static INT: Datatype = Datatype::predefined("MPI_INT", 4, TypeClass::SignedInt);
static DOUBLE: Datatype = Datatype::predefined("MPI_DOUBLE", 8, TypeClass::Float);
static SHORT_INT: Datatype = Datatype {
    name: "MPI_SHORT_INT",
    size: 6,
    extent: 8,
    class: TypeClass::Pair,
};

/// xorshift64*: small, deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
}

fn basics() -> Vec<Arc<Type>> {
    let short = Type::basic(&SHORT);
    let int = Type::basic(&INT);
    vec![
        Type::basic(&CHAR),
        short.clone(),
        int.clone(),
        Type::basic(&DOUBLE),
        Type::pair(&SHORT_INT, &short, &int, 4),
    ]
}

/// `n` displacements, in bytes (the first result) or in extents of the old type.
fn random_displacements(r: &mut Rng, n: usize) -> (bool, Vec<i64>) {
    let bytes = r.below(2) == 0;
    let range = if bytes { (-40, 40) } else { (-4, 6) };
    (bytes, (0..n).map(|_| r.range(range.0, range.1)).collect())
}

fn random_type(r: &mut Rng, depth: u32, b: &[Arc<Type>]) -> Arc<Type> {
    if depth == 0 || r.below(5) == 0 {
        return b[r.below(b.len() as u64) as usize].clone();
    }
    let old = random_type(r, depth - 1, b);
    let large = r.below(4) == 0;
    let n = r.range(0, 3) as usize;
    match r.below(11) {
        0 => Type::contiguous(r.range(0, 4) as usize, &old, large).unwrap(),
        k @ (1 | 2) => {
            // A stride in extents of the old type (1) or in bytes (2).
            let bytes = k == 2;
            let blocklen = r.range(0, 3) as usize;
            let stride = if bytes {
                r.range(-40, 40)
            } else {
                r.range(-3, 4)
            };
            Type::vector(n, blocklen, stride, bytes, &old, large).unwrap()
        }
        3 | 4 => {
            let lens: Vec<usize> = (0..n).map(|_| r.range(0, 3) as usize).collect();
            let (bytes, disps) = random_displacements(r, n);
            Type::indexed(&lens, &disps, bytes, false, &old, large).unwrap()
        }
        5 => {
            let (bytes, disps) = random_displacements(r, n);
            Type::indexed(&[r.range(0, 3) as usize], &disps, bytes, true, &old, large).unwrap()
        }
        6 | 7 => {
            let m = r.range(1, 3) as usize;
            let types: Vec<Arc<Type>> = (0..m)
                .map(|_| {
                    if r.below(2) == 0 {
                        old.clone()
                    } else {
                        random_type(r, depth - 1, b)
                    }
                })
                .collect();
            let lens: Vec<usize> = (0..m).map(|_| r.range(0, 3) as usize).collect();
            let disps: Vec<i64> = (0..m).map(|_| r.range(-48, 48)).collect();
            Type::create_struct(&lens, &disps, &types, large).unwrap()
        }
        8 => {
            let lb = r.range(-16, 16);
            let ext = if r.below(4) == 0 {
                r.range(-8, 0)
            } else {
                r.range(0, 48)
            };
            Type::resized(&old, lb, ext, large).unwrap()
        }
        9 => {
            let dims = r.range(1, 3) as usize;
            let sizes: Vec<usize> = (0..dims).map(|_| r.range(1, 4) as usize).collect();
            let subs: Vec<usize> = sizes
                .iter()
                .map(|&s| r.range(1, s as i64) as usize)
                .collect();
            let starts: Vec<usize> = sizes
                .iter()
                .zip(&subs)
                .map(|(&s, &u)| r.range(0, (s - u) as i64) as usize)
                .collect();
            let order = if r.below(2) == 0 {
                Order::C
            } else {
                Order::Fortran
            };
            Type::subarray(&sizes, &subs, &starts, order, &old, large).unwrap()
        }
        _ => Type::dup(&old),
    }
}

/// The typemap's basic elements as raw (displacement, length) pieces, in order.
fn flatten(t: &Type, count: usize) -> Vec<(isize, usize)> {
    let mut v = Vec::new();
    for i in 0..count {
        t.for_each_basic(i as isize * t.extent, &mut |off, d| v.push((off, d.size)));
    }
    // The pair type's pieces are its two members.
    v
}

fn merged(raw: &[(isize, usize)]) -> Vec<(isize, usize)> {
    let mut out: Vec<(isize, usize)> = Vec::new();
    for &(d, l) in raw {
        if let Some(last) = out.last_mut() {
            if last.0 + last.1 as isize == d {
                last.1 += l;
                continue;
            }
        }
        out.push((d, l));
    }
    out
}

fn check_type(r: &mut Rng, t: &Arc<Type>) {
    t.commit();
    let raw1 = flatten(t, 1);
    let size: usize = raw1.iter().map(|p| p.1).sum();
    assert_eq!(size, t.size, "{t:?}");
    assert_eq!(raw1.len() as u64, t.elements, "{t:?}");
    if let (Some(lo), Some(hi)) = (
        raw1.iter().map(|p| p.0).min(),
        raw1.iter().map(|p| p.0 + p.1 as isize).max(),
    ) {
        assert_eq!((t.true_lb, t.true_extent), (lo, hi - lo), "{t:?}");
    }

    // iov: merged segments with O(depth) random access.
    let c = t.compiled();
    let want = merged(&raw1);
    assert_eq!(c.segments(), want.len() as u64, "{t:?} {want:?}");
    let mut before = 0;
    for (k, &(d, l)) in want.iter().enumerate() {
        let (s, b) = c.segment(k as u64);
        assert_eq!((s.start, s.len, b), (d, l, before), "segment {k} of {t:?}");
        before += l;
    }
    if !want.is_empty() {
        let max = r.below(t.size as u64 + 2);
        let (n, bytes) = c.segments_within(max);
        let mut acc = 0u64;
        let mut fit = 0u64;
        for &(_, l) in &want {
            if acc + l as u64 > max {
                break;
            }
            acc += l as u64;
            fit += 1;
        }
        assert_eq!((n, bytes), (fit, acc), "segments within {max} of {t:?}");
    }

    // Pack then unpack `count` instances, in random pieces.
    let count = r.range(1, 3) as usize;
    let raw = flatten(t, count);
    let (lo, hi) = raw.iter().fold((0isize, 1isize), |(a, b), &(d, l)| {
        (a.min(d), b.max(d + l as isize))
    });
    let span = (hi - lo) as usize;
    let src: Vec<u8> = (0..span).map(|i| (i * 7 + 3) as u8).collect();
    let origin = |v: &Vec<u8>| (v.as_ptr() as usize).wrapping_add_signed(-lo);
    let mut expect = Vec::new();
    for &(d, l) in &raw {
        let at = (d - lo) as usize;
        expect.extend_from_slice(&src[at..at + l]);
    }
    // SAFETY: every instance's bytes lie in `src` (span computed from the flattening).
    let sb = unsafe { Buf::typed(origin(&src), count, t) };
    assert_eq!(sb.len(), expect.len());
    let mut packed = vec![0u8; sb.len()];
    let mut off = 0;
    while off < packed.len() {
        let n = (r.range(1, 13) as usize).min(packed.len() - off);
        sb.pack(off, &mut packed[off..off + n]);
        off += n;
    }
    assert_eq!(packed, expect, "pack of {t:?}");
    let dst = vec![0u8; span];
    let mut ref_dst = vec![0u8; span];
    let mut pos = 0;
    for &(d, l) in &raw {
        let at = (d - lo) as usize;
        ref_dst[at..at + l].copy_from_slice(&packed[pos..pos + l]);
        pos += l;
    }
    // SAFETY: as above, for `dst`.
    let db = unsafe { Buf::typed(origin(&dst), count, t) };
    let mut off = 0;
    while off < packed.len() {
        let n = (r.range(1, 13) as usize).min(packed.len() - off);
        db.unpack(off, &packed[off..off + n]);
        off += n;
    }
    assert_eq!(dst, ref_dst, "unpack of {t:?}");

    // Elements in a prefix of the message.
    let bytes = r.below(sb.len() as u64 + 1);
    let mut acc = 0u64;
    let mut n = 0u64;
    let mut exact = true;
    for &(_, l) in &raw {
        if acc + l as u64 <= bytes {
            acc += l as u64;
            n += 1;
        } else {
            exact = acc == bytes;
            break;
        }
    }
    assert_eq!(
        t.elements_in(bytes),
        exact.then_some(n),
        "elements in {bytes} of {t:?}"
    );

    // Bytes of a prefix of elements (MPI_Status_set_elements), against the reference.
    let k = r.below(raw.len() as u64 + 1);
    let want: u64 = raw[..k as usize].iter().map(|p| p.1 as u64).sum();
    assert_eq!(
        t.bytes_of_elements(k),
        Some(want),
        "bytes of {k} elements of {t:?}"
    );

    // Envelope and contents rebuild an equal type.
    if !matches!(t.combiner(), Combiner::Named) {
        let again = Type::from_contents(t.combiner(), t.contents(), t.is_large()).unwrap();
        assert_eq!(flatten(&again, 2), flatten(t, 2), "rebuilt {t:?}");
        assert_eq!(
            (again.lb, again.extent, again.size, again.combiner()),
            (t.lb, t.extent, t.size, t.combiner())
        );
    }
}

#[test]
fn random_types_match_the_reference() {
    let b = basics();
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        let t = random_type(&mut r, 4, &b);
        check_type(&mut r, &t);
    }
}

#[test]
fn pair_types_have_gaps() {
    let b = basics();
    let p = &b[4];
    assert_eq!((p.size, p.extent, p.elements), (6, 8, 2));
    assert_eq!(p.compiled().segments(), 2);
    assert_eq!(p.elements_in(2), Some(1));
    assert_eq!(p.elements_in(3), None);
    assert!(!p.is_contiguous());
}

#[test]
fn struct_extent_is_aligned() {
    let b = basics();
    let t = Type::create_struct(&[1, 1], &[0, 8], &[b[3].clone(), b[0].clone()], false).unwrap();
    assert_eq!((t.size, t.extent, t.true_extent), (9, 16, 9));
}

#[test]
fn seed_subarray_has_10000_segments_of_1600_bytes() {
    let byte = Type::basic(&CHAR);
    let value = Type::contiguous(16, &byte, false).unwrap();
    let t = Type::subarray(&[1000; 3], &[100; 3], &[300; 3], Order::C, &value, false).unwrap();
    t.commit();
    let c = t.compiled();
    assert_eq!(c.segments(), 10_000);
    assert_eq!(c.segments_within(i32::MAX as u64), (10_000, 16_000_000));
    let first = ((300 * 1000 + 300) * 1000 + 300) * 16;
    assert_eq!(c.segment(0).0.start, first);
    assert_eq!(c.segment(1).0.start, first + 1000 * 16);
    assert_eq!(c.segment(100).0.start, first + 1000 * 1000 * 16);
    assert!(c.segment(9_999).0.len == 1600);
}

#[test]
fn large_indexed_random_access() {
    let int = Type::basic(&INT);
    let n = 1_000_000;
    let lens = vec![1usize; n];
    let disps: Vec<i64> = (0..n as i64).map(|i| 2 * i).collect();
    let t = Type::indexed(&lens, &disps, false, false, &int, false).unwrap();
    t.commit();
    let c = t.compiled();
    assert_eq!(c.segments(), n as u64);
    assert_eq!(c.segment(999_999).0.start, 8 * 999_999);
}

#[test]
fn joins_across_repeats_and_lists() {
    let b = basics();
    // {[0,4),[8,12)} resized to extent 12, repeated: the boundary pieces merge.
    let s = Type::create_struct(&[1, 1], &[0, 8], &[b[2].clone(), b[2].clone()], false).unwrap();
    let r = Type::resized(&s, 0, 12, false).unwrap();
    let v = Type::contiguous(3, &r, false).unwrap();
    v.commit();
    let c = v.compiled();
    let segs: Vec<_> = (0..c.segments()).map(|k| c.segment(k).0).collect();
    let got: Vec<(isize, usize)> = segs.iter().map(|s| (s.start, s.len)).collect();
    assert_eq!(got, vec![(0, 4), (8, 8), (20, 8), (32, 4)]);
}

#[test]
fn bytes_of_elements_walks_the_tree_not_the_elements() {
    // 2^34 ints (a vector of contiguous blocks, with a struct tail): answered at once.
    let int = Type::basic(&INT);
    let dbl = Type::basic(&DOUBLE);
    let block = Type::contiguous(1 << 20, &int, false).unwrap();
    let v = Type::vector(1 << 14, 1, 2, false, &block, false).unwrap();
    let s = Type::create_struct(&[1, 3], &[0, 1 << 40], &[v.clone(), dbl], false).unwrap();
    s.commit();
    let n = (1u64 << 34) + 2;
    assert_eq!(s.bytes_of_elements(n), Some((1u64 << 36) + 16));
    assert_eq!(
        s.bytes_of_elements((1u64 << 34) - 1),
        Some((1u64 << 36) - 4)
    );
    assert_eq!(
        s.bytes_of_elements(3 * ((1u64 << 34) + 3) + 1),
        Some(3 * s.size as u64 + 4)
    );
}

#[test]
fn overflow_is_an_error() {
    let b = basics();
    let big = Type::contiguous(1 << 40, &b[3], false).unwrap();
    let e = Type::contiguous(1 << 40, &big, false).unwrap_err();
    assert_eq!(e.code, crate::error::ErrorClass::Count as i32);
}

#[test]
fn freed_type_stays_alive_through_its_holder() {
    let b = basics();
    let t = Type::vector(4, 1, 2, false, &b[2], false).unwrap();
    t.commit();
    let src: Vec<u8> = (0..32).collect();
    // SAFETY: 4 ints at stride 8 bytes fit in 32 bytes.
    let buf = unsafe { Buf::typed(src.as_ptr() as usize, 1, &t) };
    let keep = buf.keep();
    drop(t);
    let mut out = [0u8; 16];
    buf.pack(0, &mut out);
    assert_eq!(
        out,
        [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]
    );
    drop(keep);
}
