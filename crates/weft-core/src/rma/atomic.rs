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

use super::access::{AccPath, Region};
use super::lanes;
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

/// A single-instruction update of one element held in a register (`word`): what a native
/// read-modify-write, an exchange, a load or a compare-and-swap does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum WordOp {
    /// Integer addition (wrapping, as two's complement sums of any signedness).
    Add,
    And,
    Or,
    Xor,
    /// `MPI_REPLACE`.
    Swap,
    /// `MPI_NO_OP`.
    Load,
    /// Store the value where the element equals this one (the low `size` bytes).
    Cas(u64),
}

/// Apply `op` with value `val` (its low `size` bytes) to the element of `size` bytes at
/// `addr` with one atomic instruction; the element's previous value, zero-extended.
///
/// # Safety
/// `addr` is valid, `size`-aligned memory of this process for `size` bytes (`lock_free(size)`),
/// which other threads and processes update only with atomics of the same size (the
/// accumulate rule above).
#[inline(always)]
pub(super) unsafe fn word(addr: usize, size: usize, op: WordOp, val: u64) -> u64 {
    macro_rules! on {
        ($at:ty, $int:ty) => {{
            // SAFETY: the caller's contract: valid, aligned, shared only through atomics.
            let a = unsafe { <$at>::from_ptr(addr as *mut $int) };
            let v = val as $int;
            (match op {
                WordOp::Load => a.load(Acquire),
                WordOp::Swap => a.swap(v, AcqRel),
                WordOp::Add => a.fetch_add(v, AcqRel),
                WordOp::And => a.fetch_and(v, AcqRel),
                WordOp::Or => a.fetch_or(v, AcqRel),
                WordOp::Xor => a.fetch_xor(v, AcqRel),
                WordOp::Cas(cmp) => match a.compare_exchange(cmp as $int, v, AcqRel, Acquire) {
                    Ok(x) | Err(x) => x,
                },
            }) as u64
        }};
    }
    match size {
        1 => on!(AtomicU8, u8),
        2 => on!(AtomicU16, u16),
        4 => on!(AtomicU32, u32),
        _ => on!(AtomicU64, u64),
    }
}

/// The element of `size` bytes (at most 8) in `b`, zero-extended.
fn load_ne(b: &[u8], size: usize) -> u64 {
    let mut x = [0u8; 8];
    let at = if cfg!(target_endian = "big") {
        8 - size
    } else {
        0
    };
    x[at..at + size].copy_from_slice(&b[..size]);
    u64::from_ne_bytes(x)
}

/// Store the low `size` bytes of `v` into `b` as an element of `size` bytes.
fn store_ne(b: &mut [u8], size: usize, v: u64) {
    let at = if cfg!(target_endian = "big") {
        8 - size
    } else {
        0
    };
    b[..size].copy_from_slice(&v.to_ne_bytes()[at..at + size]);
}

/// The single instruction `op` is on elements of `size` bytes (`word`), or the reduction a
/// compare-and-swap loop applies when it is none.
fn word_of<'a>(op: AtomicOp<'a>, size: usize) -> Result<WordOp, &'a Reduction> {
    Ok(match op {
        AtomicOp::NoOp => WordOp::Load,
        AtomicOp::Replace => WordOp::Swap,
        AtomicOp::Cas(cmp) => WordOp::Cas(load_ne(cmp, size)),
        AtomicOp::Apply(r) => match r.native() {
            Some(OpKind::Sum) => WordOp::Add,
            Some(OpKind::Band) => WordOp::And,
            Some(OpKind::Bor) => WordOp::Or,
            Some(OpKind::Bxor) => WordOp::Xor,
            _ => return Err(r),
        },
    })
}

