//! Weft's core: every MPI semantic, independent of the C ABI.
//!
//! Layering, top to bottom; a module only names modules below it (see
//! `docs/architecture.md`, "Layers"):
//!
//! - `tools`: what MPI_T shows: control and performance variables, categories.
//! - `runtime`: `MPI_Init`'s world.
//! - `io`: MPI-IO (files, views, independent, collective and nonblocking access).
//! - `coll`: collectives.
//! - `pt2pt`: point-to-point on communicators.
//! - `object`: sessions, communicators (and their context ids), groups, attributes,
//!   errhandlers, info, topologies, windows.
//! - `progress`: waiting for and taking completed requests, persistent requests,
//!   generalized requests, starting internal schedules.
//! - `instance`: the per-process state (configuration, job layout, process sets, the VCIs
//!   and the transports).
//! - `vci`: what runs under one VCI's lock: its state, the point-to-point engine and
//!   protocols, matching, internal schedules.
//! - `request`, `transport`: request pools; how bytes reach a peer.
//! - leaves: `message` (the value types of a message), `datatype`, `op`, `polled`, `sync`,
//!   `config`, `error`, `stats` (the per-VCI performance counters), `events` (MPI_T event
//!   instances), `trace` (`WEFT_TRACE`'s per-thread buffers).
//!
//! The ABI crate decodes and validates C arguments and calls into this crate; nothing here
//! names a C type.

pub mod coll;
pub mod config;
pub mod datatype;
pub mod error;
pub mod events;
pub mod hw;
pub mod instance;
pub mod io;
pub mod message;
pub mod object;
pub mod op;
pub mod polled;
pub mod progress;
pub mod pt2pt;
pub mod request;
pub mod rma;
pub mod runtime;
pub mod stats;
pub mod sync;
pub mod threadcomm;
pub mod tools;
pub mod trace;
pub mod transport;
pub mod vci;

pub use error::{ErrorClass, MpiError, MpiResult};
