//! Transports: how bytes reach a peer. `self` (this rank) is handled by the protocol layer
//! directly; `shm` reaches processes on this node; `cma` is the single-copy helper for large
//! messages between them. A network transport (UCX) comes later behind the same routing.

pub mod cma;
pub mod shm;

/// How a peer (by job rank) is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// This process.
    SelfRank,
    /// A process on this node: its index among the node's ranks.
    Shm { local: u32 },
    /// No transport reaches it (another node; no network transport in this build).
    Unreachable,
}

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::config::{Config, LargeMode};
use shm::{Geometry, ShmTransport};

/// The transports of one instance and how to reach every rank of the job.
pub struct Transports {
    /// This process's rank in the job and its pid (for single-copy reads by peers).
    pub my_rank: u32,
    pub pid: i32,
    /// For each job rank, its index among this node's ranks (`None`: another node).
    local_of: Vec<Option<u32>>,
    pub my_local: u32,
    pub shm: Option<ShmTransport>,
    /// Largest message sent eagerly.
    pub eager_max: usize,
    pub large: LargeMode,
    /// Cleared when a single-copy read is refused by the kernel (then pipelining is used).
    cma_allowed: AtomicBool,
}

impl Transports {
    /// Set up transports for `my_rank`, given the job ranks on this node (in rank order) and
    /// a job-unique `segment_name` for the node's shared segment.
    pub fn open(
        my_rank: u32,
        job_size: u32,
        local_ranks: &[u32],
        segment_name: &str,
        nvcis: usize,
        config: &Config,
    ) -> io::Result<Transports> {
        let mut local_of = vec![None; job_size as usize];
        for (i, &r) in local_ranks.iter().enumerate() {
            local_of[r as usize] = Some(i as u32);
        }
        let my_local = local_of[my_rank as usize].expect("a rank is on its own node");
        let geometry = Geometry {
            cells: config.shm_cells,
            cell_size: config.shm_cell_size,
        };
        let shm = if local_ranks.len() > 1 {
            cma::allow_peers();
            Some(ShmTransport::attach(
                segment_name,
                local_ranks.len() as u32,
                nvcis,
                geometry,
            )?)
        } else {
            None
        };
        let cell_payload = config.shm_cell_size - shm::ring::PAYLOAD_OFFSET;
        let eager_max = config.eager_max.unwrap_or(cell_payload).min(cell_payload);
        Ok(Transports {
            my_rank,
            pid: std::process::id() as i32,
            local_of,
            my_local,
            shm,
            eager_max,
            large: config.shm_large,
            cma_allowed: AtomicBool::new(config.shm_large == LargeMode::Cma),
        })
    }

    pub fn route(&self, job_rank: u32) -> Route {
        if job_rank == self.my_rank {
            return Route::SelfRank;
        }
        match (self.local_of.get(job_rank as usize), &self.shm) {
            (Some(Some(local)), Some(_)) => Route::Shm { local: *local },
            _ => Route::Unreachable,
        }
    }

    /// Whether large messages from other processes may be read with a single copy.
    pub fn cma_allowed(&self) -> bool {
        self.cma_allowed.load(Ordering::Relaxed)
    }

    /// The kernel refused a single-copy read: use the pipelined path from now on.
    pub fn disable_cma(&self) {
        self.cma_allowed.store(false, Ordering::Relaxed);
    }

    /// The job is ending abnormally: remove names other ranks would otherwise leave behind.
    pub fn release_names(&self) {
        if let Some(shm) = &self.shm {
            shm.release_name();
        }
    }

    /// The ring `local` receives on for `vci`.
    pub fn ring(&self, local: u32, vci: usize) -> Option<&shm::Ring> {
        self.shm.as_ref().map(|s| s.ring(local, vci))
    }
}
