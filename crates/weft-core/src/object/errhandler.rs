//! Errhandlers: what happens when a call on an object fails.
#![forbid(unsafe_code)]

use std::any::Any;
use std::sync::Arc;

/// The object kind a user errhandler was created for. Predefined errhandlers fit every kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrhandlerKind {
    Comm,
    Win,
    File,
    Session,
}

impl ErrhandlerKind {
    pub fn name(self) -> &'static str {
        match self {
            ErrhandlerKind::Comm => "communicator",
            ErrhandlerKind::Win => "window",
            ErrhandlerKind::File => "file",
            ErrhandlerKind::Session => "session",
        }
    }
}

/// What an errhandler does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrhandlerAction {
    /// `MPI_ERRORS_ARE_FATAL`: report and end the whole job.
    Fatal,
    /// `MPI_ERRORS_ABORT`: report and abort the processes of the object (here: the job).
    Abort,
    /// `MPI_ERRORS_RETURN`: return the error code.
    Return,
    /// A user function; `callback` is its address, which only the ABI layer interprets.
    /// `extra_state`: the state of a function created with an `_x` extension (which takes
    /// the handle and code by value and the state last).
    User {
        kind: ErrhandlerKind,
        callback: usize,
        extra_state: Option<usize>,
    },
}

/// An errhandler object. `guard` is dropped with the last reference to the object (an `_x`
/// extension's destructor runs then).
#[derive(Clone, Debug)]
pub struct Errhandler {
    pub action: ErrhandlerAction,
    pub guard: Option<Arc<dyn Any + Send + Sync>>,
}

impl Errhandler {
    pub const FATAL: Errhandler = Errhandler {
        action: ErrhandlerAction::Fatal,
        guard: None,
    };
    pub const ABORT: Errhandler = Errhandler {
        action: ErrhandlerAction::Abort,
        guard: None,
    };
    pub const RETURN: Errhandler = Errhandler {
        action: ErrhandlerAction::Return,
        guard: None,
    };

    pub fn user(kind: ErrhandlerKind, callback: usize) -> Errhandler {
        Errhandler {
            action: ErrhandlerAction::User {
                kind,
                callback,
                extra_state: None,
            },
            guard: None,
        }
    }

    /// A user function with an extra state (and what to drop with the object).
    pub fn user_with_state(
        kind: ErrhandlerKind,
        callback: usize,
        extra_state: usize,
        guard: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Errhandler {
        Errhandler {
            action: ErrhandlerAction::User {
                kind,
                callback,
                extra_state: Some(extra_state),
            },
            guard,
        }
    }

    /// Whether this errhandler may be attached to an object of `kind`.
    pub fn fits(&self, kind: ErrhandlerKind) -> bool {
        match self.action {
            ErrhandlerAction::User { kind: k, .. } => k == kind,
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_errhandlers_fit_their_kind_only() {
        let e = Errhandler::user(ErrhandlerKind::Comm, 0x1234);
        assert!(e.fits(ErrhandlerKind::Comm));
        assert!(!e.fits(ErrhandlerKind::Win));
        assert!(Errhandler::RETURN.fits(ErrhandlerKind::File));
    }
}
