//! The direct path of small operations (issue #16): a put or get of contiguous bytes to
//! memory mapped in this process (allocated windows, memory-handle windows over shareable
//! memory, regions of dynamic windows found in `dyn_maps`) is one epoch-flag load, a range check and a copy, with no lock, no allocation and
//! no datatype engine. Accumulate-type operations on such memory take the same shortcut to
//! the CPU atomics of `atomic` where `ops` would choose that path for them (allocated
//! windows, created windows mapped everywhere, memory-handle windows and regions of dynamic
//! windows inside `MPI_Alloc_mem` blocks).
//! Anything else (and every error) takes the general path in `ops`.

use super::access::{AccPath, Reach};
use super::atomic::{elements, lock_free, word, AtomicOp, WordOp};
use super::dyn_maps::{Found, Keep};
use super::epoch::ACCESS;
use super::WinRma;
use crate::object::win::Flavor;

/// Copy `len` bytes from `src` to `dst`, which may overlap (`ptr::copy`). One element of a
/// predefined type (1, 2, 4, 8 or 16 bytes) moves as one load and one store, inline: an 8-byte
/// put or get is a handful of instructions, and a call to `memmove` would be most of them.
///
/// # Safety
/// `src` is readable and `dst` writable for `len` bytes.
#[inline(always)]
unsafe fn copy_bytes(src: *const u8, dst: *mut u8, len: usize) {
    // Unaligned accesses of exactly `len` bytes, the load before the store, so an overlap reads
    // the old bytes as `ptr::copy` does.
    // SAFETY: the caller's contract.
    unsafe {
        match len {
            1 => dst.write(src.read()),
            2 => dst
                .cast::<u16>()
                .write_unaligned(src.cast::<u16>().read_unaligned()),
            4 => dst
                .cast::<u32>()
                .write_unaligned(src.cast::<u32>().read_unaligned()),
            8 => dst
                .cast::<u64>()
                .write_unaligned(src.cast::<u64>().read_unaligned()),
            16 => dst
                .cast::<u128>()
                .write_unaligned(src.cast::<u128>().read_unaligned()),
            _ => std::ptr::copy(src, dst, len),
        }
    }
}

impl WinRma {
    /// The address here of `len` bytes at displacement `disp` of target `t`, when they can be
    /// copied directly: an access epoch to `t` is open, the memory is mapped here, the bytes
    /// lie inside the target's window memory and (for a memory-handle window) the handle is
    /// live; with whether accumulates on them take CPU atomics (`AccPath::Atomics`). `None`:
    /// take the general path. The `Keep` holds a dynamic window's mapping.
    #[inline]
    fn direct(&self, t: u32, disp: i64, len: usize) -> Option<(usize, Keep, bool)> {
        self.serve_far();
        let p = self.peers.get(t as usize)?;
        if disp < 0 || !self.epoch_allows(t, ACCESS) {
            return None;
        }
        if self.flavor == Flavor::Dynamic {
            if self.is_far(t) {
                return None;
            }
            // The displacement is the address; inside a region mapped here, or nothing. Never
            // from a table being rewritten (`find_attached` answers `Process` then).
            return match self.find_attached(t, disp as usize, len, false) {
                Found::Mapped {
                    delta,
                    keep,
                    atomic,
                } if len > 0 => Some(((disp as usize).wrapping_add(delta), keep, atomic)),
                _ => None,
            };
        }
        let Reach::Mapped(base) = self.reach(t) else {
            return None;
        };
        let off = (disp as u64).checked_mul(p.disp_unit as u64)?;
        if off.checked_add(len as u64)? > p.size {
            return None;
        }
        if let Some(h) = &self.handle {
            if !h.live(&self.area) {
                return None;
            }
        }
        Some((
            base + off as usize,
            None,
            self.acc_path() == AccPath::Atomics,
        ))
    }

    /// `MPI_Put` of contiguous bytes by the direct path; false: nothing done, take the
    /// general path.
    #[inline]
    pub fn put_direct(&self, t: u32, disp: i64, data: &[u8]) -> bool {
        let _op = self.begin_op();
        match self.direct(t, disp, data.len()) {
            Some((addr, _keep, _)) => {
                // Puts from one origin land in issue order (`mpi_win_order`): a store fence
                // before each copy (free on x86, a barrier on weaker memory models).
                std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
                // `direct` checked that the `data.len()` bytes at `addr` lie in window memory
                // mapped in this process for as long as the window lives (for a dynamic window,
                // an attached region mapped while `_keep` lives).
                // SAFETY: in mapped window memory (above); `copy_bytes` allows the origin to overlap it.
                unsafe { copy_bytes(data.as_ptr(), addr as *mut u8, data.len()) };
                true
            }
            None => false,
        }
    }

