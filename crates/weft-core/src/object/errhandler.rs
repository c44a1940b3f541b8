//! Errhandlers: what happens when a call on an object fails.
#![forbid(unsafe_code)]

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
    User {
        kind: ErrhandlerKind,
        callback: usize,
    },
}

/// An errhandler object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Errhandler {
    pub action: ErrhandlerAction,
}

impl Errhandler {
    pub const FATAL: Errhandler = Errhandler {
        action: ErrhandlerAction::Fatal,
    };
    pub const ABORT: Errhandler = Errhandler {
        action: ErrhandlerAction::Abort,
    };
    pub const RETURN: Errhandler = Errhandler {
        action: ErrhandlerAction::Return,
    };

    pub fn user(kind: ErrhandlerKind, callback: usize) -> Errhandler {
        Errhandler {
            action: ErrhandlerAction::User { kind, callback },
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
