//! `MPI_INFO_ENV`: the predefined info object that says how the process was started.

use std::sync::{Arc, LazyLock};

use weft_core::object::Info;

/// `MPI_INFO_ENV`: how the process was started (the standard's reserved keys that a process
/// knows by itself).
pub(crate) static INFO_ENV: LazyLock<Arc<Info>> =
    LazyLock::new(|| Arc::new(Info::from_pairs(env_pairs(std::env::args().collect()))));

/// The reserved keys a process knows by itself: `command`, `argv` (the arguments after the
/// command, space separated), `maxprocs` (the job's size, when started by a launcher), `wdir`,
/// `arch`, `host`.
pub(crate) fn env_pairs(args: Vec<String>) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut args = args.into_iter();
    if let Some(command) = args.next() {
        pairs.push(("command".to_owned(), command));
    }
    let rest: Vec<String> = args.collect();
    if !rest.is_empty() {
        pairs.push(("argv".to_owned(), rest.join(" ")));
    }
    if let Some(size) = launcher_size() {
        pairs.push(("maxprocs".to_owned(), size.to_string()));
    }
    if let Ok(dir) = std::env::current_dir() {
        pairs.push(("wdir".to_owned(), dir.display().to_string()));
    }
    pairs.push(("arch".to_owned(), std::env::consts::ARCH.to_owned()));
    if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        pairs.push(("host".to_owned(), host.trim().to_owned()));
    }
    pairs
}

/// The job size the launcher announced (known before `MPI_Init` from the environment).
fn launcher_size() -> Option<u32> {
    if let Some(job) = weft_core::instance::job() {
        return Some(job.size);
    }
    ["PMI_SIZE", "WEFT_SIZE", "OMPI_COMM_WORLD_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}
