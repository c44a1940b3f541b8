//! Accumulate-type operations by CPU atomics: the intrinsic path. On memory every process
//! reaches by address (allocated windows, created windows over shareable memory mapped in
//! every process: `peer_maps`), every accumulate-type operation (accumulate,
//! get-accumulate, fetch-and-op, compare-and-swap) on elements of 1, 2, 4 or 8 bytes at
//! aligned addresses updates each element with one atomic instruction (a native
//! read-modify-write for `MPI_SUM` on integers, the bitwise ops, `MPI_REPLACE` and
//! `MPI_NO_OP`, a compare-and-swap loop for every other op), with no lock and nothing from
//! the target's CPU. Every other case (larger elements, misaligned elements, memory reached
//! by cross-memory attach) runs under the target's accumulate mutex (`ops`). One location
//! with one datatype always takes the same path (same address, same element size), so
//! accumulates stay atomic with each other, element-wise, as MPI 4.1 §12.7.1 asks.

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering::*};

use super::access::Region;
use super::WinRma;
use crate::op::{OpKind, Reduction};

/// What an atomic element update does.
#[derive(Clone, Copy)]
pub enum AtomicOp<'a> {
    /// target = origin op target.
    Apply(&'a Reduction),
    /// target = origin.
    Replace,
    /// Read only.
    NoOp,
    /// target = origin where target equals these bytes.
    Cas(&'a [u8]),
}

/// Whether an element of `size` bytes is updated by one CPU atomic instruction.
pub fn lock_free(size: usize) -> bool {
    matches!(size, 1 | 2 | 4 | 8)
}

/// Update the element of `size` bytes at `addr` with `input` (`size` bytes; ignored for
/// `NoOp`), writing its previous value into `old` (`size` bytes).
///
/// # Safety
/// `addr` is valid, `size`-aligned memory of this process for `size` bytes (`lock_free(size)`),
/// which other threads and processes update only with atomics of the same size (the
/// accumulate rule above).
unsafe fn element(addr: usize, size: usize, op: AtomicOp, input: &[u8], old: &mut [u8]) {
    macro_rules! on {
        ($at:ty, $int:ty) => {{
            // SAFETY: the caller's contract: valid, aligned, shared only through atomics.
            let a = unsafe { <$at>::from_ptr(addr as *mut $int) };
            let val = |b: &[u8]| {
                let mut x = [0u8; std::mem::size_of::<$int>()];
                x.copy_from_slice(&b[..size]);
                <$int>::from_ne_bytes(x)
            };
            let prev = match op {
                AtomicOp::NoOp => a.load(Acquire),
                AtomicOp::Replace => a.swap(val(input), AcqRel),
                AtomicOp::Cas(cmp) => {
                    match a.compare_exchange(val(cmp), val(input), AcqRel, Acquire) {
                        Ok(v) | Err(v) => v,
                    }
                }
                AtomicOp::Apply(r) if r.native() == Some(OpKind::Sum) => {
                    a.fetch_add(val(input), AcqRel)
                }
                AtomicOp::Apply(r) if r.native() == Some(OpKind::Band) => {
                    a.fetch_and(val(input), AcqRel)
                }
                AtomicOp::Apply(r) if r.native() == Some(OpKind::Bor) => {
                    a.fetch_or(val(input), AcqRel)
                }
                AtomicOp::Apply(r) if r.native() == Some(OpKind::Bxor) => {
                    a.fetch_xor(val(input), AcqRel)
                }
                AtomicOp::Apply(r) => {
                    let mut cur = a.load(Relaxed);
                    loop {
                        let mut next = cur.to_ne_bytes();
                        r.apply(&input[..size], &mut next);
                        match a.compare_exchange_weak(
                            cur,
                            <$int>::from_ne_bytes(next),
                            AcqRel,
                            Relaxed,
                        ) {
                            Ok(_) => break cur,
                            Err(v) => cur = v,
                        }
                    }
                }
            };
            old[..size].copy_from_slice(&prev.to_ne_bytes());
        }};
    }
    match size {
        1 => on!(AtomicU8, u8),
        2 => on!(AtomicU16, u16),
        4 => on!(AtomicU32, u32),
        _ => on!(AtomicU64, u64),
    }
}

/// Update the `len` bytes at `addr`, whole elements of `size` bytes, element by element
/// (`element`): `input` holds `len` bytes (empty for `NoOp`), `old`, when given, receives
/// the `len` previous bytes.
///
/// # Safety
/// As `element`, for every element of the range.
pub(super) unsafe fn elements(
    addr: usize,
    len: usize,
    size: usize,
    op: AtomicOp,
    input: &[u8],
    mut old: Option<&mut [u8]>,
) {
    let zero = [0u8; 8];
    let mut scratch = [0u8; 8];
    // A plain loop: `step_by` divides by `size` to count its steps.
    let mut e = 0;
    while e < len {
        let inp = match op {
            AtomicOp::NoOp => &zero[..],
            _ => &input[e..e + size],
        };
        let out = match old.as_deref_mut() {
            Some(o) => &mut o[e..e + size],
            None => &mut scratch[..],
        };
        // SAFETY: the caller's contract, for the element at `addr + e`.
        unsafe { element(addr + e, size, op, inp, out) };
        e += size;
    }
}

impl WinRma {
    /// Whether accumulates on elements of `size` bytes take the intrinsic path on this
    /// window (at aligned displacements).
    pub fn intrinsic(&self, size: usize) -> bool {
        self.atomics && lock_free(size)
    }

    /// Run an accumulate-type operation on region `r` element by element with CPU atomics,
    /// when it is intrinsic (see the module's doc); false (nothing done) otherwise. `input`
    /// holds the packed origin elements (unused for `NoOp`); `old`, when given, receives the
    /// packed previous values.
    pub(super) fn atomic_update(
        &self,
        r: &Region,
        size: usize,
        op: AtomicOp,
        input: &[u8],
        mut old: Option<&mut [u8]>,
    ) -> bool {
        if !self.intrinsic(size) || r.is_empty() {
            return false;
        }
        let Some(pieces) = r.mapped_pieces() else {
            return false;
        };
        let mask = size - 1; // a power of two (`intrinsic`)
        if pieces
            .iter()
            .any(|&(addr, len)| addr & mask != 0 || len & mask != 0)
        {
            return false;
        }
        let mut at = 0;
        for (addr, len) in pieces {
            let inp = match op {
                AtomicOp::NoOp => &[][..],
                _ => &input[at..at + len],
            };
            let out = old.as_deref_mut().map(|o| &mut o[at..at + len]);
            // SAFETY: the region lies in this window's mapped memory (`mapped_pieces` gives
            // only `Reach::Mapped` regions, checked against the target's size when built),
            // its elements are `size`-aligned (checked above) and `lock_free`, and on this
            // window every accumulate-type access to them goes through here.
            unsafe { elements(addr, len, size, op, inp, out) };
            at += len;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::predefined::{Datatype, TypeClass};

    static LONG: Datatype = Datatype::predefined("MPI_LONG", 8, TypeClass::SignedInt);
    static DOUBLE: Datatype = Datatype::predefined("MPI_DOUBLE", 8, TypeClass::Float);

    #[test]
    fn elements_update_atomically_with_every_op_kind() {
        let sum = Reduction::predefined(OpKind::Sum, &LONG).unwrap();
        let max = Reduction::predefined(OpKind::Max, &DOUBLE).unwrap();
        let mut x: u64 = 5;
        let mut old = [0u8; 8];
        let addr = &mut x as *mut u64 as usize;
        // SAFETY: a live, aligned local reached only through these calls.
        unsafe {
            element(
                addr,
                8,
                AtomicOp::Apply(&sum),
                &7i64.to_ne_bytes(),
                &mut old,
            );
            assert_eq!(u64::from_ne_bytes(old), 5);
            element(addr, 8, AtomicOp::NoOp, &[0; 8], &mut old);
            assert_eq!(u64::from_ne_bytes(old), 12);
            element(
                addr,
                8,
                AtomicOp::Cas(&12u64.to_ne_bytes()),
                &3u64.to_ne_bytes(),
                &mut old,
            );
            element(
                addr,
                8,
                AtomicOp::Cas(&12u64.to_ne_bytes()),
                &9u64.to_ne_bytes(),
                &mut old,
            );
            assert_eq!(u64::from_ne_bytes(old), 3);
            element(addr, 8, AtomicOp::Replace, &2.5f64.to_ne_bytes(), &mut old);
            element(
                addr,
                8,
                AtomicOp::Apply(&max),
                &1.5f64.to_ne_bytes(),
                &mut old,
            );
            element(
                addr,
                8,
                AtomicOp::Apply(&max),
                &4.0f64.to_ne_bytes(),
                &mut old,
            );
            assert_eq!(f64::from_ne_bytes(old), 2.5);
        }
        assert_eq!(f64::from_bits(std::hint::black_box(x)), 4.0);
    }

    #[test]
    fn concurrent_sums_lose_nothing() {
        let sum = Reduction::predefined(OpKind::Sum, &LONG).unwrap();
        let max = Reduction::predefined(OpKind::Prod, &LONG).unwrap();
        let x = AtomicU64::new(0);
        let addr = x.as_ptr() as usize;
        std::thread::scope(|s| {
            for k in 0..4 {
                let (sum, max) = (&sum, &max);
                s.spawn(move || {
                    let mut old = [0u8; 8];
                    for _ in 0..10_000 {
                        // SAFETY: `x` outlives the scope; every access is atomic.
                        unsafe {
                            if k == 0 {
                                // Multiplying by 1 through the compare-and-swap loop.
                                element(
                                    addr,
                                    8,
                                    AtomicOp::Apply(max),
                                    &1i64.to_ne_bytes(),
                                    &mut old,
                                );
                            }
                            element(addr, 8, AtomicOp::Apply(sum), &1i64.to_ne_bytes(), &mut old);
                        }
                    }
                });
            }
        });
        assert_eq!(x.load(SeqCst), 40_000);
    }
}
