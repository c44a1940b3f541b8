//! Memory handles (seed 004 §4): explicit lifetimes for memory attached to a dynamic window.
//! `MPIX_Memhandle_create` registers a region in one of the owner's `MEMHANDLE_SLOTS` slots of
//! the window's segment (`RankExtra::memhandle`: `generation << 1 | live`) and describes it
//! in `HANDLE_BYTES` bytes; `MPIX_Win_from_memhandle` checks those bytes and builds a view of
//! the dynamic window whose one target is that region (its size and displacement unit,
//! range-checked like a created window); `MPIX_Memhandle_release` clears the slot's live bit.
//! Every operation on a memory-handle window first loads the slot: a released handle is
//! `MPI_ERR_RMA_ATTACH` and nothing is touched. The bytes carry a checksum and the window's
//! key, so garbage, a handle of another window and a handle of another rank are refused.
//!
//! A region inside a shareable block (`transport::shm::shareable`: `MPI_Alloc_mem` memory)
//! also carries the block's descriptor: the handle window maps the block and reaches the
//! region by address (the direct path of `direct`); other regions are reached by
//! cross-memory attach, like the dynamic window itself.
//!
//! Handle bytes (little endian): magic 0..4, window key 4..8, rank 8..12, pid 12..16, base
//! 16..24, size 24..32, offset in the shareable block 32..40, descriptor + 1 (0: none)
//! 40..44, slot 44..46, slot state 48..56, checksum of 0..56 at 56..64.
#![forbid(unsafe_code)]

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::WinRma;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::object::win::Flavor;
use crate::transport::shm::shareable::{self, PeerMapping};
use crate::transport::shm::win_area::{MemhandleAt, WinArea, MEMHANDLE_SLOTS};

/// Bytes of a memory handle (`MPIX_MAX_MEMHANDLE_SIZE` is at least this).
pub const HANDLE_BYTES: usize = 64;

const MAGIC: &[u8; 4] = b"WMH1";

/// What a memory-handle window keeps of its handle.
#[derive(Clone, Debug)]
pub struct HandleView {
    pub target: u32,
    /// The slot's place in the window segment.
    slot: MemhandleAt,
    /// The slot's state while the handle is live.
    state: u64,
    /// The target's shareable block, mapped here.
    mapping: Option<Arc<PeerMapping>>,
    /// Whether the region lies in a shareable block (accumulates on it take CPU atomics in
    /// every process that reaches it by address: `WinRma::acc_path`).
    shared: bool,
}

impl HandleView {
    /// Whether the handle is still live (not released).
    #[inline]
    pub fn live(&self, area: &WinArea) -> bool {
        area.memhandle_state(self.slot).load(Ordering::Acquire) == self.state
    }

    /// Whether the region is mapped in this process (reached by address).
    pub fn is_mapped(&self) -> bool {
        self.mapping.is_some()
    }

    /// Whether the region lies in a shareable block of its owner.
    pub fn is_shared(&self) -> bool {
        self.shared
    }
}

/// A handle's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Handle {
    key: u32,
    rank: u32,
    pid: i32,
    base: u64,
    size: u64,
    /// The region's offset in its shareable block and the block's descriptor.
    shared: Option<(u64, i32)>,
    slot: u16,
    state: u64,
}

