//! How a waiting thread spends empty polls.
#![forbid(unsafe_code)]

/// Spinning (no system call) for `spin` empty polls, then yielding the core between polls.
/// The instance chooses `spin` (`Instance::spin`: long when every rank has a CPU, short when
/// ranks outnumber CPUs).
///
/// Every wait loop idles through one, so it also measures waiting for `WEFT_STATS`: while
/// `stats::timing`, the time from its first idle poll until it is dropped.
pub struct Backoff {
    idle: u32,
    spin: u32,
    waiting_since: Option<std::time::Instant>,
}

impl Backoff {
    pub fn new(spin: u32) -> Backoff {
        Backoff {
            idle: 0,
            spin,
            waiting_since: None,
        }
    }

    #[inline]
    pub fn idle(&mut self) {
        if self.waiting_since.is_none() && crate::stats::timing() {
            self.waiting_since = Some(std::time::Instant::now());
        }
        if self.idle < self.spin {
            // No `pause` here: a poll is itself a few dozen cycles, and `pause` (about 140
            // cycles on recent x86 cores) would delay noticing an arrival by as much.
            self.idle += 1;
        } else {
            std::thread::yield_now();
        }
    }

    pub fn reset(&mut self) {
        self.idle = 0;
    }
}

impl Drop for Backoff {
    fn drop(&mut self) {
        if let Some(since) = self.waiting_since {
            crate::stats::add_wait_time(since.elapsed().as_nanos() as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spins_then_yields_and_resets() {
        let mut b = Backoff::new(2);
        b.idle();
        b.idle();
        assert_eq!(b.idle, 2, "counted while spinning");
        b.idle();
        assert_eq!(b.idle, 2, "yielding does not count further");
        b.reset();
        assert_eq!(b.idle, 0);
    }
}
