//! The runtime: `MPI_Init`'s world session and its predefined communicators, and dynamic
//! processes: ports, the name service, spawning.
#![forbid(unsafe_code)]

pub mod names;
pub mod port;
pub mod report;
pub mod spawn;
pub mod world;
