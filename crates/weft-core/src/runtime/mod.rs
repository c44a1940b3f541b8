//! The runtime: reference-counted instances, sessions, `MPI_Init`'s world session, bootstrap.
#![forbid(unsafe_code)]

pub mod context_id;
pub mod instance;
pub mod psets;
pub mod session;
pub mod thread_level;
pub mod world;

pub use instance::Instance;
pub use session::Session;
pub use thread_level::ThreadLevel;
