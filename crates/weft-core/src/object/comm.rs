//! Communicators.
#![forbid(unsafe_code)]

use std::sync::{Arc, Mutex};

use super::errhandler::Errhandler;
use super::group::Group;
use crate::runtime::session::Session;

/// Where a communicator came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommKind {
    World,
    SelfComm,
    User,
}

/// An intracommunicator: a group, this process's rank in it, a context id, and the VCI its
/// traffic runs on.
#[derive(Debug)]
pub struct Comm {
    pub kind: CommKind,
    pub group: Group,
    pub rank: u32,
    /// The compact context id carried on the wire (agreed collectively for user comms).
    pub context_id: u32,
    /// Index of the implicit VCI this communicator's traffic uses.
    pub vci: usize,
    pub session: Arc<Session>,
    errhandler: Mutex<Arc<Errhandler>>,
    name: Mutex<String>,
}

impl Comm {
    pub fn new(
        kind: CommKind,
        group: Group,
        rank: u32,
        context_id: u32,
        session: Arc<Session>,
        errhandler: Arc<Errhandler>,
        name: &str,
    ) -> Comm {
        let vci = session.instance.vci_for_context(context_id);
        Comm {
            kind,
            group,
            rank,
            context_id,
            vci,
            session,
            errhandler: Mutex::new(errhandler),
            name: Mutex::new(name.to_owned()),
        }
    }

    /// The context id collective operations on this communicator use.
    pub fn collective_context(&self) -> u32 {
        self.context_id + 1
    }

    pub fn size(&self) -> u32 {
        self.group.size()
    }

    pub fn errhandler(&self) -> Arc<Errhandler> {
        lock(&self.errhandler).clone()
    }

    pub fn set_errhandler(&self, errhandler: Arc<Errhandler>) {
        *lock(&self.errhandler) = errhandler;
    }

    pub fn name(&self) -> String {
        lock(&self.name).clone()
    }

    pub fn set_name(&self, name: &str) {
        *lock(&self.name) = name.to_owned();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
