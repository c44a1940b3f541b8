//! MPI objects: communicators, groups, attributes, topologies, errhandlers, info, windows.
#![forbid(unsafe_code)]

pub mod attr;
pub mod comm;
pub mod errhandler;
pub mod exchange;
pub mod group;
pub mod idup;
pub mod info;
pub mod topo;
pub mod win;

pub use comm::{Comm, CommKind};
pub use errhandler::{Errhandler, ErrhandlerAction, ErrhandlerKind};
pub use group::{Compare, Group};
pub use info::Info;
pub use win::Win;
