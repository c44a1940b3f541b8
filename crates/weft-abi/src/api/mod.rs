//! Hand-written implementations of the entry points, grouped by area. `api/gen.py` finds
//! every `pub(crate) fn mpi_*`/`mpix_*` here and wires the generated `PMPI_` symbol to it;
//! families and `_c` twins share one implementation (`family.rs`, gen.py's docs).

pub(crate) mod abi_fortran;
pub(crate) mod attr;
pub(crate) mod buffered;
pub(crate) mod coll;
pub(crate) mod coll_args;
pub(crate) mod coll_data;
pub(crate) mod comm;
pub(crate) mod datatype;
pub(crate) mod errors;
pub(crate) mod family;
pub(crate) mod file;
pub(crate) mod grequest;
pub(crate) mod group;
pub(crate) mod handle_ints;
pub(crate) mod info;
pub(crate) mod intercomm;
pub(crate) mod mem;
pub(crate) mod mpit;
pub(crate) mod neighbor;
pub(crate) mod op;
pub(crate) mod pack;
pub(crate) mod pt2pt;
pub(crate) mod recv;
pub(crate) mod requests;
pub(crate) mod rma;
pub(crate) mod rma_sync;
pub(crate) mod runtime;
pub(crate) mod session;
pub(crate) mod stream;
pub(crate) mod threadcomm;
pub(crate) mod time;
pub(crate) mod topo;
pub(crate) mod type_iov;
pub(crate) mod win;
