//! How a rank waits in a collective on the shared area (`shm`, `shm_data`, `shm_blocks`,
//! `shm_stream`).
#![forbid(unsafe_code)]

use crate::instance::Instance;
use crate::object::Comm;
use crate::progress;
use crate::sync::Backoff;

/// Empty polls between two point-to-point progress passes while waiting.
const PROGRESS_EVERY: u32 = 64;

/// How a rank waits for the others: the instance's backoff, and now and then a progress pass
/// (every VCI and the polled work) so this rank's pending point-to-point operations and
/// schedules keep moving: a peer may need them before it can join the collective.
pub(super) struct Idle<'a> {
    inst: &'a Instance,
    backoff: Backoff,
    polls: u32,
}

impl<'a> Idle<'a> {
    pub(super) fn new(comm: &'a Comm) -> Idle<'a> {
        let inst = &comm.session.instance;
        Idle {
            inst,
            backoff: inst.backoff(),
            polls: 0,
        }
    }

    pub(super) fn poll(&mut self) {
        self.polls += 1;
        if self.polls.is_multiple_of(PROGRESS_EVERY) {
            progress::progress_all(self.inst);
        }
        self.backoff.idle();
    }
}
