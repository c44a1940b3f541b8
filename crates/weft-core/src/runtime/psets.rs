//! Process sets: the named groups of processes a session can build communicators from.
//! `mpi://WORLD` and `mpi://SELF` (the standard's), `mpix://SHARED` (this node's ranks; the
//! seed's `mpi://shared` is accepted too), and sets defined at launch (`mpiexec --pset
//! NAME=RANKS`, published through PMI; under another launcher, `WEFT_PSETS`).
#![forbid(unsafe_code)]

use weft_pmi::PmiClient;

use super::instance::JobLayout;
use crate::error::{ErrorClass, MpiError, MpiResult};

/// A named set of job ranks (in rank order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessSet {
    pub name: String,
    pub members: Vec<u32>,
}

pub const WORLD: &str = "mpi://WORLD";
pub const SELF: &str = "mpi://SELF";
pub const SHARED: &str = "mpix://SHARED";

/// The process sets a session sees, in a fixed order: the built-in ones, then the
/// launcher's.
pub fn all(job: &JobLayout) -> Vec<ProcessSet> {
    let mut sets = vec![
        ProcessSet {
            name: WORLD.into(),
            members: (0..job.size).collect(),
        },
        ProcessSet {
            name: SELF.into(),
            members: vec![job.rank],
        },
        ProcessSet {
            name: SHARED.into(),
            members: job.local_ranks(),
        },
    ];
    sets.extend(job.launcher_psets.iter().cloned());
    sets
}

/// Whether `asked` names the set called `name`: `mpi://` and `mpix://` names compare without
/// regard to case, and `mpi://shared` means `mpix://SHARED`.
pub fn name_matches(name: &str, asked: &str) -> bool {
    let builtin = |n: &str| {
        n.to_ascii_lowercase().starts_with("mpi://")
            || n.to_ascii_lowercase().starts_with("mpix://")
    };
    if builtin(name) {
        let asked = asked.to_ascii_lowercase();
        let name = name.to_ascii_lowercase();
        name == asked || (name == "mpix://shared" && asked == "mpi://shared")
    } else {
        name == asked
    }
}

/// The set called `asked`.
pub fn find(job: &JobLayout, asked: &str, func: &str) -> MpiResult<ProcessSet> {
    all(job)
        .into_iter()
        .find(|s| name_matches(&s.name, asked))
        .ok_or_else(|| {
            MpiError::new(
                ErrorClass::Arg,
                format!("{func}(pset_name={asked:?}): no such process set"),
            )
        })
}

/// Launcher-defined sets: the PMI job attribute `weft_psets` (Weft's mpiexec), else the
/// `WEFT_PSETS` environment variable (`NAME=RANKS;NAME=RANKS`, e.g. `app://a=0-1;app://b=2`).
pub fn from_launcher(pmi: &mut PmiClient, job_size: u32) -> MpiResult<Vec<ProcessSet>> {
    let bad = |what: String| MpiError::new(ErrorClass::Other, what);
    let sets = match pmi.get_job_attr(weft_pmi::PSETS_KEY) {
        Ok(Some(value)) => weft_pmi::decode_psets(&value)
            .map_err(|e| bad(format!("process sets from mpiexec: {e}")))?,
        _ => match std::env::var("WEFT_PSETS") {
            Ok(text) => parse_env(&text, job_size)?,
            Err(_) => return Ok(Vec::new()),
        },
    };
    let mut out = Vec::new();
    for set in sets {
        if let Some(&r) = set.ranks.iter().find(|&&r| r >= job_size) {
            return Err(bad(format!(
                "process set {} names rank {r}, but the job has {job_size}",
                set.name
            )));
        }
        out.push(ProcessSet {
            name: set.name,
            members: set.ranks,
        });
    }
    Ok(out)
}

fn parse_env(text: &str, job_size: u32) -> MpiResult<Vec<weft_pmi::Pset>> {
    text.split(';')
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            weft_pmi::Pset::parse(s.trim(), job_size)
                .map_err(|e| MpiError::new(ErrorClass::Other, format!("WEFT_PSETS: {s:?}: {e}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> JobLayout {
        JobLayout {
            rank: 1,
            size: 4,
            appnum: 0,
            universe_size: None,
            job_id: "j".into(),
            node_of: vec![0, 0, 1, 1],
            launcher_psets: vec![ProcessSet {
                name: "app://even".into(),
                members: vec![0, 2],
            }],
        }
    }

    #[test]
    fn builtin_and_launcher_sets() {
        let job = job();
        let names: Vec<_> = all(&job).into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            ["mpi://WORLD", "mpi://SELF", "mpix://SHARED", "app://even"]
        );
        assert_eq!(
            find(&job, "mpi://world", "f").unwrap().members,
            vec![0, 1, 2, 3]
        );
        assert_eq!(find(&job, "MPI://SELF", "f").unwrap().members, vec![1]);
        assert_eq!(find(&job, "mpi://shared", "f").unwrap().members, vec![0, 1]);
        assert_eq!(find(&job, "app://even", "f").unwrap().members, vec![0, 2]);
        assert!(
            find(&job, "APP://EVEN", "f").is_err(),
            "user names are case-sensitive"
        );
        let e = find(&job, "nope", "MPI_Group_from_session_pset").unwrap_err();
        assert_eq!(e.code, ErrorClass::Arg as i32);
        assert!(e.message.contains("nope"));
    }

    #[test]
    fn env_sets_parse() {
        let sets = parse_env("a=0-1; b=3", 4).unwrap();
        assert_eq!(sets[0].ranks, vec![0, 1]);
        assert_eq!(sets[1].name, "b");
        assert!(parse_env("a=x", 4).is_err());
    }
}
