//! Exact soft-float addition and multiplication for the two 16-byte float formats that Rust
//! has no arithmetic for: the x87 80-bit extended format of C `long double` on x86-64 (a
//! 64-bit significand with an explicit integer bit, stored in the first 10 bytes of 16) and
//! IEEE binary128 (Fortran `REAL*16`: a 113-bit significand). Both share binary128's 15-bit
//! exponent, so one implementation serves both, parameterised by the precision.
//!
//! Results are what the hardware (x87 at its default 64-bit precision control) or a
//! correct binary128 library gives: the exact sum or product rounded once to nearest, ties
//! to even, with gradual underflow, overflow to infinity, signed zeros, and NaN for
//! inf - inf and 0 * inf. Rounding through `f64` would not be exact (it loses 11 or 60
//! significand bits), hence this.
//!
//! A finite value is handled as `sig * 2^exp` with an integer `sig`; an operation computes
//! the exact result (wide enough, with the bits shifted out of an addend folded into a
//! sticky bit well below the rounding position) and rounds it once.
#![forbid(unsafe_code)]

/// Which 16-byte format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// x87 extended precision (C `long double` on x86-64).
    X87,
    /// IEEE binary128.
    Quad,
}

const BIAS: i32 = 16383;
const EXP_MAX: u32 = 0x7fff;

impl Format {
    /// Significand bits (including the integer bit).
    fn precision(self) -> u32 {
        match self {
            Format::X87 => 64,
            Format::Quad => 113,
        }
    }

    /// Exponent of the least significant significand bit of the smallest (subnormal) values.
    fn emin_lsb(self) -> i32 {
        1 - BIAS - (self.precision() as i32 - 1)
    }
}

/// A decoded value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Val {
    Nan,
    Inf(bool),
    /// sign, significand, exponent of its least significant bit (`sig == 0` is a zero).
    Fin(bool, u128, i32),
}

fn decode(f: Format, b: &[u8]) -> Val {
    let se = u16::from_le_bytes([b[8], b[9]]) as u32;
    let (sign, exp) = (se & 0x8000 != 0, se & 0x7fff);
    match f {
        Format::X87 => {
            let mut m = [0u8; 8];
            m.copy_from_slice(&b[..8]);
            let sig = u64::from_le_bytes(m) as u128;
            if exp == EXP_MAX {
                // Infinity has the integer bit and nothing else; everything else is a NaN.
                return if sig << 65 == 0 {
                    Val::Inf(sign)
                } else {
                    Val::Nan
                };
            }
            // Denormals (and pseudo-denormals) use the minimum exponent.
            let e = exp.max(1) as i32 - BIAS - 63;
            Val::Fin(sign, sig, e)
        }
        Format::Quad => {
            let mut m = [0u8; 16];
            m.copy_from_slice(&b[..16]);
            let bits = u128::from_le_bytes(m);
            let sign = bits >> 127 != 0;
            let exp = ((bits >> 112) & 0x7fff) as u32;
            let frac = bits & ((1u128 << 112) - 1);
            if exp == EXP_MAX {
                return if frac == 0 { Val::Inf(sign) } else { Val::Nan };
            }
            let sig = if exp == 0 { frac } else { frac | 1u128 << 112 };
            Val::Fin(sign, sig, exp.max(1) as i32 - BIAS - 112)
        }
    }
}

/// Write `v` (already representable: a rounded finite value, a zero, an infinity or NaN).
fn encode(f: Format, v: Val, out: &mut [u8]) {
    let (sign, exp, sig): (bool, u32, u128) = match v {
        Val::Nan => match f {
            // The x87 default NaN ("real indefinite"); binary128's default quiet NaN.
            Format::X87 => (true, EXP_MAX, 0xC000_0000_0000_0000),
            Format::Quad => (false, EXP_MAX, 1u128 << 111),
        },
        Val::Inf(s) => match f {
            Format::X87 => (s, EXP_MAX, 1u128 << 63),
            Format::Quad => (s, EXP_MAX, 0),
        },
        Val::Fin(s, 0, _) => (s, 0, 0),
        Val::Fin(s, q, e) => {
            let p = f.precision();
            if q >> (p - 1) != 0 {
                ((s), (e + (p as i32 - 1) + BIAS) as u32, q)
            } else {
                (s, 0, q)
            }
        }
    };
    match f {
        Format::X87 => {
            out[..8].copy_from_slice(&(sig as u64).to_le_bytes());
            let se = (exp as u16) | if sign { 0x8000 } else { 0 };
            out[8..10].copy_from_slice(&se.to_le_bytes());
        }
        Format::Quad => {
            let frac = sig & ((1u128 << 112) - 1);
            let bits = (sign as u128) << 127 | (exp as u128) << 112 | frac;
            out[..16].copy_from_slice(&bits.to_le_bytes());
        }
    }
}

