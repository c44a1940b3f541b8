//! Process sets: the named groups of processes a session can build communicators from.
//! `mpi://WORLD` and `mpi://SELF` (the standard's), `mpix://SHARED` (this node's ranks; the
//! seed's `mpi://shared` is accepted too), and sets defined at launch (`mpiexec --pset
//! NAME=RANKS`, published through PMI; under another launcher, `WEFT_PSETS`).
#![forbid(unsafe_code)]

use weft_pmi::PmiClient;

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

/// Launcher-defined sets: Weft's mpiexec's `--pset` (the PMI job attribute `weft_psets`) or
/// PRRTE's `--pset` (under PMIx), else the `WEFT_PSETS` environment variable
/// (`NAME=RANKS;NAME=RANKS`, e.g. `app://a=0-1;app://b=2`).
pub fn from_launcher(pmi: &mut PmiClient, job_size: u32) -> MpiResult<Vec<ProcessSet>> {
    let bad = |what: String| MpiError::new(ErrorClass::Other, what);
    let sets = match pmi.launcher_psets() {
        Ok(Some(sets)) => sets,
        Err(e @ weft_pmi::PmiError::Malformed { .. }) => {
            return Err(bad(format!("process sets from the launcher: {e}")))
        }
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

    #[test]
    fn env_sets_parse() {
        let sets = parse_env("a=0-1; b=3", 4).unwrap();
        assert_eq!(sets[0].ranks, vec![0, 1]);
        assert_eq!(sets[1].name, "b");
        assert!(parse_env("a=x", 4).is_err());
    }
}
