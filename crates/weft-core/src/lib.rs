//! Weft's core: every MPI semantic, independent of the C ABI.
//!
//! Layering (top to bottom): `runtime` (instances, sessions, bootstrap, configuration),
//! `object` (communicators, groups, errhandlers), `progress` (VCIs). The ABI crate decodes
//! and validates C arguments and calls into this crate; nothing here names a C type.

pub mod coll;
pub mod config;
pub mod datatype;
pub mod error;
pub mod object;
pub mod op;
pub mod progress;
pub mod pt2pt;
pub mod request;
pub mod runtime;
pub mod sync;
pub mod transport;

pub use error::{ErrorClass, MpiError, MpiResult};