/// Round `sig * 2^exp` (`sig != 0`, below 2^127; its bit 0 may be a sticky bit standing for
/// nonzero bits further down, provided it lies below the rounding position) to the format.
fn round(f: Format, sign: bool, sig: u128, exp: i32) -> Val {
    let p = f.precision() as i32;
    let msb = 127 - sig.leading_zeros() as i32;
    let mut shift = msb + 1 - p;
    if exp + shift < f.emin_lsb() {
        shift = f.emin_lsb() - exp;
    }
    let (mut q, mut e) = if shift <= 0 {
        (sig << (-shift) as u32, exp + shift)
    } else if shift >= 128 {
        // Less than half of the smallest subnormal: rounds to zero.
        (0, exp + shift)
    } else {
        let q = sig >> shift as u32;
        let r = sig & ((1u128 << shift as u32) - 1);
        let half = 1u128 << (shift - 1) as u32;
        let up = r > half || (r == half && q & 1 == 1);
        (q + up as u128, exp + shift)
    };
    if q >> p as u32 != 0 {
        q >>= 1;
        e += 1;
    }
    if q != 0 && e + (p - 1) > BIAS {
        return Val::Inf(sign);
    }
    Val::Fin(sign, q, e)
}

/// `sig` shifted so that its top bit is bit 124 (nonzero `sig`), and the exponent adjusted.
fn normalize(sig: u128, exp: i32) -> (u128, i32) {
    let msb = 127 - sig.leading_zeros() as i32;
    let s = 124 - msb;
    if s >= 0 {
        (sig << s as u32, exp - s)
    } else {
        let lost = sig & ((1u128 << (-s) as u32) - 1) != 0;
        ((sig >> (-s) as u32) | lost as u128, exp - s)
    }
}

fn add_vals(f: Format, a: Val, b: Val) -> Val {
    match (a, b) {
        (Val::Nan, _) | (_, Val::Nan) => Val::Nan,
        (Val::Inf(x), Val::Inf(y)) => {
            if x == y {
                Val::Inf(x)
            } else {
                Val::Nan
            }
        }
        (Val::Inf(x), _) | (_, Val::Inf(x)) => Val::Inf(x),
        (Val::Fin(sa, 0, _), Val::Fin(sb, 0, _)) => Val::Fin(sa && sb, 0, 0),
        (Val::Fin(_, 0, _), v) | (v, Val::Fin(_, 0, _)) => v,
        (Val::Fin(sa, ma, ea), Val::Fin(sb, mb, eb)) => {
            let (ma, ea) = normalize(ma, ea);
            let (mb, eb) = normalize(mb, eb);
            // Larger magnitude first.
            let ((sa, ma, ea), (sb, mb, eb)) = if (ea, ma) >= (eb, mb) {
                ((sa, ma, ea), (sb, mb, eb))
            } else {
                ((sb, mb, eb), (sa, ma, ea))
            };
            let d = (ea - eb) as u32;
            let mb = if d == 0 {
                mb
            } else if d >= 127 {
                1 // sticky only
            } else {
                let lost = mb & ((1u128 << d) - 1) != 0;
                (mb >> d) | lost as u128
            };
            if sa == sb {
                round(f, sa, ma + mb, ea)
            } else {
                let m = ma - mb;
                if m == 0 {
                    // Exact cancellation gives +0 when rounding to nearest.
                    Val::Fin(false, 0, 0)
                } else {
                    round(f, sa, m, ea)
                }
            }
        }
    }
}

/// The 256-bit product of two u128 values, as (high, low).
fn mul_wide(a: u128, b: u128) -> (u128, u128) {
    let (a1, a0) = (a >> 64, a & u64::MAX as u128);
    let (b1, b0) = (b >> 64, b & u64::MAX as u128);
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 64) + (p01 & u64::MAX as u128) + (p10 & u64::MAX as u128);
    let lo = (p00 & u64::MAX as u128) | (mid << 64);
    let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    (hi, lo)
}