fn checksum(b: &[u8]) -> u64 {
    // FNV-1a: enough to tell a handle from garbage (not a security boundary).
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A key for a window, the same in every process of it (from its segment's name).
pub fn window_key(name: &[u8]) -> u32 {
    checksum(name) as u32 | 1
}

impl Handle {
    fn encode(&self) -> [u8; HANDLE_BYTES] {
        let mut b = [0u8; HANDLE_BYTES];
        let (offset, fd) = self.shared.map_or((0, 0), |(o, fd)| (o, fd as u32 + 1));
        b[0..4].copy_from_slice(MAGIC);
        b[4..8].copy_from_slice(&self.key.to_le_bytes());
        b[8..12].copy_from_slice(&self.rank.to_le_bytes());
        b[12..16].copy_from_slice(&self.pid.to_le_bytes());
        b[16..24].copy_from_slice(&self.base.to_le_bytes());
        b[24..32].copy_from_slice(&self.size.to_le_bytes());
        b[32..40].copy_from_slice(&offset.to_le_bytes());
        b[40..44].copy_from_slice(&fd.to_le_bytes());
        b[44..46].copy_from_slice(&self.slot.to_le_bytes());
        b[48..56].copy_from_slice(&self.state.to_le_bytes());
        let sum = checksum(&b[..56]);
        b[56..64].copy_from_slice(&sum.to_le_bytes());
        b
    }

    fn decode(b: &[u8], func: &str) -> MpiResult<Handle> {
        let bad = || {
            MpiError::new(
                ErrorClass::Arg,
                format!("{func}(memhandle): not a memory handle made by MPIX_Memhandle_create"),
            )
        };
        if b.len() < HANDLE_BYTES || &b[0..4] != MAGIC {
            return Err(bad());
        }
        let w8 = |r: std::ops::Range<usize>| u64::from_le_bytes(b[r].try_into().expect("8"));
        let w4 = |r: std::ops::Range<usize>| u32::from_le_bytes(b[r].try_into().expect("4"));
        if w8(56..64) != checksum(&b[..56]) {
            return Err(bad());
        }
        let fd = w4(40..44);
        let h = Handle {
            key: w4(4..8),
            rank: w4(8..12),
            pid: w4(12..16) as i32,
            base: w8(16..24),
            size: w8(24..32),
            shared: (fd != 0).then(|| (w8(32..40), (fd - 1) as i32)),
            slot: u16::from_le_bytes([b[44], b[45]]),
            state: w8(48..56),
        };
        if h.slot as usize >= MEMHANDLE_SLOTS || h.state & 1 == 0 {
            return Err(bad());
        }
        Ok(h)
    }
}

fn released(func: &str) -> MpiError {
    MpiError::new(
        ErrorClass::RmaAttach,
        format!("{func}: the memory handle was released (MPIX_Memhandle_release); its memory is no longer exposed"),
    )
}

impl WinRma {
    fn require_dynamic(&self, func: &str) -> MpiResult<()> {
        if self.flavor != Flavor::Dynamic || self.handle.is_some() {
            return Err(MpiError::new(
                ErrorClass::RmaFlavor,
                format!(
                    "{func}(dynwin): memory handles belong to a window from MPI_Win_create_dynamic"
                ),
            ));
        }
        Ok(())
    }

    /// Decode a handle made for this window (`MPI_ERR_ARG` otherwise).
    fn handle_of(&self, bytes: &[u8], func: &str) -> MpiResult<Handle> {
        let h = Handle::decode(bytes, func)?;
        if h.key != self.key || h.rank as usize >= self.peers.len() {
            return Err(MpiError::new(
                ErrorClass::Arg,
                format!("{func}(memhandle): the handle was made for another window"),
            ));
        }
        if self.peers[h.rank as usize].pid != h.pid {
            return Err(MpiError::new(
                ErrorClass::Arg,
                format!("{func}(memhandle): the handle names a process that is not rank {} of the window", h.rank),
            ));
        }
        Ok(h)
    }

    /// `MPIX_Memhandle_create`: register `size` bytes at `base` (inside memory attached to
    /// this dynamic window: the caller checked) and return the handle's bytes.
    pub fn memhandle_create(
        &self,
        base: usize,
        size: u64,
        func: &str,
    ) -> MpiResult<[u8; HANDLE_BYTES]> {
        self.require_dynamic(func)?;
        let slots = &self.area.extra(self.me).memhandle;
        for (i, s) in slots.iter().enumerate() {
            let cur = s.load(Ordering::Acquire);
            if cur & 1 != 0 {
                continue;
            }
            let next = ((cur >> 1) + 1) << 1 | 1;
            if s.compare_exchange(cur, next, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                let h = Handle {
                    key: self.key,
                    rank: self.me,
                    pid: self.peers[self.me as usize].pid,
                    base: base as u64,
                    size,
                    shared: shareable::find(base, size).map(|(fd, off)| (off, fd)),
                    slot: i as u16,
                    state: next,
                };
                return Ok(h.encode());
            }
        }
        Err(MpiError::new(
            ErrorClass::NoMem,
            format!("{func}: all {MEMHANDLE_SLOTS} memory handles of this process on the window are in use (release one first)"),
        ))
    }

    /// `MPIX_Memhandle_release`: end a handle this process made.
    pub fn memhandle_release(&self, bytes: &[u8], func: &str) -> MpiResult<()> {
        self.require_dynamic(func)?;
        let h = self.handle_of(bytes, func)?;
        if h.rank != self.me {
            return Err(MpiError::new(
                ErrorClass::Arg,
                format!(
                    "{func}(memhandle): the handle belongs to rank {}, only its maker releases it",
                    h.rank
                ),
            ));
        }
        let slot = &self.area.extra(self.me).memhandle[h.slot as usize];
        slot.compare_exchange(h.state, h.state & !1, Ordering::AcqRel, Ordering::Relaxed)
            .map(|_| ())
            .map_err(|_| {
                MpiError::new(
                    ErrorClass::Arg,
                    format!("{func}(memhandle): the handle was released already"),
                )
            })
    }

    /// `MPIX_Win_from_memhandle`: a view of this dynamic window whose one target is the
    /// handle's region, `size` bytes of it in units of `disp_unit`.
    pub fn from_memhandle(
        &self,
        bytes: &[u8],
        size: u64,
        disp_unit: u32,
        target: u32,
        func: &str,
    ) -> MpiResult<WinRma> {
        self.require_dynamic(func)?;
        let h = self.handle_of(bytes, func)?;
        if h.rank != target {
            return Err(MpiError::new(
                ErrorClass::Arg,
                format!(
                    "{func}(target={target}): the memory handle describes memory of rank {}",
                    h.rank
                ),
            ));
        }
        if size > h.size {
            return Err(MpiError::new(
                ErrorClass::Size,
                format!(
                    "{func}(size={size}): the memory handle describes only {} bytes",
                    h.size
                ),
            ));
        }
        let mut view = HandleView {
            target,
            slot: self.area.memhandle_at(target, h.slot as usize),
            state: h.state,
            mapping: None,
            shared: h.shared.is_some(),
        };
        if !view.live(&self.area) {
            return Err(released(func));
        }
        // Map the target's shareable block (not this process's own: reached by address
        // anyway); when that fails, cross-memory attach reaches the region.
        let mut base = h.base as usize;
        if let (Some((offset, fd)), false) = (h.shared, target == self.me) {
            if let Ok(m) = PeerMapping::map(h.pid, fd, offset + size) {
                base = m.addr() + offset as usize;
                view.mapping = Some(Arc::new(m));
            }
        }
        let mut w = self.view();
        w.flavor = Flavor::Create;
        for (r, p) in w.peers.iter_mut().enumerate() {
            if r as u32 == target {
                p.base = base;
                p.size = size;
                p.disp_unit = disp_unit;
            } else {
                p.size = 0;
            }
        }
        w.handle = Some(view);
        w.acc = w.handle_acc_path();
        Ok(w)
    }

    /// For a memory-handle window: refuse a target other than its one, and a released
    /// handle (checked by every operation).
    pub(super) fn check_handle(&self, target: u32, func: &str) -> MpiResult<()> {
        let Some(h) = &self.handle else {
            return Ok(());
        };
        if target != h.target {
            return Err(MpiError::new(
                ErrorClass::Rank,
                format!("{func}(target_rank={target}): a window from a memory handle reaches only rank {}", h.target),
            ));
        }
        if !h.live(&self.area) {
            return Err(released(func));
        }
        Ok(())
    }

    /// Refuse synchronisation other than flushes on a memory-handle window (seed 004 §4.2:
    /// lock and unlock apply to the parent dynamic window).
    pub(super) fn refuse_handle_sync(&self, func: &str) -> MpiResult<()> {
        if self.handle.is_some() {
            return Err(MpiError::new(
                ErrorClass::RmaSync,
                format!("{func}(win): a window from a memory handle is synchronised through its parent dynamic window (lock it there); only flushes apply to it"),
            ));
        }
        Ok(())
    }

    /// Whether this is a memory-handle window whose memory is mapped here.
    pub fn handle_mapped(&self) -> bool {
        self.handle.as_ref().is_some_and(|h| h.is_mapped())
    }

    /// Whether this is a memory-handle window.
    pub fn is_handle_window(&self) -> bool {
        self.handle.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_and_garbage_is_refused() {
        let h = Handle {
            key: 77,
            rank: 1,
            pid: 1234,
            base: 0x7000_0000,
            size: 4096,
            shared: Some((64, 9)),
            slot: 3,
            state: 5,
        };
        let b = h.encode();
        assert_eq!(Handle::decode(&b, "f").unwrap(), h);
        let mut flipped = b;
        flipped[30] ^= 1;
        assert_eq!(
            Handle::decode(&flipped, "f").unwrap_err().class(),
            ErrorClass::Arg as i32
        );
        assert!(Handle::decode(&[0xa5; 64], "f").is_err());
        assert!(Handle::decode(&b[..40], "f").is_err());
    }
}
