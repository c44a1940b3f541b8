//! Direct access to the bytes of a contiguous `Buf` (reductions compute in place in user
//! memory) and owned scratch memory that collectives send from and receive into.
//!
//! Both rely on the contract of `Buf::new`: the memory stays valid while an operation uses
//! it. A `Scratch` must outlive every operation started on its `Buf`; the collectives wait
//! for all of their operations before a scratch is dropped.

use super::{Buf, Type};

impl Buf {
    /// Run `f` on the buffer's bytes (a contiguous buffer: see `Staged` for the others).
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        assert!(
            self.is_contiguous(),
            "byte access to a non-contiguous buffer"
        );
        if self.is_empty() {
            return f(&[]);
        }
        // The operation's lifetime encloses this call.
        // SAFETY: the constructor's caller vouched `addr..addr+len` is readable for the operation.
        let bytes = unsafe { std::slice::from_raw_parts(self.addr() as *const u8, self.len()) };
        f(bytes)
    }

    /// Run `f` on the buffer's bytes, writable.
    pub fn with_bytes_mut<R>(&self, f: impl FnOnce(&mut [u8]) -> R) -> R {
        assert!(
            self.is_contiguous(),
            "byte access to a non-contiguous buffer"
        );
        if self.is_empty() {
            return f(&mut []);
        }
        // As `with_bytes`, and receive buffers are writable.
        // SAFETY: no other reference to this memory is live inside the library while `f` runs.
        let bytes = unsafe { std::slice::from_raw_parts_mut(self.addr() as *mut u8, self.len()) };
        f(bytes)
    }

    /// Instances `first..first+count` of a buffer made of whole instances of `ty` (the type
    /// it was made with, `Buf::typed`): a sub-range of the same memory.
    pub fn instances(&self, ty: &Type, first: usize, count: usize) -> Buf {
        let (offset, len) = (first * ty.size, count * ty.size);
        if self.is_contiguous() || len == 0 {
            return if len == 0 {
                Buf::EMPTY
            } else {
                self.slice(offset, len)
            };
        }
        assert!(offset + len <= self.len(), "instances out of range");
        let addr = self.addr().wrapping_add_signed(first as isize * ty.extent);
        self.with_base(addr, len)
    }

    /// The bytes `offset..offset+len` of this buffer.
    pub fn slice(&self, offset: usize, len: usize) -> Buf {
        assert!(self.is_contiguous(), "slice of a non-contiguous buffer");
        assert!(
            offset.checked_add(len).is_some_and(|end| end <= self.len()),
            "slice out of range"
        );
        // SAFETY: a sub-range of memory the constructor's caller vouched for.
        unsafe { Buf::new(self.addr() + offset, len) }
    }
}

/// `f(a, b)` with `a` readable and `b` writable. If the two buffers are the same memory
/// (`MPI_IN_PLACE`-like uses), `a` is a copy.
pub fn with_pair<R>(a: &Buf, b: &Buf, f: impl FnOnce(&[u8], &mut [u8]) -> R) -> R {
    let (aa, ba) = (a.addr(), b.addr());
    let overlap = !a.is_empty() && !b.is_empty() && aa < ba + b.len() && ba < aa + a.len();
    if overlap {
        let copy = a.with_bytes(|x| x.to_vec());
        b.with_bytes_mut(|y| f(&copy, y))
    } else {
        a.with_bytes(|x| b.with_bytes_mut(|y| f(x, y)))
    }
}

/// A user buffer as contiguous bytes: the buffer itself when it is contiguous, else a
/// scratch copy (packed on creation when `load`), unpacked back by `store`.
pub struct Staged {
    user: Buf,
    scratch: Option<Scratch>,
    buf: Buf,
}

impl Staged {
    pub fn new(user: &Buf, load: bool) -> Staged {
        if user.is_contiguous() {
            return Staged {
                user: *user,
                scratch: None,
                buf: *user,
            };
        }
        let mut s = if load {
            Scratch::copy_of(user)
        } else {
            Scratch::new(user.len())
        };
        let buf = s.buf();
        Staged {
            user: *user,
            scratch: Some(s),
            buf,
        }
    }

    /// The contiguous bytes.
    pub fn buf(&self) -> Buf {
        self.buf
    }

    /// Write the bytes back to a non-contiguous user buffer.
    pub fn store(&self) {
        if let Some(s) = &self.scratch {
            self.user.unpack(0, s.bytes());
        }
    }
}

/// Heap memory owned by the library, usable as a `Buf`.
#[derive(Debug, Default)]
pub struct Scratch {
    mem: Vec<u8>,
}

impl Scratch {
    pub fn new(len: usize) -> Scratch {
        Scratch { mem: vec![0; len] }
    }

    /// A scratch holding a copy of `data`.
    pub fn from_bytes(data: &[u8]) -> Scratch {
        Scratch { mem: data.to_vec() }
    }

    /// A scratch holding a copy of `src`.
    pub fn copy_of(src: &Buf) -> Scratch {
        let mut s = Scratch::new(src.len());
        src.pack(0, &mut s.mem);
        s
    }

    pub fn len(&self) -> usize {
        self.mem.len()
    }

    pub fn is_empty(&self) -> bool {
        self.mem.is_empty()
    }

    /// The scratch as a `Buf` (valid until the scratch is dropped or resized).
    pub fn buf(&mut self) -> Buf {
        // The collectives keep the scratch alive until every operation using this Buf has
        // completed.
        // SAFETY: the vector's memory is valid and writable.
        unsafe { Buf::new(self.mem.as_mut_ptr() as usize, self.mem.len()) }
    }

    /// One instance of `ty` laid over the scratch (its displacements relative to the
    /// scratch's first byte), if it lies inside it.
    pub fn typed(&mut self, ty: &std::sync::Arc<super::Type>) -> Option<Buf> {
        let inside = ty.true_lb >= 0 && (ty.true_lb + ty.true_extent) as usize <= self.mem.len();
        if !inside || !ty.is_committed() {
            return None;
        }
        // The vector stays valid as long as the scratch, and its users keep the scratch alive.
        // SAFETY: every byte the type addresses lies inside the vector (checked above).
        Some(unsafe { Buf::typed(self.mem.as_mut_ptr() as usize, 1, ty) })
    }

    pub fn bytes(&self) -> &[u8] {
        &self.mem
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.mem
    }

    /// The scratch's bytes, kept.
    pub fn into_vec(self) -> Vec<u8> {
        self.mem
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_and_scratch() {
        let mut s = Scratch::new(8);
        let b = s.buf();
        b.slice(2, 3)
            .with_bytes_mut(|x| x.copy_from_slice(&[1, 2, 3]));
        assert_eq!(s.bytes(), &[0, 0, 1, 2, 3, 0, 0, 0]);
        let c = Scratch::copy_of(&b);
        assert_eq!(c.bytes(), s.bytes());
        with_pair(&b, &b, |x, y| {
            for (p, q) in x.iter().zip(y.iter_mut()) {
                *q += p;
            }
        });
        assert_eq!(s.bytes(), &[0, 0, 2, 4, 6, 0, 0, 0]);
    }
}
