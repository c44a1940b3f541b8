//! The safety net for shared-memory segments jobs left behind.
//!
//! The library names its segments `/dev/shm/weft.<kvsname>.<anything>` and normally
//! unlinks them itself; after the job, whatever is left of them is removed. A launcher
//! that was killed (SIGKILL) cannot clean up, so every launcher also sweeps, when it
//! starts, the segments of jobs whose launcher is gone: a job name says which launcher it
//! belongs to (`weft-<pid>-<start>-<random>`, `start` being that process's start time),
//! and the job is dead when no process with that pid and start time exists (a pid reused
//! by a later process does not count). Only names of that form are touched; a launcher in
//! another pid namespace sharing `/dev/shm` would be taken for dead.
#![forbid(unsafe_code)]

use std::path::Path;

/// The name of a job of this launcher: `weft-<pid>-<start>-<random>`.
pub fn job_name(random: &str) -> String {
    let pid = std::process::id();
    let start = start_time(pid).unwrap_or(0);
    format!("weft-{pid}-{start}-{random}")
}

/// The start time of process `pid` (clock ticks after boot, field 22 of
/// `/proc/<pid>/stat`), if it runs.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which is in parentheses and may hold anything.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// The launcher (pid, start time) a job name of [`job_name`]'s form belongs to.
fn launcher_of(job: &str) -> Option<(u32, u64)> {
    let mut parts = job.strip_prefix("weft-")?.splitn(3, '-');
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    let random = parts.next()?;
    (!random.is_empty() && random.bytes().all(|b| b.is_ascii_hexdigit())).then_some((pid, start))
}

/// Removes the files of `dir` named `weft.<kvsname>.*`; returns how many were removed.
pub fn remove_job_segments(dir: &Path, kvsname: &str) -> usize {
    let prefix = format!("weft.{kvsname}.");
    remove_where(dir, |name| name.starts_with(&prefix))
}

/// Removes the segments in `dir` of jobs whose launcher `running(pid, start)` says is
/// gone; returns how many were removed. Does nothing when this process's own start time
/// cannot be read (then no launcher's can: every job would look dead).
pub fn sweep_dead_jobs(dir: &Path, running: impl Fn(u32, u64) -> bool) -> usize {
    if start_time(std::process::id()).is_none() {
        return 0;
    }
    remove_where(dir, |name| {
        let job = name.strip_prefix("weft.").and_then(|n| n.split('.').next());
        job.and_then(launcher_of)
            .is_some_and(|(pid, start)| !running(pid, start))
    })
}

/// Whether the launcher `pid` started at `start` still runs.
pub fn launcher_running(pid: u32, start: u64) -> bool {
    start_time(pid) == Some(start)
}

/// Removes the files of `dir` whose names `pick` chooses (those this user may remove).
fn remove_where(dir: &Path, pick: impl Fn(&str) -> bool) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(&pick))
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str, names: &[&str]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("weft-shm-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in names {
            std::fs::write(dir.join(name), b"").unwrap();
        }
        dir
    }

    fn left(dir: &Path) -> Vec<String> {
        let mut left: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        left
    }

    #[test]
    fn only_the_jobs_segments_go() {
        let dir = scratch(
            "job",
            &["weft.k1.a", "weft.k1.b", "weft.k10.a", "weft.k1", "other"],
        );
        assert_eq!(remove_job_segments(&dir, "k1"), 2);
        assert_eq!(left(&dir), ["other", "weft.k1", "weft.k10.a"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn job_names_say_which_launcher_runs_them() {
        let name = job_name("00ff");
        let (pid, start) = launcher_of(&name).expect(&name);
        assert_eq!(pid, std::process::id());
        assert!(launcher_running(pid, start), "{name}: this process runs");
        assert!(
            !launcher_running(pid, start + 1),
            "same pid, another start: not it"
        );
        assert_eq!(launcher_of("weft-12-34-abc"), Some((12, 34)));
        for other in [
            "weft-12-abc",
            "weft-x-34-abc",
            "weft-12-34-",
            "weft-12-34-xyz",
            "kvs_1_0",
        ] {
            assert_eq!(launcher_of(other), None, "{other}");
        }
    }

    #[test]
    fn the_segments_of_dead_launchers_are_swept() {
        let dir = scratch(
            "sweep",
            &[
                "weft.weft-10-5-aa.node0",
                "weft.weft-10-5-aa.coll.10.1",
                "weft.weft-11-6-bb.node0",
                "weft.kvs_3_0.node0",
                "weft.singleton-1-2.node0",
                "other",
            ],
        );
        // Launcher 11 (started at 6) runs; launcher 10 is gone.
        assert_eq!(
            sweep_dead_jobs(&dir, |pid, start| (pid, start) == (11, 6)),
            2
        );
        assert_eq!(
            left(&dir),
            [
                "other",
                "weft.kvs_3_0.node0",
                "weft.singleton-1-2.node0",
                "weft.weft-11-6-bb.node0"
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
