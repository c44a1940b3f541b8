//! Starting one rank: its PMI socket, output pipes, environment and CPU binding.
#![forbid(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};

use crate::cli::Program;
use crate::sys;

/// Variables a surrounding launcher may have set that would mislead the ranks' PMI client.
const FOREIGN_PMI_VARS: &[&str] = &["PMI_PORT", "PMI_ID", "PMI_JOBID", "PMI2_SUN_PATH"];

/// What every rank of the job shares.
#[derive(Debug)]
pub struct JobEnv {
    /// The job's size.
    pub size: u32,
    /// `PMI_HOSTNAME`.
    pub hostname: String,
    /// Variables for every rank (`-genv`).
    pub genv: Vec<(String, String)>,
    /// The CPUs to bind to, in rank order (cyclically); empty for no binding.
    pub cpus: Vec<usize>,
}

/// A started rank, seen from the launcher.
#[derive(Debug)]
pub struct Started {
    /// The process.
    pub child: Child,
    /// The launcher's end of the rank's PMI socket.
    pub pmi: UnixStream,
    /// The read ends of the rank's stdout and stderr.
    pub outputs: [File; 2],
}

/// Starts `rank` running `program`. Rank 0 shares the launcher's stdin; the others read
/// from `/dev/null`.
pub fn start(job: &JobEnv, rank: u32, program: &Program) -> io::Result<Started> {
    let (ours, theirs) = UnixStream::pair()?;
    let fd = theirs.as_raw_fd();
    let mut cmd = Command::new(&program.command);
    cmd.args(&program.args)
        .stdin(if rank == 0 {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in FOREIGN_PMI_VARS {
        cmd.env_remove(var);
    }
    cmd.envs(job.genv.iter().cloned())
        .envs(program.env.iter().cloned())
        .env("PMI_FD", fd.to_string())
        .env("PMI_RANK", rank.to_string())
        .env("PMI_SIZE", job.size.to_string())
        .env("PMI_HOSTNAME", &job.hostname)
        .env("MPI_LOCALNRANKS", job.size.to_string())
        .env("MPI_LOCALRANKID", rank.to_string())
        .env("WEFT_MPIEXEC", "1");
    if let Some(dir) = &program.wdir {
        cmd.current_dir(dir);
    }
    let cpu = (!job.cpus.is_empty()).then(|| job.cpus[rank as usize % job.cpus.len()]);
    sys::prepare_child(&mut cmd, fd, cpu);
    let mut child = cmd.spawn()?;
    drop(theirs);
    let missing = || io::Error::other("the rank's output pipes were not created");
    let stdout = File::from(OwnedFd::from(child.stdout.take().ok_or_else(missing)?));
    let stderr = File::from(OwnedFd::from(child.stderr.take().ok_or_else(missing)?));
    Ok(Started {
        child,
        pmi: ours,
        outputs: [stdout, stderr],
    })
}

/// This machine's name, for `PMI_HOSTNAME`.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}
