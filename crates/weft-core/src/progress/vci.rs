//! A VCI owns one partition of the communication state (matching queues, request pool,
//! transport endpoints) behind its own lock, so that traffic on different VCIs never
//! contends. The point-to-point engine fills in the state; the foundation fixes the shape.
#![forbid(unsafe_code)]

use std::sync::{Mutex, MutexGuard};

/// The per-VCI state guarded by the VCI's lock.
#[derive(Debug, Default)]
pub struct VciState {
    /// Number of progress passes made on this VCI (a cheap liveness counter for tests).
    pub progress_passes: u64,
}

/// One virtual communication interface.
#[derive(Debug)]
pub struct Vci {
    pub index: usize,
    state: Mutex<VciState>,
}

impl Vci {
    pub fn new(index: usize) -> Vci {
        Vci {
            index,
            state: Mutex::new(VciState::default()),
        }
    }

    /// Lock this VCI's state. A panic while holding it aborts the process (DESIGN.md point 8),
    /// so a poisoned lock is never observed by the library's own code paths.
    pub fn lock(&self) -> MutexGuard<'_, VciState> {
        self.state.lock().unwrap_or_else(|_| {
            eprintln!(
                "weft: VCI {} state was left inconsistent by a panic; aborting",
                self.index
            );
            std::process::abort()
        })
    }

    /// Make one progress pass.
    pub fn progress(&self) {
        self.lock().progress_passes += 1;
    }
}
