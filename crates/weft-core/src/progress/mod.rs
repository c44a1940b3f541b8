//! Progress, partitioned into VCIs (virtual communication interfaces).
#![forbid(unsafe_code)]

pub mod vci;

pub use vci::Vci;
