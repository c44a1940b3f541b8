//! Sessions: the unit of initialization (`MPI_Session_init`; `MPI_Init` makes the world one).
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::errhandler::Errhandler;
use crate::error::MpiResult;
use crate::instance::psets::ProcessSet;
use crate::instance::{Instance, ThreadLevel};

static NEXT_SESSION_ID: AtomicU64 = AtomicU64::new(1);

/// One session. Objects derived from it carry an `Arc<Session>`, so they know their session.
#[derive(Debug)]
pub struct Session {
    pub id: u64,
    pub instance: Arc<Instance>,
    pub thread_level: ThreadLevel,
    errhandler: Mutex<Arc<Errhandler>>,
    /// Info `strict_finalize`: finalizing fails while objects derived from the session live.
    strict_finalize: AtomicBool,
}

impl Session {
    /// Start a session: acquire (or bootstrap) the instance.
    pub fn start(
        thread_level: ThreadLevel,
        errhandler: Arc<Errhandler>,
    ) -> MpiResult<Arc<Session>> {
        let instance = Instance::acquire(thread_level)?;
        Ok(Arc::new(Session {
            id: NEXT_SESSION_ID.fetch_add(1, Ordering::Relaxed),
            instance,
            thread_level: ThreadLevel::provide(thread_level),
            errhandler: Mutex::new(errhandler),
            strict_finalize: AtomicBool::new(false),
        }))
    }

    /// End the session; the last one releases the instance.
    pub fn finish(&self) {
        self.instance.release();
    }

    pub fn set_strict_finalize(&self, on: bool) {
        self.strict_finalize.store(on, Ordering::Relaxed);
    }

    pub fn strict_finalize(&self) -> bool {
        self.strict_finalize.load(Ordering::Relaxed)
    }

    pub fn errhandler(&self) -> Arc<Errhandler> {
        self.errhandler
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn set_errhandler(&self, errhandler: Arc<Errhandler>) {
        *self.errhandler.lock().unwrap_or_else(|p| p.into_inner()) = errhandler;
    }
}

impl Session {
    /// The process sets this session sees.
    pub fn psets(&self) -> MpiResult<Vec<ProcessSet>> {
        self.instance.job.psets()
    }
}
