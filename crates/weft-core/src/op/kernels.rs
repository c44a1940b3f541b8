//! The predefined reduction kernels, written over byte slices in safe code: each element is
//! loaded with `from_ne_bytes`, combined and stored back. Whole blocks of elements go through
//! fixed-size arrays so the compiler vectorises the common cases (sums, min/max, bitwise ops
//! on integers and floats).
#![forbid(unsafe_code)]

use super::float16::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
use super::softfloat::{self, Format};
use super::{Elem, OpKind, Scalar};

/// A fixed-size number loaded from native-endian bytes.
trait Num: Copy + Default {
    const N: usize;
    fn load(b: &[u8]) -> Self;
    fn store(self, b: &mut [u8]);
}

macro_rules! num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            const N: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn load(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..std::mem::size_of::<$t>()]);
                <$t>::from_ne_bytes(a)
            }
            #[inline(always)]
            fn store(self, b: &mut [u8]) {
                b[..std::mem::size_of::<$t>()].copy_from_slice(&self.to_ne_bytes());
            }
        }
    )*};
}
num!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128, f32, f64);

/// Elements per block: blocks of this many go through arrays (vectorisable), the rest one
/// by one.
const BLOCK: usize = 16;

#[inline(always)]
fn map<T: Num>(input: &[u8], inout: &mut [u8], f: impl Fn(T, T) -> T) {
    let bytes = T::N * BLOCK;
    let mut ins = input.chunks_exact(bytes);
    let mut outs = inout.chunks_exact_mut(bytes);
    for (a, b) in (&mut ins).zip(&mut outs) {
        let mut x = [T::default(); BLOCK];
        let mut y = [T::default(); BLOCK];
        for i in 0..BLOCK {
            x[i] = T::load(&a[i * T::N..]);
            y[i] = T::load(&b[i * T::N..]);
        }
        for i in 0..BLOCK {
            y[i] = f(x[i], y[i]);
        }
        for i in 0..BLOCK {
            y[i].store(&mut b[i * T::N..]);
        }
    }
    for (a, b) in ins
        .remainder()
        .chunks_exact(T::N)
        .zip(outs.into_remainder().chunks_exact_mut(T::N))
    {
        f(T::load(a), T::load(b)).store(b);
    }
}

/// Whether Weft has a kernel for a combination the standard allows.
pub fn supported(op: OpKind, elem: Elem) -> bool {
    use Scalar::*;
    match (op, elem) {
        (OpKind::Replace | OpKind::NoOp, _) => true,
        // Extended and quadruple precision: exact comparisons, soft-float arithmetic.
        (OpKind::Max | OpKind::Min | OpKind::Sum | OpKind::Prod, Elem::Float(F80 | F128)) => true,
        (OpKind::Sum | OpKind::Prod, Elem::Complex(F80 | F128)) => true,
        (_, Elem::Float(F80 | F128) | Elem::Complex(F80 | F128)) => false,
        (_, Elem::Pair { value, index, .. }) => {
            !matches!(index, F80 | F128 | F16 | BF16) && !matches!(value, F128 | F16 | BF16)
        }
        _ => true,
    }
}

macro_rules! int_op {
    ($t:ty, $op:expr, $input:expr, $inout:expr) => {{
        let (input, inout) = ($input, $inout);
        match $op {
            OpKind::Sum => map::<$t>(input, inout, |a, b| a.wrapping_add(b)),
            OpKind::Prod => map::<$t>(input, inout, |a, b| a.wrapping_mul(b)),
            OpKind::Max => map::<$t>(input, inout, |a, b| if a > b { a } else { b }),
            OpKind::Min => map::<$t>(input, inout, |a, b| if a < b { a } else { b }),
            OpKind::Band => map::<$t>(input, inout, |a, b| a & b),
            OpKind::Bor => map::<$t>(input, inout, |a, b| a | b),
            OpKind::Bxor => map::<$t>(input, inout, |a, b| a ^ b),
            OpKind::Land => map::<$t>(input, inout, |a, b| ((a != 0) & (b != 0)) as $t),
            OpKind::Lor => map::<$t>(input, inout, |a, b| ((a != 0) | (b != 0)) as $t),
            OpKind::Lxor => map::<$t>(input, inout, |a, b| ((a != 0) ^ (b != 0)) as $t),
            _ => unreachable!("checked by Elem::allows"),
        }
    }};
}

macro_rules! float_op {
    ($t:ty, $op:expr, $input:expr, $inout:expr) => {{
        let (input, inout) = ($input, $inout);
        match $op {
            OpKind::Sum => map::<$t>(input, inout, |a, b| a + b),
            OpKind::Prod => map::<$t>(input, inout, |a, b| a * b),
            OpKind::Max => map::<$t>(input, inout, |a, b| if a > b { a } else { b }),
            OpKind::Min => map::<$t>(input, inout, |a, b| if a < b { a } else { b }),
            _ => unreachable!("checked by Elem::allows"),
        }
    }};
}

