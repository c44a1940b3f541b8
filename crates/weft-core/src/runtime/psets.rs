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
pub fn all(job: &JobLayout) -> MpiResult<Vec<ProcessSet>> {
    let mut sets = builtin(job);
    sets.extend(job.launcher_psets()?.iter().cloned());
    Ok(sets)
}

/// `mpi://WORLD`, `mpi://SELF` and `mpix://SHARED`.
fn builtin(job: &JobLayout) -> Vec<ProcessSet> {
    [WORLD, SELF, SHARED]
        .map(|name| builtin_set(job, name))
        .into()
}

/// The built-in set called `name` (one of `WORLD`, `SELF`, `SHARED`).
fn builtin_set(job: &JobLayout, name: &'static str) -> ProcessSet {
    let members = match name {
        WORLD => (0..job.size).collect(),
        SELF => vec![job.rank],
        _ => job.local_ranks(),
    };
    ProcessSet {
        name: name.into(),
        members,
    }
}

/// Whether `asked` names the set called `name`: `mpi://` and `mpix://` names compare without
/// regard to case, and `mpi://shared` means `mpix://SHARED`.
pub fn name_matches(name: &str, asked: &str) -> bool {
    let has_prefix = |n: &str, prefix: &str| {
        n.get(..prefix.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
    };
    if has_prefix(name, "mpi://") || has_prefix(name, "mpix://") {
        name.eq_ignore_ascii_case(asked)
            || (name.eq_ignore_ascii_case(SHARED) && asked.eq_ignore_ascii_case("mpi://shared"))
    } else {
        name == asked
    }
}

/// The set called `asked` (a built-in name needs nothing from the launcher).
pub fn find(job: &JobLayout, asked: &str, func: &str) -> MpiResult<ProcessSet> {
    if let Some(name) = [WORLD, SELF, SHARED]
        .into_iter()
        .find(|n| name_matches(n, asked))
    {
        return Ok(builtin_set(job, name));
    }
    job.launcher_psets()?
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
    fn builtin_and_launcher_sets() {
        let job = job();
        let names: Vec<_> = all(&job).unwrap().into_iter().map(|s| s.name).collect();
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
