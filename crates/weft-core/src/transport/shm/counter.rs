//! A 64-bit counter in a small shared segment of its own: the shared file pointer of a file
//! opened by ranks of one node (`io::shared`). One rank creates it, the others attach once
//! told its name; the name goes when all have mapped it.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use super::segment::{Segment, HEADER_BYTES};

pub struct SharedCounter {
    seg: Segment,
}

const LEN: usize = HEADER_BYTES + 64;

impl SharedCounter {
    /// Create the zeroed counter `name` for `participants` processes (this one included).
    pub fn create(name: &str, participants: u32) -> io::Result<SharedCounter> {
        Segment::create(name, LEN, participants).map(|seg| SharedCounter { seg })
    }

    /// Attach the counter another process created.
    pub fn attach(name: &str, participants: u32) -> io::Result<SharedCounter> {
        Segment::attach(name, LEN, participants).map(|seg| SharedCounter { seg })
    }

    fn cell(&self) -> &AtomicU64 {
        // The segment is LEN bytes, page-aligned, so the 8 bytes at HEADER_BYTES are inside it and
        // aligned.
        // SAFETY: they are only ever accessed atomically, by every process.
        unsafe { &*(self.seg.base().add(HEADER_BYTES) as *const AtomicU64) }
    }

    /// Add `n`, returning the value before.
    pub fn fetch_add(&self, n: u64) -> u64 {
        self.cell().fetch_add(n, Ordering::AcqRel)
    }

    pub fn load(&self) -> u64 {
        self.cell().load(Ordering::Acquire)
    }

    pub fn store(&self, v: u64) {
        self.cell().store(v, Ordering::Release)
    }
}
