//! The job as the launcher describes it (rank, size, placement, process sets), and the
//! launcher connection it is learnt through: once per process, shared by every instance.
#![forbid(unsafe_code)]

use std::sync::{Mutex, MutexGuard, OnceLock};

use weft_pmi::PmiClient;

use super::psets::{self, name_matches, ProcessSet, SELF, SHARED, WORLD};
use crate::config::NodesOverride;
use crate::error::{ErrorClass, MpiError, MpiResult};

/// A process's rank in the job.
pub type ProcId = u32;

/// The job as the launcher describes it. Start-up learns only what every process needs
/// (rank, size, key-value space, placement); the rest is asked for on first use, each fact a
/// round trip to the launcher: a session that builds its communicators from the built-in
/// process sets never asks for the launcher's sets, and only `MPI_Init` asks for the world's
/// `MPI_APPNUM` and `MPI_UNIVERSE_SIZE`.
#[derive(Debug)]
pub struct JobLayout {
    pub rank: ProcId,
    pub size: u32,
    /// Name of the job's key-value space (unique per job; names shared-memory segments).
    pub job_id: String,
    /// The node index of every rank.
    pub node_of: Vec<u32>,
    /// Process sets the launcher defined (`mpiexec --pset`, or `WEFT_PSETS`).
    launcher_psets: OnceLock<Vec<ProcessSet>>,
    world_attrs: OnceLock<WorldAttrs>,
}

/// What the launcher says for `MPI_COMM_WORLD`'s predefined attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorldAttrs {
    pub appnum: i32,
    pub universe_size: Option<u32>,
}

impl JobLayout {
    /// The ranks that share this process's node, in rank order.
    pub fn local_ranks(&self) -> Vec<ProcId> {
        let mine = self.node_of[self.rank as usize];
        (0..self.size)
            .filter(|&r| self.node_of[r as usize] == mine)
            .collect()
    }

    /// The job's name as it appears in shared-memory names (how processes of other jobs
    /// name this one: `transport::shm::foreign`).
    pub fn name(&self) -> String {
        sanitize(&self.job_id)
    }

    /// The name of a shared-memory object of this job: `/weft.<job>.<what>` (the launcher
    /// removes `weft.<job>.*` leftovers when the job ends).
    pub fn segment_name(&self, what: impl std::fmt::Display) -> String {
        format!("/weft.{}.{what}", sanitize(&self.job_id))
    }

    /// The process sets a session sees, in a fixed order: the built-in ones, then the
    /// launcher's.
    pub fn psets(&self) -> MpiResult<Vec<ProcessSet>> {
        let mut sets: Vec<ProcessSet> = [WORLD, SELF, SHARED]
            .map(|name| self.builtin_pset(name))
            .into();
        sets.extend(self.launcher_psets()?.iter().cloned());
        Ok(sets)
    }

    /// The built-in set called `name` (one of `WORLD`, `SELF`, `SHARED`).
    fn builtin_pset(&self, name: &'static str) -> ProcessSet {
        let members = match name {
            WORLD => (0..self.size).collect(),
            SELF => vec![self.rank],
            _ => self.local_ranks(),
        };
        ProcessSet {
            name: name.into(),
            members,
        }
    }

    /// The set called `asked` (a built-in name needs nothing from the launcher).
    pub fn find_pset(&self, asked: &str, func: &str) -> MpiResult<ProcessSet> {
        if let Some(name) = [WORLD, SELF, SHARED]
            .into_iter()
            .find(|n| name_matches(n, asked))
        {
            return Ok(self.builtin_pset(name));
        }
        self.launcher_psets()?
            .iter()
            .find(|s| name_matches(&s.name, asked))
            .cloned()
            .ok_or_else(|| {
                MpiError::new(
                    ErrorClass::Arg,
                    format!("{func}(pset_name={asked:?}): no such process set"),
                )
            })
    }

    /// The process sets the launcher defined (asked for on first use).
    pub fn launcher_psets(&self) -> MpiResult<&[ProcessSet]> {
        if let Some(sets) = self.launcher_psets.get() {
            return Ok(sets);
        }
        let sets = psets::from_launcher(&mut *launcher()?, self.size)?;
        Ok(self.launcher_psets.get_or_init(|| sets))
    }

    /// `MPI_APPNUM` and `MPI_UNIVERSE_SIZE` (asked for on first use).
    pub fn world_attrs(&self) -> MpiResult<WorldAttrs> {
        if let Some(attrs) = self.world_attrs.get() {
            return Ok(*attrs);
        }
        let mut pmi = launcher()?;
        let attrs = WorldAttrs {
            appnum: pmi.appnum().map_err(pmi_error)?,
            universe_size: pmi.universe_size().map_err(pmi_error)?,
        };
        Ok(*self.world_attrs.get_or_init(|| attrs))
    }

    /// A layout whose launcher facts are already known (tests build jobs without a launcher).
    #[cfg(test)]
    pub(crate) fn known(rank: ProcId, node_of: Vec<u32>, psets: Vec<ProcessSet>) -> JobLayout {
        JobLayout {
            rank,
            size: node_of.len() as u32,
            job_id: "j".into(),
            node_of,
            launcher_psets: OnceLock::from(psets),
            world_attrs: OnceLock::from(WorldAttrs {
                appnum: 0,
                universe_size: None,
            }),
        }
    }