    /// `MPI_Get` into contiguous bytes by the direct path; false: nothing done.
    #[inline]
    pub fn get_direct(&self, t: u32, disp: i64, out: &mut [u8]) -> bool {
        let _op = self.begin_op();
        match self.direct(t, disp, out.len()) {
            Some((addr, _keep, _)) => {
                // SAFETY: as in `put_direct`, reading.
                unsafe { copy_bytes(addr as *const u8, out.as_mut_ptr(), out.len()) };
                true
            }
            None => false,
        }
    }

    /// An accumulate-type operation (accumulate, get-accumulate, fetch-and-op,
    /// compare-and-swap) on the `len` bytes at displacement `disp` of target `t`, whole
    /// elements of `size` bytes, by CPU atomics: `input` holds `len` bytes (empty for
    /// `NoOp`), `old`, when given, receives the previous `len` bytes. Only where `ops` would
    /// take the same intrinsic path (see `atomic`), so every access to an element stays on
    /// one path; false: nothing done, take the general path.
    #[inline]
    pub fn atomic_direct(
        &self,
        t: u32,
        disp: i64,
        size: usize,
        op: AtomicOp,
        input: &[u8],
        old: Option<&mut [u8]>,
    ) -> bool {
        let len = match (&op, &old) {
            (AtomicOp::NoOp, Some(o)) => o.len(),
            _ => input.len(),
        };
        // `intrinsic` admits powers of two only, so masks stand for `%` (no division).
        let mask = size.wrapping_sub(1);
        if !lock_free(size) || len == 0 || len & mask != 0 {
            return false;
        }
        if old.as_ref().is_some_and(|o| o.len() != len) {
            return false;
        }
        let _op = self.begin_op();
        match self.direct(t, disp, len) {
            Some((addr, _keep, true)) if addr & mask == 0 => {
                // `direct` checked that the `len` bytes at `addr` lie in window memory mapped here
                // (for as long as `_keep` lives); every accumulate-type access to them, in every
                // process, takes CPU atomics of that size (here or in `ops`: `AccPath::Atomics`).
                // SAFETY: whole `size`-aligned mapped elements of a `lock_free` size (`intrinsic`).
                unsafe { elements(addr, len, size, op, input, old) };
                true
            }
            _ => false,
        }
    }

    /// One element of `size` bytes at displacement `disp` of target `t` updated by the one
    /// atomic instruction `op` with `val` (its low `size` bytes): the element's previous
    /// value, zero-extended. The fast form of `atomic_direct` for single elements (a
    /// fetch-and-op, a compare-and-swap, a one-element accumulate), with values in registers;
    /// the same memory and the same instructions, so it mixes with every other access path.
    /// `None`: nothing done, take the general path.
    #[inline]
    pub fn word_direct(&self, t: u32, disp: i64, size: usize, op: WordOp, val: u64) -> Option<u64> {
        if !lock_free(size) {
            return None;
        }
        let _op = self.begin_op();
        let (addr, _keep, atomic) = self.direct(t, disp, size)?;
        if !atomic || addr & (size - 1) != 0 {
            return None;
        }
        // As in `atomic_direct`: `direct` checked that the `size` bytes at `addr` are mapped window
        // memory.
        // SAFETY: aligned (above), of a `lock_free` size (`intrinsic`), in mapped window memory.
        Some(unsafe { word(addr, size, op, val) })
    }
}

#[cfg(test)]
mod tests {
    use super::copy_bytes;

    /// Every length the inline forms take and the ones around them, at every misalignment,
    /// forwards, backwards and in place: the same bytes as `ptr::copy`.
    #[test]
    fn copy_bytes_moves_what_ptr_copy_moves() {
        let pattern: Vec<u8> = (0..64u8)
            .map(|i| i.wrapping_mul(37).wrapping_add(11))
            .collect();
        for len in 0..=24usize {
            for from in 0..8usize {
                for to in 0..16usize {
                    let (mut ours, mut theirs) = (pattern.clone(), pattern.clone());
                    let (o, t) = (ours.as_mut_ptr(), theirs.as_mut_ptr());
                    // In bounds: `from`, `to` < 16 and `len` <= 24 of 64 bytes; overlaps are
                    // what both copies allow.
                    // SAFETY: in bounds (above).
                    unsafe {
                        copy_bytes(o.add(from), o.add(to), len);
                        std::ptr::copy(t.add(from), t.add(to), len);
                    }
                    assert_eq!(ours, theirs, "len {len} from {from} to {to}");
                }
            }
        }
    }
}
