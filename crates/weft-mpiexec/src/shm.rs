//! The safety net for shared-memory segments a job left behind.
//!
//! The library names its segments `/dev/shm/weft.<kvsname>.<anything>` and normally
//! unlinks them itself; after the job, whatever is left of them is removed.
#![forbid(unsafe_code)]

use std::path::Path;

/// Removes the files of `dir` named `weft.<kvsname>.*`; returns how many were removed.
pub fn remove_job_segments(dir: &Path, kvsname: &str) -> usize {
    let prefix = format!("weft.{kvsname}.");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(&prefix))
        })
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_jobs_segments_go() {
        let dir = std::env::temp_dir().join(format!("weft-shm-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["weft.k1.a", "weft.k1.b", "weft.k10.a", "weft.k1", "other"] {
            std::fs::write(dir.join(name), b"").unwrap();
        }
        assert_eq!(remove_job_segments(&dir, "k1"), 2);
        let mut left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["other", "weft.k1", "weft.k10.a"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
