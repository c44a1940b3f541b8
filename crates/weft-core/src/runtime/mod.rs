//! The runtime: `MPI_Init`'s world session and its predefined communicators.
#![forbid(unsafe_code)]

pub mod report;
pub mod world;