/// `inout = input op inout` element-wise. The combination must be allowed and supported.
pub fn apply(op: OpKind, elem: Elem, input: &[u8], inout: &mut [u8]) {
    use Scalar::*;
    match op {
        OpKind::NoOp => return,
        OpKind::Replace => {
            inout.copy_from_slice(input);
            return;
        }
        _ => {}
    }
    match elem {
        Elem::Int(s) => match s {
            I8 => int_op!(i8, op, input, inout),
            I16 => int_op!(i16, op, input, inout),
            I32 => int_op!(i32, op, input, inout),
            I64 => int_op!(i64, op, input, inout),
            I128 => int_op!(i128, op, input, inout),
            U8 => int_op!(u8, op, input, inout),
            U16 => int_op!(u16, op, input, inout),
            U32 => int_op!(u32, op, input, inout),
            U64 => int_op!(u64, op, input, inout),
            U128 => int_op!(u128, op, input, inout),
            _ => unreachable!("integers are integer scalars"),
        },
        Elem::Byte => int_op!(u8, op, input, inout),
        Elem::Float(s) => match s {
            F32 => float_op!(f32, op, input, inout),
            F64 => float_op!(f64, op, input, inout),
            F16 => half(op, input, inout, (f16_to_f32, f32_to_f16)),
            BF16 => half(op, input, inout, (bf16_to_f32, f32_to_bf16)),
            F80 | F128 => match op {
                OpKind::Sum | OpKind::Prod => soft(op, s, 16, input, inout),
                _ => extended_minmax(op, s, input, inout),
            },
            _ => unreachable!("floats are float scalars"),
        },
        Elem::Complex(s) => complex(op, s, input, inout),
        Elem::Logical(n) => logical(op, n, input, inout),
        Elem::Pair {
            value,
            index,
            index_at,
            extent,
        } => pairs(op, value, index, index_at, extent, input, inout),
    }
}

/// `op` on a 16-bit float format, computed in `f32` (`widen` and `narrow` convert; generic, so
/// each format's loop is compiled with its conversions inlined).
fn half<W: Fn(u16) -> f32, N: Fn(f32) -> u16>(
    op: OpKind,
    input: &[u8],
    inout: &mut [u8],
    (widen, narrow): (W, N),
) {
    let f = |a: u16, b: u16| -> u16 {
        let (x, y) = (widen(a), widen(b));
        let r = match op {
            OpKind::Sum => x + y,
            OpKind::Prod => x * y,
            OpKind::Max => return if x > y { a } else { b },
            OpKind::Min => return if x < y { a } else { b },
            _ => unreachable!("checked by Elem::allows"),
        };
        narrow(r)
    };
    map::<u16>(input, inout, f);
}