fn mul_vals(f: Format, a: Val, b: Val) -> Val {
    match (a, b) {
        (Val::Nan, _) | (_, Val::Nan) => Val::Nan,
        (Val::Inf(_), Val::Fin(_, 0, _)) | (Val::Fin(_, 0, _), Val::Inf(_)) => Val::Nan,
        (Val::Inf(x), Val::Inf(y))
        | (Val::Inf(x), Val::Fin(y, _, _))
        | (Val::Fin(x, _, _), Val::Inf(y)) => Val::Inf(x != y),
        (Val::Fin(sa, 0, _), Val::Fin(sb, _, _)) | (Val::Fin(sa, _, _), Val::Fin(sb, 0, _)) => {
            Val::Fin(sa != sb, 0, 0)
        }
        (Val::Fin(sa, ma, ea), Val::Fin(sb, mb, eb)) => {
            let (hi, lo) = mul_wide(ma, mb);
            let e = ea + eb;
            // Bring the product below 2^125 with a sticky bit for what is shifted out.
            let (sig, e) = if hi == 0 && lo >> 125 == 0 {
                (lo, e)
            } else {
                let top = if hi == 0 {
                    127 - lo.leading_zeros()
                } else {
                    255 - hi.leading_zeros()
                };
                let s = top - 124;
                let kept = if s >= 128 {
                    hi >> (s - 128)
                } else {
                    (lo >> s) | (hi << (128 - s))
                };
                let lost = if s >= 128 {
                    lo != 0 || hi & ((1u128 << (s - 128)) - 1) != 0
                } else {
                    lo & ((1u128 << s) - 1) != 0
                };
                (kept | lost as u128, e + s as i32)
            };
            round(f, sa != sb, sig, e)
        }
    }
}

/// `inout = a + inout` on one 16-byte element.
pub fn add(f: Format, a: &[u8], inout: &mut [u8]) {
    let r = add_vals(f, decode(f, a), decode(f, inout));
    encode(f, r, inout);
}

/// `inout = a * inout` on one 16-byte element.
pub fn mul(f: Format, a: &[u8], inout: &mut [u8]) {
    let r = mul_vals(f, decode(f, a), decode(f, inout));
    encode(f, r, inout);
}

