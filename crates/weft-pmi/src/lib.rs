//! PMI for Weft: the client the MPI library uses to bootstrap, and the server state
//! machine Weft's `mpiexec` runs.
//!
//! - [`wire`]: PMI-1 lines and PMI-2 length-prefixed messages.
//! - [`PmiClient`]: connects through `PMI_FD` or `PMI_PORT` (Hydra, Slurm, Weft's
//!   `mpiexec`) or runs as a singleton.
//! - [`Server`]: the I/O-free server of one job.
//! - Helpers for values PMI cannot carry as they are: [`hex_encode`]/[`hex_decode`],
//!   process sets ([`encode_psets`]/[`decode_psets`]) and `PMI_process_mapping`
//!   ([`parse_process_mapping`]).
//! - [`dynlib`]: libraries loaded at run time (PMIx here; UCX and CUDA in the crates above).

mod client;
pub mod dynlib;
mod error;
mod hex;
mod mapping;
mod pmix;
mod psets;
mod server;
pub mod wire;

#[cfg(test)]
mod testkit;

pub use client::{Mode, PmiClient};
pub use pmix::library_version as pmix_library_version;

/// The abort request's key for the message as it is, hex-encoded (PMI values cannot carry
/// spaces or `;`): sent to, and understood by, Weft's own launcher only.
pub const ABORT_MESSAGE_HEX: &str = "weft_message_hex";
pub use error::PmiError;
pub use hex::{hex_decode, hex_encode};
pub use mapping::parse_process_mapping;
pub use psets::{decode_psets, encode_psets, format_ranklist, parse_ranklist, Pset, PSETS_KEY};
pub use server::{Event, PeerState, Server};
