//! Intercommunicators: creation from two intracommunicators and merging.

use std::ffi::c_int;
use std::sync::Arc;

use weft_core::error::{ErrorClass, MpiResult};
use weft_core::mpi_err;
use weft_core::object::comm as core_comm;
use weft_core::object::{Comm, Group};

use crate::args::{index_below, non_null};
use crate::ctypes::*;
use crate::objects;
use crate::objects::out_comm;

pub(crate) unsafe fn mpi_intercomm_create(
    local_comm: MPI_Comm,
    local_leader: c_int,
    peer_comm: MPI_Comm,
    remote_leader: c_int,
    tag: c_int,
    newintercomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Intercomm_create";
    let local = objects::comm(local_comm, func, "local_comm")?;
    non_null(newintercomm, func, "newintercomm")?;
    let (what, n) = ((ErrorClass::Rank, "a rank of local_comm"), local.size());
    index_below(local_leader, n as usize, what, func, "local_leader")?;
    if tag < 0 {
        return Err(mpi_err!(
            Tag,
            "{func}(tag={tag}): tags must be in 0..=MPI_TAG_UB"
        ));
    }
    // peer_comm and remote_leader are significant only at the local leader.
    let peer = if local.rank == local_leader as u32 {
        let p = objects::comm(peer_comm, func, "peer_comm")?;
        let (what, n) = ((ErrorClass::Rank, "a rank of peer_comm"), p.peer_size());
        index_below(remote_leader, n as usize, what, func, "remote_leader")?;
        if remote_leader as u32 == p.rank && !p.is_inter() {
            return Err(mpi_err!(Rank, "{func}(remote_leader={remote_leader}): the remote leader is the local leader itself"));
        }
        Some(p)
    } else {
        None
    };
    let new = core_comm::intercomm_create(
        &local,
        local_leader as u32,
        peer.as_deref(),
        remote_leader.max(0) as u32,
        tag,
    )?;
    // SAFETY: checked non-null.
    unsafe { out_comm(newintercomm, Some(new)) };
    Ok(())
}

pub(crate) unsafe fn mpi_intercomm_merge(
    intercomm: MPI_Comm,
    high: c_int,
    newintracomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Intercomm_merge";
    let c = objects::comm(intercomm, func, "intercomm")?;
    non_null(newintracomm, func, "newintracomm")?;
    let new = core_comm::intercomm_merge(&c, high != 0)?;
    // SAFETY: checked non-null.
    unsafe { out_comm(newintracomm, Some(new)) };
    Ok(())
}

/// `MPI_Comm_create` on an intercommunicator.
pub(crate) fn create_on_inter(
    comm: &Arc<Comm>,
    group: &Group,
    _func: &str,
) -> MpiResult<Option<Arc<Comm>>> {
    core_comm::create_inter(comm, group)
}