/// Complex `inout = a * inout` (real part at 0, imaginary at 16): `(ar*br - ai*bi) +
/// (ar*bi + ai*br)i`, each product and sum rounded once, as the C library's
/// `long double _Complex` multiplication computes it for finite values.
pub fn complex_mul(f: Format, a: &[u8], inout: &mut [u8]) {
    let (ar, ai) = (decode(f, &a[..16]), decode(f, &a[16..32]));
    let (br, bi) = (decode(f, &inout[..16]), decode(f, &inout[16..32]));
    let neg = |v: Val| match v {
        Val::Inf(s) => Val::Inf(!s),
        Val::Fin(s, m, e) => Val::Fin(!s, m, e),
        n => n,
    };
    let re = add_vals(f, mul_vals(f, ar, br), neg(mul_vals(f, ai, bi)));
    let im = add_vals(f, mul_vals(f, ar, bi), mul_vals(f, ai, br));
    encode(f, re, &mut inout[..16]);
    encode(f, im, &mut inout[16..32]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An f64 as x87 extended bytes (exact: every double is an extended value).
    fn x87(v: f64) -> [u8; 16] {
        let mut out = [0u8; 16];
        let bits = v.to_bits();
        let sign = bits >> 63 != 0;
        let exp = ((bits >> 52) & 0x7ff) as i32;
        let frac = (bits & ((1u64 << 52) - 1)) as u128;
        let val = if exp == 0x7ff {
            if frac == 0 {
                Val::Inf(sign)
            } else {
                Val::Nan
            }
        } else if exp == 0 {
            if frac == 0 {
                Val::Fin(sign, 0, 0)
            } else {
                round(Format::X87, sign, frac, -1074)
            }
        } else {
            round(Format::X87, sign, frac | 1 << 52, exp - 1075)
        };
        encode(Format::X87, val, &mut out);
        out
    }

    fn quad(v: f64) -> [u8; 16] {
        let mut out = [0u8; 16];
        let bits = v.to_bits();
        let sign = bits >> 63 != 0;
        let exp = ((bits >> 52) & 0x7ff) as i32;
        let frac = (bits & ((1u64 << 52) - 1)) as u128;
        let val = if exp == 0 {
            Val::Fin(sign, frac, -1074)
        } else {
            Val::Fin(sign, frac | 1 << 52, exp - 1075)
        };
        let val = match val {
            Val::Fin(s, 0, _) => Val::Fin(s, 0, 0),
            Val::Fin(s, m, e) => round(Format::Quad, s, m, e),
            v => v,
        };
        encode(Format::Quad, val, &mut out);
        out
    }

    #[test]
    fn x87_layout_of_one() {
        let one = x87(1.0);
        assert_eq!(&one[..10], &[0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f]);
        let q = quad(1.0);
        assert_eq!(u128::from_le_bytes(q), 0x3fffu128 << 112);
    }

    #[test]
    fn exact_where_f64_is_not() {
        // 1 + 2^-60 is exact in x87 extended (64-bit significand) but not in a double.
        let mut acc = x87(1.0);
        let tiny = x87(2f64.powi(-60));
        add(Format::X87, &tiny, &mut acc);
        assert_eq!(
            decode(Format::X87, &acc),
            Val::Fin(false, (1u128 << 63) | (1 << 3), -63)
        );
        // 1 + 2^-64 rounds to 1 (a tie at the last place, to even), 1 + 3*2^-65 rounds up.
        let mut acc = x87(1.0);
        add(Format::X87, &x87(2f64.powi(-64)), &mut acc);
        assert_eq!(acc, x87(1.0));
        let mut acc = x87(1.0);
        add(Format::X87, &x87(3.0 * 2f64.powi(-65)), &mut acc);
        assert_eq!(
            decode(Format::X87, &acc),
            Val::Fin(false, (1u128 << 63) | 1, -63)
        );
        // binary128 keeps 2^-100 next to 1.
        let mut q = quad(1.0);
        add(Format::Quad, &quad(2f64.powi(-100)), &mut q);
        assert_eq!(u128::from_le_bytes(q), (0x3fffu128 << 112) | (1u128 << 12));
    }

    #[test]
    fn products_and_specials() {
        for f in [Format::X87, Format::Quad] {
            let enc = |v: f64| if f == Format::X87 { x87(v) } else { quad(v) };
            let mut p = enc(3.0);
            mul(f, &enc(-7.5), &mut p);
            assert_eq!(p, enc(-22.5));
            let mut s = enc(0.1);
            add(f, &enc(-0.1), &mut s);
            assert_eq!(s, enc(0.0));
            let mut big = enc(f64::MAX);
            for _ in 0..20 {
                let b = big;
                mul(f, &b, &mut big);
            }
            assert_eq!(decode(f, &big), Val::Inf(false));
            let mut n = enc(0.0);
            mul(f, &big, &mut n);
            assert_eq!(decode(f, &n), Val::Nan);
            // (2^53 + 1)^2 = 2^106 + 2^54 + 1: exact in binary128, rounded in x87.
            let v = enc(9007199254740992.0);
            let mut w = v;
            add(f, &enc(1.0), &mut w);
            let w2 = w;
            mul(f, &w2, &mut w);
            match (f, decode(f, &w)) {
                (Format::Quad, Val::Fin(false, m, e)) => {
                    let exact: u128 = (1u128 << 106) + (1u128 << 54) + 1;
                    assert_eq!(m, exact << 6);
                    assert_eq!(e, -6);
                }
                (Format::X87, Val::Fin(false, m, e)) => {
                    // 2^106 + 2^54 + 1 to 64 bits: the +1 is lost (below half an ulp).
                    assert_eq!(m, (1u128 << 63) | (1u128 << 11));
                    assert_eq!(e, 106 - 63);
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn subnormals() {
        // The smallest x87 subnormal halved rounds to zero (tie, to even); times 3/2 rounds
        // up to 2 units.
        let f = Format::X87;
        let mut tiny = [0u8; 16];
        encode(f, Val::Fin(false, 1, f.emin_lsb()), &mut tiny);
        let mut h = tiny;
        mul(f, &x87(0.5), &mut h);
        assert_eq!(decode(f, &h), Val::Fin(false, 0, f.emin_lsb()));
        let mut t = tiny;
        mul(f, &x87(1.5), &mut t);
        assert_eq!(decode(f, &t), Val::Fin(false, 2, f.emin_lsb()));
    }

    #[test]
    fn complex_product() {
        let f = Format::Quad;
        let mut a = [0u8; 32];
        a[..16].copy_from_slice(&quad(1.0));
        a[16..].copy_from_slice(&quad(2.0));
        let mut b = [0u8; 32];
        b[..16].copy_from_slice(&quad(3.0));
        b[16..].copy_from_slice(&quad(-1.0));
        complex_mul(f, &a, &mut b);
        assert_eq!(&b[..16], &quad(5.0));
        assert_eq!(&b[16..], &quad(5.0));
    }
}
