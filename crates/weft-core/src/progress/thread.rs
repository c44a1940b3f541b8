//! Progress threads (`MPIX_Start_progress_thread`): a library-owned thread that polls one
//! stream's VCI, or every implicit VCI and the polled work, so that operations complete
//! while the application computes without calling MPI.
//!
//! The VCIs it polls must be locked while it runs, even where their one user normally takes
//! no lock (a stream's VCI; the implicit ones below `MPI_THREAD_MULTIPLE`): `start` switches
//! their locks on before the thread exists and `stop` switches back what it switched, after
//! the thread was joined, both from the thread that owns them.
//!
//! An idle thread must not cost a core: after `SPIN_PASSES` empty passes it sleeps, starting
//! at `FIRST_NAP` and doubling up to `LONGEST_NAP` when nothing is outstanding on its VCIs,
//! or up to `BUSY_NAP` while operations wait for peers (a rendezvous, a nonblocking
//! collective), and any pass that found work starts the count again. Sleeping rather than
//! spinning while operations are outstanding leaves the cores to the computation the
//! thread overlaps (on a machine with as many busy threads as cores, a spinning thread would
//! take a share of the application's core); each step of a protocol waits at most
//! `BUSY_NAP` for the thread.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::instance::Instance;
use crate::polled;

/// Empty passes before the thread starts sleeping.
const SPIN_PASSES: u32 = 2000;
const FIRST_NAP: Duration = Duration::from_micros(20);
/// Long enough that an idle thread wakes a few hundred times a second (well under 1% of a
/// core), short enough that work posted to an idle thread starts within a few milliseconds.
const LONGEST_NAP: Duration = Duration::from_millis(4);
const BUSY_NAP: Duration = Duration::from_micros(50);

/// What a progress thread polls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// One stream's VCI.
    Stream(usize),
    /// Every implicit VCI, and the polled work (generalized requests' `poll_fn`s).
    Implicit,
}

/// A running progress thread; `stop` joins it.
pub struct ProgressThread {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    /// Weak: a progress thread does not keep a finalized instance alive (it ends with it).
    instance: Weak<Instance>,
    /// The VCIs whose locks `start` switched on.
    switched: Vec<usize>,
}

impl ProgressThread {
    /// Start a thread polling `scope` of `instance`.
    pub fn start(instance: &Arc<Instance>, scope: Scope) -> std::io::Result<ProgressThread> {
        let vcis: Vec<usize> = match scope {
            Scope::Stream(v) => vec![v],
            Scope::Implicit => instance.implicit_vcis().collect(),
        };
        let switched: Vec<usize> = vcis
            .iter()
            .copied()
            .filter(|&v| !instance.vcis[v].is_threaded())
            .collect();
        for &v in &switched {
            instance.vcis[v].enable_threads();
        }
        let stop = Arc::new(AtomicBool::new(false));
        let weak = Arc::downgrade(instance);
        let flag = stop.clone();
        let spawned = std::thread::Builder::new()
            .name("weft-progress".into())
            .spawn(move || run(weak, vcis, scope == Scope::Implicit, &flag));
        match spawned {
            Ok(handle) => Ok(ProgressThread {
                stop,
                handle: Some(handle),
                instance: Arc::downgrade(instance),
                switched,
            }),
            Err(e) => {
                for &v in &switched {
                    instance.vcis[v].disable_threads();
                }
                Err(e)
            }
        }
    }

    /// Stop the thread and wait for it to end.
    pub fn stop(mut self) {
        self.join();
    }

    fn join(&mut self) {
        let Some(handle) = self.handle.take() else {
            return;
        };
        self.stop.store(true, Ordering::Release);
        handle.thread().unpark();
        // The loop catches nothing, and nothing in a pass panics by design; a panic would
        // have aborted the pass's VCI lock section (see `OptLock`), so join's error is moot.
        let _ = handle.join();
        let Some(inst) = self.instance.upgrade() else {
            return;
        };
        for &v in &self.switched {
            // A session may have asked for MPI_THREAD_MULTIPLE meanwhile: its VCIs stay locked.
            if v >= inst.config.num_vcis || !crate::instance::calls_may_overlap() {
                inst.vcis[v].disable_threads();
            }
        }
    }

    /// Whether the instance it served has ended (the thread then ended too).
    pub fn is_orphan(&self) -> bool {
        self.instance.strong_count() == 0
    }
}

impl Drop for ProgressThread {
    fn drop(&mut self) {
        self.join();
    }
}

/// The thread's loop: a pass over `vcis` (and the polled work), sleeping when idle, until
/// `stop` or the instance is gone.
fn run(instance: Weak<Instance>, vcis: Vec<usize>, with_polled: bool, stop: &AtomicBool) {
    let mut empty = 0u32;
    let mut nap = FIRST_NAP;
    while !stop.load(Ordering::Acquire) {
        let Some(inst) = instance.upgrade() else {
            return;
        };
        let mut worked = false;
        let mut outstanding = false;
        for &v in &vcis {
            worked |= super::poke(&inst, v);
            outstanding |= inst.vcis[v].lock().awaits_peers();
        }
        if with_polled {
            worked |= polled::run();
            outstanding |= polled::any();
        }
        drop(inst);
        if worked {
            empty = 0;
            nap = FIRST_NAP;
        } else if empty < SPIN_PASSES {
            empty += 1;
            std::hint::spin_loop();
        } else {
            let longest = if outstanding { BUSY_NAP } else { LONGEST_NAP };
            nap = nap.min(longest);
            std::thread::park_timeout(nap);
            nap = (nap * 2).min(longest);
        }
    }
}
