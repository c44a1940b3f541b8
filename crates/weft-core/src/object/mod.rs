//! MPI objects: communicators, groups, errhandlers.
#![forbid(unsafe_code)]

pub mod comm;
pub mod errhandler;
pub mod group;
pub mod info;

pub use comm::{Comm, CommKind};
pub use errhandler::{Errhandler, ErrhandlerAction, ErrhandlerKind};
pub use group::Group;
pub use info::Info;
