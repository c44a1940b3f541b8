//! `MPI_Get_hw_resource_info` (MPI 5.0): the node's hardware (`weft_core::hw`, read from
//! `/sys`) as an info object. Each key is a hardware resource type that
//! `MPI_COMM_TYPE_RESOURCE_GUIDED` accepts as `mpi_hw_resource_type` (`mpi_shared_memory`,
//! `package`, `numanode`, `l3cache`, `l2cache`, `l1cache`, `core`, `pu`), its value the number
//! of such resources on the node (types `/sys` says nothing about are left out).

use std::sync::Arc;

use weft_core::error::MpiResult;
use weft_core::hw;

use crate::args::{non_null, write};
use crate::ctypes::*;
use crate::objects;

pub(crate) unsafe fn mpi_get_hw_resource_info(hw_info: *mut MPI_Info) -> MpiResult<()> {
    const FUNC: &str = "MPI_Get_hw_resource_info";
    non_null(hw_info, FUNC, "hw_info")?;
    let pairs = hw::counts()
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .map(|(t, n)| (t.to_owned(), n.to_string()))
        .collect();
    let made = weft_core::object::Info::from_pairs(pairs);
    let handle = objects::INFOS.insert(Arc::new(made));
    // SAFETY: checked non-null; the caller passes a writable MPI_Info.
    unsafe { write(hw_info, handle, FUNC, "hw_info") }
}