/// A key that orders x87 extended (`F80`) or binary128 (`F128`) values like the numbers they
/// encode (NaNs aside): sign-magnitude turned into two's complement.
fn extended_key(s: Scalar, b: &[u8]) -> i128 {
    let (negative, magnitude) = match s {
        Scalar::F80 => {
            let mant = u64::load(&b[0..8]);
            let se = u16::load(&b[8..10]);
            (
                se & 0x8000 != 0,
                ((se as i128 & 0x7fff) << 64) | mant as i128,
            )
        }
        _ => {
            let raw = u128::load(b);
            (raw >> 127 != 0, (raw & (u128::MAX >> 1)) as i128)
        }
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

fn extended_minmax(op: OpKind, s: Scalar, input: &[u8], inout: &mut [u8]) {
    for (a, b) in input.chunks_exact(16).zip(inout.chunks_exact_mut(16)) {
        let (ka, kb) = (extended_key(s, a), extended_key(s, b));
        let take = match op {
            OpKind::Max => ka > kb,
            OpKind::Min => ka < kb,
            _ => unreachable!("only comparisons are supported on extended types"),
        };
        if take {
            b.copy_from_slice(a);
        }
    }
}

/// Sums and products of 16-byte floats (`width` 16) or complex pairs of them (32).
fn soft(op: OpKind, s: Scalar, width: usize, input: &[u8], inout: &mut [u8]) {
    let f = if s == Scalar::F80 {
        Format::X87
    } else {
        Format::Quad
    };
    for (a, b) in input.chunks_exact(width).zip(inout.chunks_exact_mut(width)) {
        match (op, width) {
            (OpKind::Sum, _) => {
                for k in (0..width).step_by(16) {
                    softfloat::add(f, &a[k..k + 16], &mut b[k..k + 16]);
                }
            }
            (OpKind::Prod, 16) => softfloat::mul(f, a, b),
            (OpKind::Prod, _) => softfloat::complex_mul(f, a, b),
            _ => unreachable!("checked by supported()"),
        }
    }
}

fn complex(op: OpKind, s: Scalar, input: &[u8], inout: &mut [u8]) {
    match (s, op) {
        (Scalar::F80 | Scalar::F128, _) => soft(op, s, 32, input, inout),
        (Scalar::F32, OpKind::Sum) => map::<f32>(input, inout, |a, b| a + b),
        (Scalar::F64, OpKind::Sum) => map::<f64>(input, inout, |a, b| a + b),
        (Scalar::F16, OpKind::Sum) => half(OpKind::Sum, input, inout, (f16_to_f32, f32_to_f16)),
        (Scalar::F32, OpKind::Prod) => {
            for (a, b) in input.chunks_exact(8).zip(inout.chunks_exact_mut(8)) {
                let (ar, ai) = (f32::load(&a[0..]), f32::load(&a[4..]));
                let (br, bi) = (f32::load(&b[0..]), f32::load(&b[4..]));
                (ar * br - ai * bi).store(&mut b[0..]);
                (ar * bi + ai * br).store(&mut b[4..]);
            }
        }
        (Scalar::F64, OpKind::Prod) => {
            for (a, b) in input.chunks_exact(16).zip(inout.chunks_exact_mut(16)) {
                let (ar, ai) = (f64::load(&a[0..]), f64::load(&a[8..]));
                let (br, bi) = (f64::load(&b[0..]), f64::load(&b[8..]));
                (ar * br - ai * bi).store(&mut b[0..]);
                (ar * bi + ai * br).store(&mut b[8..]);
            }
        }
        (Scalar::F16, OpKind::Prod) => {
            for (a, b) in input.chunks_exact(4).zip(inout.chunks_exact_mut(4)) {
                let h = |x: &[u8]| f16_to_f32(u16::load(x));
                let (ar, ai, br, bi) = (h(&a[0..]), h(&a[2..]), h(&b[0..]), h(&b[2..]));
                f32_to_f16(ar * br - ai * bi).store(&mut b[0..]);
                f32_to_f16(ar * bi + ai * br).store(&mut b[2..]);
            }
        }
        _ => unreachable!("checked by supported()"),
    }
}

fn logical(op: OpKind, n: usize, input: &[u8], inout: &mut [u8]) {
    if n == 0 {
        return;
    }
    for (a, b) in input.chunks_exact(n).zip(inout.chunks_exact_mut(n)) {
        let (x, y) = (a.iter().any(|&v| v != 0), b.iter().any(|&v| v != 0));
        let r = match op {
            OpKind::Land => x & y,
            OpKind::Lor => x | y,
            OpKind::Lxor => x ^ y,
            _ => unreachable!("checked by Elem::allows"),
        };
        b.fill(0);
        if r {
            // The value 1 in native byte order.
            if cfg!(target_endian = "little") {
                b[0] = 1;
            } else {
                b[n - 1] = 1;
            }
        }
    }
}

/// Load a scalar of a pair as an ordering key and a value (i128 / f64 comparisons).
#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Key {
    I(i128),
    F(f64),
}

fn key(s: Scalar, b: &[u8]) -> Key {
    match s {
        Scalar::I16 => Key::I(i16::load(b) as i128),
        Scalar::I32 => Key::I(i32::load(b) as i128),
        Scalar::I64 => Key::I(i64::load(b) as i128),
        Scalar::F32 => Key::F(f32::load(b) as f64),
        Scalar::F64 => Key::F(f64::load(b)),
        Scalar::F80 => Key::I(extended_key(s, b)),
        _ => unreachable!("checked by supported()"),
    }
}

fn pairs(
    op: OpKind,
    value: Scalar,
    index: Scalar,
    index_at: usize,
    extent: usize,
    input: &[u8],
    inout: &mut [u8],
) {
    let (vs, is) = (value.size(), index.size());
    for (a, b) in input
        .chunks_exact(extent)
        .zip(inout.chunks_exact_mut(extent))
    {
        let (va, vb) = (key(value, &a[..vs]), key(value, &b[..vs]));
        let (ia, ib) = (
            key(index, &a[index_at..index_at + is]),
            key(index, &b[index_at..index_at + is]),
        );
        let take_a = match op {
            OpKind::Minloc => va < vb || (va == vb && ia < ib),
            OpKind::Maxloc => va > vb || (va == vb && ia < ib),
            _ => unreachable!("checked by Elem::allows"),
        };
        if take_a {
            b[..vs].copy_from_slice(&a[..vs]);
            b[index_at..index_at + is].copy_from_slice(&a[index_at..index_at + is]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<T: Num>(v: &[T]) -> Vec<u8> {
        let mut out = vec![0u8; v.len() * T::N];
        for (x, c) in v.iter().zip(out.chunks_exact_mut(T::N)) {
            x.store(c);
        }
        out
    }
    fn values<T: Num>(b: &[u8]) -> Vec<T> {
        b.chunks_exact(T::N).map(T::load).collect()
    }

    #[test]
    fn integer_ops_over_blocks_and_remainders() {
        let a: Vec<i32> = (0..37).collect();
        let b: Vec<i32> = (0..37).map(|x| 100 - 3 * x).collect();
        let check = |op, f: fn(i32, i32) -> i32| {
            let mut out = bytes(&b);
            apply(op, Elem::Int(Scalar::I32), &bytes(&a), &mut out);
            let want: Vec<i32> = a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect();
            assert_eq!(values::<i32>(&out), want, "{op:?}");
        };
        check(OpKind::Sum, |x, y| x + y);
        check(OpKind::Prod, |x, y| x * y);
        check(OpKind::Max, |x, y| x.max(y));
        check(OpKind::Min, |x, y| x.min(y));
        check(OpKind::Band, |x, y| x & y);
        check(OpKind::Bor, |x, y| x | y);
        check(OpKind::Bxor, |x, y| x ^ y);
        check(OpKind::Land, |x, y| (x != 0 && y != 0) as i32);
        check(OpKind::Lor, |x, y| (x != 0 || y != 0) as i32);
        check(OpKind::Lxor, |x, y| ((x != 0) != (y != 0)) as i32);
    }

    #[test]
    fn floats_complex_logical() {
        let mut out = bytes(&[1.5f64, -2.0]);
        apply(
            OpKind::Sum,
            Elem::Float(Scalar::F64),
            &bytes(&[0.25f64, 4.0]),
            &mut out,
        );
        assert_eq!(values::<f64>(&out), vec![1.75, 2.0]);
        // (1+2i)(3+4i) = -5+10i
        let mut out = bytes(&[3.0f32, 4.0]);
        apply(
            OpKind::Prod,
            Elem::Complex(Scalar::F32),
            &bytes(&[1.0f32, 2.0]),
            &mut out,
        );
        assert_eq!(values::<f32>(&out), vec![-5.0, 10.0]);
        let mut out = vec![0u8, 3, 0, 1];
        apply(OpKind::Lor, Elem::Logical(1), &[0, 0, 7, 1], &mut out);
        assert_eq!(out, vec![0, 1, 1, 1]);
        let mut out = bytes(&[f32_to_f16(1.5)]);
        apply(
            OpKind::Sum,
            Elem::Float(Scalar::F16),
            &bytes(&[f32_to_f16(2.25)]),
            &mut out,
        );
        assert_eq!(f16_to_f32(values::<u16>(&out)[0]), 3.75);
    }

    #[test]
    fn minloc_maxloc_on_pairs() {
        // MPI_2INT: (value, index)
        let e = Elem::Pair {
            value: Scalar::I32,
            index: Scalar::I32,
            index_at: 4,
            extent: 8,
        };
        let input = bytes(&[5i32, 1, 3, 7, 2, 2]);
        let mut out = bytes(&[5i32, 0, 4, 1, 2, 9]);
        apply(OpKind::Minloc, e, &input, &mut out);
        assert_eq!(values::<i32>(&out), vec![5, 0, 3, 7, 2, 2]);
        let mut out = bytes(&[5i32, 0, 4, 1, 2, 9]);
        apply(OpKind::Maxloc, e, &input, &mut out);
        assert_eq!(values::<i32>(&out), vec![5, 0, 4, 1, 2, 2]);
    }

    #[test]
    fn extended_comparisons() {
        // x87 80-bit: 1.0 = mantissa 0x8000..., exponent 0x3fff; 2.0 exponent 0x4000.
        let ext = |neg: bool, exp: u16, mant: u64| {
            let mut b = vec![0u8; 16];
            b[0..8].copy_from_slice(&mant.to_le_bytes());
            b[8..10].copy_from_slice(&((exp | if neg { 0x8000 } else { 0 }).to_le_bytes()));
            b
        };
        let one = ext(false, 0x3fff, 1 << 63);
        let two = ext(false, 0x4000, 1 << 63);
        let minus_two = ext(true, 0x4000, 1 << 63);
        let mut out = one.clone();
        apply(OpKind::Max, Elem::Float(Scalar::F80), &two, &mut out);
        assert_eq!(out, two);
        apply(OpKind::Min, Elem::Float(Scalar::F80), &minus_two, &mut out);
        assert_eq!(out, minus_two);
    }
}
