//! The "external32" data representation (`MPI_Pack_external`): every basic element
//! big-endian, with the standard's fixed sizes (`MPI_LONG` and `MPI_UNSIGNED_LONG` are 4
//! bytes there, 8 here). Conversion walks basic elements in typemap order.

use super::predefined::{Datatype, TypeClass};
use super::types::Type;

/// external32 size of a predefined element and the unit its bytes are swapped in.
fn layout(d: &Datatype) -> (usize, usize) {
    match d.name {
        "MPI_LONG" | "MPI_UNSIGNED_LONG" => (4, 4),
        _ if d.class == TypeClass::Complex => (d.size, d.size / 2),
        _ => (d.size, d.size),
    }
}

/// Bytes of one element of `d` in external32.
pub fn element_size(d: &Datatype) -> usize {
    layout(d).0
}

/// Bytes of `count` instances of `t` in external32, if that fits.
pub fn size(t: &Type, count: usize) -> Option<usize> {
    let mut per = 0usize;
    t.for_each_basic(0, &mut |_, d| per += layout(d).0);
    per.checked_mul(count)
}

/// Pack `count` instances at `addr` into `out` (which has room for `size(t, count)`).
///
/// # Safety
/// The instances are readable user memory.
pub unsafe fn pack(t: &Type, addr: usize, count: usize, out: &mut [u8]) {
    let mut pos = 0;
    for i in 0..count {
        let base = i as isize * t.extent;
        t.for_each_basic(base, &mut |off, d| {
            let (ext, unit) = layout(d);
            let src = addr.wrapping_add_signed(off) as *const u8;
            if ext < d.size {
                // A narrower integer: the low bytes of the little-endian value.
                for k in 0..ext {
                    // SAFETY: byte k < d.size of a readable element.
                    out[pos + k] = unsafe { *src.add(ext - 1 - k) };
                }
            } else {
                for u in (0..d.size).step_by(unit) {
                    for k in 0..unit {
                        // SAFETY: byte u+k < d.size of a readable element.
                        out[pos + u + k] = unsafe { *src.add(u + unit - 1 - k) };
                    }
                }
            }
            pos += ext;
        });
    }
}

/// Unpack `count` instances from `data` into user memory at `addr`.
///
/// # Safety
/// The instances are writable user memory; `data` holds `size(t, count)` bytes.
pub unsafe fn unpack(t: &Type, addr: usize, count: usize, data: &[u8]) {
    let mut pos = 0;
    for i in 0..count {
        let base = i as isize * t.extent;
        t.for_each_basic(base, &mut |off, d| {
            let (ext, unit) = layout(d);
            let dst = addr.wrapping_add_signed(off) as *mut u8;
            if ext < d.size {
                let negative = d.class == TypeClass::SignedInt && data[pos] & 0x80 != 0;
                for k in 0..d.size {
                    let b = if k < ext {
                        data[pos + ext - 1 - k]
                    } else if negative {
                        0xff
                    } else {
                        0
                    };
                    // SAFETY: byte k < d.size of a writable element.
                    unsafe { *dst.add(k) = b };
                }
            } else {
                for u in (0..d.size).step_by(unit) {
                    for k in 0..unit {
                        // SAFETY: byte u+k < d.size of a writable element.
                        unsafe { *dst.add(u + k) = data[pos + u + unit - 1 - k] };
                    }
                }
            }
            pos += ext;
        });
    }
}

/// `count` instances of a type in user memory, converted to and from external32 as a whole
/// (file I/O in the external32 representation).
pub struct TypedMem {
    addr: usize,
    count: usize,
    ty: std::sync::Arc<Type>,
}

impl TypedMem {
    /// # Safety
    /// The `count` instances of `ty` at `addr` stay valid user memory (readable for
    /// `to_external32`, writable for `from_external32`) while the `TypedMem` is used.
    pub unsafe fn new(addr: usize, count: usize, ty: std::sync::Arc<Type>) -> TypedMem {
        TypedMem { addr, count, ty }
    }

    pub fn count(&self) -> usize {
        self.count
    }

    /// external32 bytes of one instance.
    pub fn instance_size(&self) -> usize {
        size(&self.ty, 1).unwrap_or(0)
    }

    /// The instances in external32.
    pub fn to_external32(&self) -> Vec<u8> {
        let mut out = vec![0; self.instance_size() * self.count];
        // SAFETY: the constructor's caller vouched for the readable instances.
        unsafe { pack(&self.ty, self.addr, self.count, &mut out) };
        out
    }

    /// Store the whole instances that `data` holds (a short read stores fewer).
    pub fn from_external32(&self, data: &[u8]) {
        let per = self.instance_size();
        let n = if per == 0 {
            0
        } else {
            (data.len() / per).min(self.count)
        };
        // SAFETY: n <= count instances, writable per the constructor's contract.
        unsafe { unpack(&self.ty, self.addr, n, &data[..n * per]) };
    }
}
