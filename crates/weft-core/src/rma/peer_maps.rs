//! Windows over the program's memory (`MPI_Win_create`) reached by address where that memory
//! is shareable: `MPI_Alloc_mem` blocks backed by a memfd (`transport/shm/shareable.rs`). At
//! creation every rank tells the others which block (descriptor, offset) holds its window
//! memory, and every process maps the other ranks' blocks through `/proc/<pid>/fd`, so puts
//! and gets to them take the direct path (a copy) instead of cross-memory attach. Memory that
//! is not shareable (the stack, `malloc`), or a block that cannot be mapped, stays on
//! cross-memory attach.
//!
//! When every process mapped every rank's memory, accumulate-type operations take CPU atomics
//! on it too (`atomic`), as on allocated windows. That choice is collective (an all-gather of
//! each process's success): one location must be reached by one path from every process, or
//! an atomic in one process and the accumulate mutex in another would not exclude each other.
//! A peer's mapping keeps the pages alive, so memory freed too early is stale, never a crash.

use std::sync::Arc;

use super::Peer;
use crate::coll;
use crate::datatype::access::Scratch;
use crate::error::MpiResult;
use crate::object::Comm;
use crate::transport::shm::shareable::{self, PeerMapping};

/// The other ranks' window memory mapped in this process.
#[derive(Debug, Default)]
pub struct PeerMaps {
    /// Each rank's window byte 0 here, for the ranks mapped (never this process's own).
    pub addrs: Vec<Option<usize>>,
    /// Whether every process reaches every rank's memory by address (so accumulates may use
    /// CPU atomics).
    pub everywhere: bool,
    _maps: Vec<PeerMapping>,
}

const ENTRY: usize = 16;

/// Map the other ranks' window memory (collective over the window's communicator);
/// `base`/`size`: this process's window memory.
pub fn map_peers(comm: &Comm, peers: &[Peer], base: usize, size: u64) -> MpiResult<Arc<PeerMaps>> {
    let n = peers.len();
    let me = comm.rank as usize;
    let mut send = [0u8; ENTRY];
    let (fd, offset) = match shareable::find(base, size).filter(|_| size > 0) {
        Some((fd, offset)) => (fd, offset),
        None => (-1, 0),
    };
    send[0..4].copy_from_slice(&fd.to_le_bytes());
    send[8..16].copy_from_slice(&offset.to_le_bytes());
    let mut send = Scratch::from_bytes(&send);
    let mut all = Scratch::new(ENTRY * n);
    coll::allgather(comm, Some(&send.buf()), &all.buf())?;
    let mut maps = PeerMaps {
        addrs: vec![None; n],
        ..PeerMaps::default()
    };
    let mut ok = true;
    for (r, (p, e)) in peers.iter().zip(all.bytes().chunks(ENTRY)).enumerate() {
        if r == me || p.size == 0 {
            continue;
        }
        let fd = i32::from_le_bytes(e[0..4].try_into().expect("4 bytes"));
        let offset = u64::from_le_bytes(e[8..16].try_into().expect("8 bytes"));
        let mapped = (fd >= 0)
            .then(|| PeerMapping::map(p.pid, fd, offset + p.size).ok())
            .flatten();
        match mapped {
            Some(m) => {
                maps.addrs[r] = Some(m.addr() + offset as usize);
                maps._maps.push(m);
            }
            None => ok = false,
        }
    }
    let mut flag = Scratch::from_bytes(&[ok as u8]);
    let mut flags = Scratch::new(n);
    coll::allgather(comm, Some(&flag.buf()), &flags.buf())?;
    maps.everywhere = flags.bytes().iter().all(|&f| f == 1);
    Ok(Arc::new(maps))
}