/// Update the element of `size` bytes at `addr` with `input` (`size` bytes; ignored for
/// `NoOp`), writing its previous value into `old` (`size` bytes).
///
/// # Safety
/// As `word`.
unsafe fn element(addr: usize, size: usize, op: AtomicOp, input: &[u8], old: &mut [u8]) {
    let prev = match word_of(op, size) {
        Ok(w) => {
            let val = if w == WordOp::Load {
                0
            } else {
                load_ne(input, size)
            };
            // SAFETY: the caller's contract.
            unsafe { word(addr, size, w, val) }
        }
        Err(r) => {
            macro_rules! on {
                ($at:ty, $int:ty) => {{
                    // SAFETY: the caller's contract: valid, aligned, shared only through atomics.
                    let a = unsafe { <$at>::from_ptr(addr as *mut $int) };
                    let mut cur = a.load(Relaxed);
                    loop {
                        let mut next = cur.to_ne_bytes();
                        r.apply(&input[..size], &mut next);
                        let next = <$int>::from_ne_bytes(next);
                        match a.compare_exchange_weak(cur, next, AcqRel, Relaxed) {
                            Ok(_) => break cur as u64,
                            Err(v) => cur = v,
                        }
                    }
                }};
            }
            match size {
                1 => on!(AtomicU8, u8),
                2 => on!(AtomicU16, u16),
                4 => on!(AtomicU32, u32),
                _ => on!(AtomicU64, u64),
            }
        }
    };
    store_ne(old, size, prev);
}

/// Update the `len` bytes at `addr`, whole elements of `size` bytes: `input` holds `len`
/// bytes (empty for `NoOp`), `old`, when given, receives the `len` previous bytes. Elements
/// in whole aligned 8-byte words go a word at a time (`wide`), the unaligned head and tail
/// (of elements below 8 bytes) element by element (`element`).
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
    // Bytes `0..head` element by element up to the first 8-byte boundary, `head..end` in
    // whole words, `end..len` element by element.
    let (head, end) = if wide_ok(op, size) {
        let head = (addr.wrapping_neg() & 7).min(len);
        (head, head + ((len - head) & !7))
    } else {
        (len, len)
    };
    let part = |lo: usize, hi: usize| match op {
        AtomicOp::NoOp => &[][..],
        _ => &input[lo..hi],
    };
    // `head..end` is a whole number of aligned words of whole elements (8 is a multiple of
    // `size`).
    // SAFETY: the caller's contract, for the elements of each part.
    unsafe {
        one_by_one(addr, head, size, op, part(0, head), sub(&mut old, 0, head));
        if end > head {
            let (inp, out) = (part(head, end), sub(&mut old, head, end));
            wide(addr + head, end - head, size, op, inp, out);
        }
        let (inp, out) = (part(end, len), sub(&mut old, end, len));
        one_by_one(addr + end, len - end, size, op, inp, out);
    }
}

/// Bytes `lo..hi` of an optional output.
fn sub<'a>(old: &'a mut Option<&mut [u8]>, lo: usize, hi: usize) -> Option<&'a mut [u8]> {
    old.as_deref_mut().map(|o| &mut o[lo..hi])
}

/// Whether a word of elements of `size` bytes can be updated as a whole: every op but
/// compare-and-swap (one element) and user functions (not element-wise by contract here).
fn wide_ok(op: AtomicOp, size: usize) -> bool {
    match op {
        AtomicOp::NoOp | AtomicOp::Replace => true,
        AtomicOp::Apply(r) => !r.is_user() && r.extent == size,
        AtomicOp::Cas(_) => false,
    }
}

