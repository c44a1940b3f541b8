//! Connecting to processes of other jobs (`transport::shm::foreign`): naming processes across
//! jobs, opening the rings both ways, and the key that orders processes alike in every job.
#![forbid(unsafe_code)]

use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::transport::shm::foreign::{ring_name, ProcName};
use crate::transport::shm::pair::{PairEnd, PairRing};
use crate::transport::shm::Geometry;

use super::{Instance, ProcId};

impl Instance {
    /// How processes of other jobs name process `p` (a job rank or a foreign id).
    pub fn proc_name(&self, p: ProcId) -> Option<ProcName> {
        if p < self.job.size {
            return Some(ProcName {
                job: self.job.name(),
                rank: p,
            });
        }
        self.transports.foreign.get(p).map(|f| f.name.clone())
    }

    /// The names by which other jobs know `members` (job ranks or foreign ids of this
    /// process), encoded with `ProcName::encode_all`.
    pub fn encode_names(&self, members: &[ProcId], func: &str) -> MpiResult<Vec<u8>> {
        let names = members
            .iter()
            .map(|&p| {
                self.proc_name(p).ok_or_else(|| {
                    MpiError::new(
                        ErrorClass::Intern,
                        format!("{func}: process {p} of the group has no name"),
                    )
                })
            })
            .collect::<MpiResult<Vec<_>>>()?;
        let mut out = Vec::new();
        ProcName::encode_all(&names, &mut out);
        Ok(out)
    }

    /// The ids of the processes `names` (every process taking part calls this with the
    /// same names), connecting to those of other jobs it does not know yet. `and` ANDs a
    /// word over everyone taking part, so that all fail if one could not connect.
    pub fn connect_all(
        &self,
        names: &[ProcName],
        func: &str,
        mut and: impl FnMut(&mut [u64]) -> MpiResult<()>,
    ) -> MpiResult<Vec<ProcId>> {
        let mut ids = Vec::with_capacity(names.len());
        let mut trouble = None;
        for name in names {
            match self.connect_process(name) {
                Ok(id) => ids.push(id),
                Err(e) => {
                    trouble = Some(e);
                    break;
                }
            }
        }
        let mut ok = [trouble.is_none() as u64];
        and(&mut ok)?;
        if let Some(e) = trouble {
            return Err(MpiError {
                code: e.code,
                message: format!("{func}: {}", e.message),
            });
        }
        if ok[0] == 0 {
            return Err(MpiError::new(
                ErrorClass::Other,
                format!("{func}: a process of one of the groups could not reach the other group"),
            ));
        }
        Ok(ids)
    }

    /// The id that stands for process `name` here: its job rank if it is of this job, else
    /// its foreign id, connecting to it (the rings both ways) the first time.
    pub fn connect_process(&self, name: &ProcName) -> MpiResult<ProcId> {
        let me = ProcName {
            job: self.job.name(),
            rank: self.job.rank,
        };
        if name.job == me.job {
            if name.rank >= self.job.size {
                return Err(MpiError::new(
                    ErrorClass::Other,
                    format!("rank {} is not in this job", name.rank),
                ));
            }
            return Ok(name.rank);
        }
        let geometry = Geometry {
            cells: self.config.shm_cells,
            cell_size: self.config.shm_cell_size,
        };
        let nvcis = self.config.num_vcis;
        let failed = |e: std::io::Error| {
            MpiError::new(
                ErrorClass::Other,
                format!("cannot reach rank {} of job {}: {e}", name.rank, name.job),
            )
        };
        let (id, new) = self
            .transports
            .foreign
            .register(name, || {
                (0..nvcis)
                    .map(|v| PairRing::open(&ring_name(&me, name, v), geometry))
                    .collect()
            })
            .map_err(failed)?;
        if new {
            for (v, vci) in self.vcis.iter().take(nvcis).enumerate() {
                let ring = PairRing::open(&ring_name(name, &me, v), geometry).map_err(failed)?;
                let end = PairEnd {
                    job_rank: id,
                    vci: v as u8,
                    nonce: 0,
                };
                vci.lock().add_pair_in(end, ring);
            }
        }
        Ok(id)
    }

    /// A key of process `p` that every job computes alike (a hash of its job's name, then
    /// its rank there): orders the groups of an intercommunicator between jobs.
    pub fn universal_key(&self, p: ProcId) -> (u64, u32) {
        match self.proc_name(p) {
            Some(name) => (fnv1a(name.job.as_bytes()), name.rank),
            None => (u64::MAX, p),
        }
    }
}

/// FNV-1a, 64 bits.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}