    /// Asks now for everything asked for on first use: the launcher connection is about to
    /// close, and a later session may still need it.
    pub(super) fn learn_everything(&self) -> MpiResult<()> {
        self.launcher_psets()?;
        self.world_attrs().map(|_| ())
    }
}

fn pmi_error(e: weft_pmi::PmiError) -> MpiError {
    MpiError::new(ErrorClass::Other, format!("process manager: {e}"))
}

/// Put `pairs` into the job's key-value space and wait until every rank of the job has done
/// the same (a fence: collective over the job).
pub(super) fn kvs_publish(pairs: &[(String, String)]) -> MpiResult<()> {
    let mut pmi = launcher()?;
    for (key, value) in pairs {
        pmi.put(key, value).map_err(pmi_error)?;
    }
    pmi.fence().map_err(pmi_error)
}

/// What job rank `rank` published under `key`, if anything.
pub(super) fn kvs_read(rank: ProcId, key: &str) -> MpiResult<Option<String>> {
    launcher()?.get(rank, key).map_err(pmi_error)
}

/// The launcher connection, once a bootstrap made it.
fn launcher() -> MpiResult<MutexGuard<'static, PmiClient>> {
    PMI.get()
        .map(|pmi| pmi.lock().unwrap_or_else(|p| p.into_inner()))
        .ok_or_else(|| MpiError::new(ErrorClass::Other, "process manager: not connected"))
}

/// The launcher connection. `PMI_FD` can be taken over once per process: the client is
/// created by the bootstrap and finalized (told that this process ended normally) when the
/// last session ends (see `Instance::release`).
static PMI: OnceLock<Mutex<PmiClient>> = OnceLock::new();

/// The job layout, learnt from the launcher once per process.
static JOB: OnceLock<JobLayout> = OnceLock::new();

/// The job layout, learnt from the launcher once per process; `nodes` (`WEFT_NODES`)
/// replaces the launcher's node map with logical nodes.
pub(super) fn job_layout(
    version: Option<u8>,
    nodes: Option<NodesOverride>,
) -> MpiResult<&'static JobLayout> {
    if let Some(job) = JOB.get() {
        return Ok(job);
    }
    let mut pmi = PmiClient::from_env(version).map_err(|e| {
        MpiError::new(
            ErrorClass::Other,
            format!("cannot reach the process manager: {e}"),
        )
    })?;
    let node_of = match nodes {
        Some(nodes) => nodes.node_of(pmi.size()),
        None => pmi.node_of_ranks().map_err(pmi_error)?,
    };
    let job = JobLayout {
        rank: pmi.rank(),
        size: pmi.size(),
        job_id: pmi.kvs_name().to_owned(),
        node_of,
        launcher_psets: OnceLock::new(),
        world_attrs: OnceLock::new(),
    };
    if job.node_of.len() != job.size as usize {
        return Err(MpiError::new(
            ErrorClass::Other,
            format!(
                "process manager described {} ranks for a job of {}",
                job.node_of.len(),
                job.size
            ),
        ));
    }
    // Bootstrap runs under the CURRENT lock, so only one thread gets here.
    let _ = PMI.set(Mutex::new(pmi));
    Ok(JOB.get_or_init(|| job))
}

/// The job layout, once any session (or `MPI_Init`) has contacted the launcher.
pub fn job() -> Option<&'static JobLayout> {
    JOB.get()
}

/// A job id as it may appear in a shared-memory object name (no '/', short).
fn sanitize(job_id: &str) -> String {
    job_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

/// The launcher connection, if a bootstrap made it.
pub(super) fn connection() -> Option<&'static Mutex<PmiClient>> {
    PMI.get()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> JobLayout {
        JobLayout::known(
            1,
            vec![0, 0, 1, 1],
            vec![ProcessSet {
                name: "app://even".into(),
                members: vec![0, 2],
            }],
        )
    }

    #[test]
    fn local_ranks_follow_the_node_map() {
        let job = JobLayout::known(2, vec![0, 1, 1, 0, 1], Vec::new());
        assert_eq!(job.local_ranks(), vec![1, 2, 4]);
    }

    #[test]
    fn builtin_and_launcher_sets() {
        let job = job();
        let names: Vec<_> = job.psets().unwrap().into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            ["mpi://WORLD", "mpi://SELF", "mpix://SHARED", "app://even"]
        );
        let find = |name| job.find_pset(name, "f");
        assert_eq!(find("mpi://world").unwrap().members, vec![0, 1, 2, 3]);
        assert_eq!(find("MPI://SELF").unwrap().members, vec![1]);
        assert_eq!(find("mpi://shared").unwrap().members, vec![0, 1]);
        assert_eq!(find("app://even").unwrap().members, vec![0, 2]);
        assert!(find("APP://EVEN").is_err(), "user names are case-sensitive");
        let e = job
            .find_pset("nope", "MPI_Group_from_session_pset")
            .unwrap_err();
        assert_eq!(e.code, ErrorClass::Arg as i32);
        assert!(e.message.contains("nope"));
    }
}