/// `elements` one element at a time.
///
/// # Safety
/// As `element`, for every element of the range.
unsafe fn one_by_one(
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

/// `elements` on whole 8-byte words of elements of `size` bytes (`wide_ok`), one 64-bit
/// atomic per word computing every lane (`lanes`): a native read-modify-write for the
/// bitwise ops, `MPI_REPLACE`, `MPI_NO_OP` and `MPI_SUM` on 8-byte integers; a
/// compare-and-swap loop with lane-wise addition for `MPI_SUM` on smaller integers and with
/// the op's element-wise kernel for every other op. Each element is still updated atomically (the word's atomic covers it whole), and
/// the 64-bit atomics are atomic with the element-sized ones that other calls take on the
/// same bytes (the hardware's locked read-modify-writes and exclusive monitors work on
/// whole cache lines).
///
/// # Safety
/// `addr` and `len` are multiples of 8; otherwise as `element`, for every element.
unsafe fn wide(
    addr: usize,
    len: usize,
    size: usize,
    op: AtomicOp,
    input: &[u8],
    old: Option<&mut [u8]>,
) {
    debug_assert!(addr & 7 == 0 && len & 7 == 0);
    // SAFETY: the caller's contract, for each aligned word the closures below are given.
    unsafe {
        match op {
            AtomicOp::NoOp => each_word(addr, len, input, old, |a, _| word(a, 8, WordOp::Load, 0)),
            AtomicOp::Replace => {
                each_word(addr, len, input, old, |a, v| word(a, 8, WordOp::Swap, v))
            }
            AtomicOp::Apply(r) => match word_of(op, size) {
                Ok(WordOp::Add) if size < 8 => each_word(addr, len, input, old, |a, v| {
                    cas_word(a, |cur| lanes::add(cur, v, size))
                }),
                Ok(w) => each_word(addr, len, input, old, |a, v| word(a, 8, w, v)),
                Err(_) => each_word(addr, len, input, old, |a, v| {
                    cas_word(a, |cur| {
                        let mut next = cur.to_ne_bytes();
                        r.apply(&v.to_ne_bytes(), &mut next);
                        u64::from_ne_bytes(next)
                    })
                }),
            },
            AtomicOp::Cas(_) => unreachable!("compare-and-swap is one element (`wide_ok`)"),
        }
    }
}

/// Run `f(word address, input word)` (the input word 0 where `input` is empty) on each
/// word of `addr..addr + len`, storing what it returns (the previous value) in `old`. Without
/// `old` the value is dropped, so a bitwise op compiles to one locked instruction rather than
/// the compare-and-swap loop that fetching its previous value takes on x86.
#[inline(always)]
fn each_word(
    addr: usize,
    len: usize,
    input: &[u8],
    old: Option<&mut [u8]>,
    f: impl Fn(usize, u64) -> u64,
) {
    let val = |e: usize| match input.get(e..e + 8) {
        Some(b) => u64::from_ne_bytes(b.try_into().expect("8 bytes")),
        None => 0,
    };
    match old {
        Some(o) => {
            for (e, out) in (0..len).step_by(8).zip(o.chunks_exact_mut(8)) {
                out.copy_from_slice(&f(addr + e, val(e)).to_ne_bytes());
            }
        }
        None => {
            for e in (0..len).step_by(8) {
                f(addr + e, val(e));
            }
        }
    }
}

/// Replace the aligned word at `addr` by `next(current)` with a compare-and-swap loop; the
/// previous value.
///
/// # Safety
/// As `word` with size 8.
#[inline(always)]
unsafe fn cas_word(addr: usize, next: impl Fn(u64) -> u64) -> u64 {
    // SAFETY: the caller's contract: valid, aligned, shared only through atomics.
    let a = unsafe { AtomicU64::from_ptr(addr as *mut u64) };
    let mut cur = a.load(Relaxed);
    loop {
        match a.compare_exchange_weak(cur, next(cur), AcqRel, Relaxed) {
            Ok(_) => return cur,
            Err(v) => cur = v,
        }
    }
}

/// Whether every piece starts and ends on an element boundary (`size` a power of two).
pub(super) fn aligned(pieces: &[(usize, usize)], size: usize) -> bool {
    let mask = size - 1;
    pieces
        .iter()
        .all(|&(addr, len)| addr & mask == 0 && len & mask == 0)
}

impl WinRma {
    /// Whether accumulates on elements of `size` bytes take the intrinsic path everywhere on
    /// this window (at aligned displacements). On a dynamic window it depends on the region
    /// (`dyn_maps`): false, as nothing is promised for the window as a whole.
    pub fn intrinsic(&self, size: usize) -> bool {
        lock_free(size) && self.acc_path() == AccPath::Atomics
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
        if !lock_free(size) || r.acc != AccPath::Atomics || r.is_empty() {
            return false;
        }
        let Some(pieces) = r.mapped_pieces() else {
            return false;
        };
        if !aligned(&pieces, size) {
            return false;
        }
        let mut at = 0;
        for (addr, len) in pieces {
            let inp = match op {
                AtomicOp::NoOp => &[][..],
                _ => &input[at..at + len],
            };
            let out = old.as_deref_mut().map(|o| &mut o[at..at + len]);
            // `mapped_pieces` gives only `Reach::Mapped` regions, checked against the target's size
            // (or found inside a mapped region) when built; every accumulate-type access to
            // these elements, in every process, goes through here (`AccPath::Atomics`).
            // SAFETY: the region is mapped window memory, `size`-aligned (above) and `lock_free`.
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
    use crate::rma::lanes::Rng;

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
    #[cfg(target_endian = "little")]
    fn words_truncate_and_zero_extend() {
        let mut x: u64 = 0x1122_3344_5566_77fe;
        let addr = &mut x as *mut u64 as usize;
        // SAFETY: a live, aligned local reached only through these calls.
        unsafe {
            // The low byte (little-endian) wraps; the other bytes stay as they were.
            assert_eq!(word(addr, 1, WordOp::Add, 0x103), 0xfe);
            assert_eq!(word(addr, 1, WordOp::Load, 0), 0x01);
            assert_eq!(word(addr, 2, WordOp::Xor, 0xffff), 0x7701);
            assert_eq!(word(addr, 4, WordOp::Cas(0), 5), 0x5566_88fe);
            assert_eq!(word(addr, 4, WordOp::Cas(0x5566_88fe), 5), 0x5566_88fe);
            assert_eq!(
                word(addr, 8, WordOp::Or, 0xf000_0000_0000_0000),
                0x1122_3344_0000_0005
            );
            assert_eq!(
                word(addr, 8, WordOp::And, 0xff00_0000_ffff_ffff),
                0xf122_3344_0000_0005
            );
            assert_eq!(word(addr, 8, WordOp::Swap, u64::MAX), 0xf100_0000_0000_0005);
        }
        assert_eq!(std::hint::black_box(x), u64::MAX);
        let mut out = [0u8; 2];
        store_ne(&mut out, 2, 0xabcd);
        assert_eq!(load_ne(&out, 2), 0xabcd);
    }

    /// A byte, biased towards the values where lanes overflow (0, 1, 0x7f, 0x80, 0xff).
    fn byte(rng: &mut Rng) -> u8 {
        const EDGES: [u8; 5] = [0, 1, 0x7f, 0x80, 0xff];
        let x = rng.next();
        match x % 3 {
            0 => EDGES[(x >> 8) as usize % 5],
            _ => (x >> 16) as u8,
        }
    }

    static SMALL: [Datatype; 11] = [
        Datatype::predefined("MPI_CHAR", 1, TypeClass::Char),
        Datatype::predefined("MPI_SIGNED_CHAR", 1, TypeClass::SignedInt),
        Datatype::predefined("MPI_UNSIGNED_CHAR", 1, TypeClass::UnsignedInt),
        Datatype::predefined("MPI_BYTE", 1, TypeClass::Byte),
        Datatype::predefined("MPI_C_BOOL", 1, TypeClass::Logical),
        Datatype::predefined("MPI_SHORT", 2, TypeClass::SignedInt),
        Datatype::predefined("MPI_UNSIGNED_SHORT", 2, TypeClass::UnsignedInt),
        Datatype::predefined("MPI_INT", 4, TypeClass::SignedInt),
        Datatype::predefined("MPI_UNSIGNED", 4, TypeClass::UnsignedInt),
        Datatype::predefined("MPI_FLOAT", 4, TypeClass::Float),
        Datatype::predefined("MPI_INT64_T", 8, TypeClass::SignedInt),
    ];

    const OPS: [OpKind; 12] = [
        OpKind::Max,
        OpKind::Min,
        OpKind::Sum,
        OpKind::Prod,
        OpKind::Land,
        OpKind::Band,
        OpKind::Lor,
        OpKind::Bor,
        OpKind::Lxor,
        OpKind::Bxor,
        OpKind::Replace,
        OpKind::NoOp,
    ];

    /// Every small type and op, over spans of every alignment and length inside a buffer of
    /// words: `elements` (word-wide in the aligned middle) leaves the same bytes and returns
    /// the same previous values as the scalar reference (the op's kernel on plain bytes).
    #[test]
    fn word_wide_updates_match_the_scalar_reference() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        const WORDS: usize = 8;
        for dt in &SMALL {
            let size = dt.size;
            for kind in OPS {
                let Ok(r) = Reduction::predefined(kind, dt) else {
                    continue;
                };
                let op = match kind {
                    OpKind::Replace => AtomicOp::Replace,
                    OpKind::NoOp => AtomicOp::NoOp,
                    _ => AtomicOp::Apply(&r),
                };
                for _ in 0..300 {
                    let mut mem = [0u64; WORDS];
                    let bytes: Vec<u8> = (0..WORDS * 8).map(|_| byte(&mut rng)).collect();
                    for (w, b) in mem.iter_mut().zip(bytes.chunks_exact(8)) {
                        *w = u64::from_ne_bytes(b.try_into().unwrap());
                    }
                    let elems = WORDS * 8 / size;
                    let first = rng.next() as usize % elems;
                    let count = rng.next() as usize % (elems - first + 1);
                    let (at, len) = (first * size, count * size);
                    let input: Vec<u8> = match op {
                        AtomicOp::NoOp => Vec::new(),
                        _ => (0..len).map(|_| byte(&mut rng)).collect(),
                    };
                    let mut old = vec![0xa5u8; len];
                    let addr = mem.as_mut_ptr() as usize + at;
                    // SAFETY: a live, aligned local buffer reached only through this call.
                    unsafe { elements(addr, len, size, op, &input, Some(&mut old)) };
                    let mut want = bytes.clone();
                    let span = &mut want[at..at + len];
                    assert_eq!(old, span, "{} {:?} at {at} len {len}: old", dt.name, kind);
                    if !matches!(op, AtomicOp::NoOp) {
                        r.apply(&input, span);
                    }
                    let got: Vec<u8> = mem.iter().flat_map(|w| w.to_ne_bytes()).collect();
                    assert_eq!(got, want, "{} {:?} at {at} len {len}", dt.name, kind);
                }
            }
        }
    }

    /// Several threads adding into the same bytes, half of them at an offset that splits
    /// every word between the byte-wise head/tail path and the word-wide middle: the two
    /// paths stay atomic with each other and no addition is lost.
    #[test]
    fn word_wide_and_element_sums_mix_without_loss() {
        let char_sum = Reduction::predefined(OpKind::Sum, &SMALL[0]).unwrap();
        let mem: Vec<AtomicU64> = (0..5).map(|_| AtomicU64::new(0)).collect();
        let base = mem.as_ptr() as usize;
        const ROUNDS: usize = 2_000;
        std::thread::scope(|s| {
            for k in 0..4usize {
                let r = &char_sum;
                s.spawn(move || {
                    // Bytes 3..35 (head 5 bytes, 3 words, tail 3 bytes) or bytes 8..40.
                    let (at, len) = if k % 2 == 0 { (3, 32) } else { (8, 32) };
                    let ones = vec![1u8; len];
                    for _ in 0..ROUNDS {
                        // SAFETY: `mem` outlives the scope; every access is atomic.
                        unsafe { elements(base + at, len, 1, AtomicOp::Apply(r), &ones, None) };
                    }
                });
            }
        });
        let got: Vec<u8> = mem
            .iter()
            .flat_map(|w| w.load(SeqCst).to_ne_bytes())
            .collect();
        for (i, &b) in got.iter().enumerate() {
            let hits = (3..35).contains(&i) as usize * 2 + (8..40).contains(&i) as usize * 2;
            assert_eq!(b, (hits * ROUNDS) as u8, "byte {i}");
        }
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
