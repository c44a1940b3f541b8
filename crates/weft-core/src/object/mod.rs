//! MPI objects: sessions, communicators (and their context ids), groups, attributes,
//! topologies, errhandlers, info, windows, MPIX streams.
#![forbid(unsafe_code)]

pub mod area;
pub mod attr;
pub mod comm;
pub mod connect;
pub mod context_id;
pub mod errhandler;
pub mod exchange;
pub mod group;
pub mod idup;
pub mod info;
pub mod offload;
pub mod session;
pub mod stream;
pub mod stream_comm;
pub mod topo;
pub mod win;

pub use comm::{Comm, CommKind};
pub use errhandler::{Errhandler, ErrhandlerAction, ErrhandlerKind};
pub use group::{Compare, Group};
pub use info::Info;
pub use session::Session;
pub use win::Win;
