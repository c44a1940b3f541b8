//! `MPI_Comm_spawn`/`MPI_Comm_spawn_multiple` and the children's side (`MPI_Comm_get_parent`).
//!
//! The parents' root opens a port, starts Weft's `mpiexec` for the new job (one MPMD
//! segment per command, `-wdir` from the `wdir` info key) with `WEFT_PARENT_PORT` set to
//! the port, and accepts one connection on it; the children's `MPI_Init` connects their
//! `MPI_COMM_WORLD` (root 0) to that port, and both sides run the connect/accept handshake
//! (`object::connect`). The new job is a job of its own (its own launcher, key-value space,
//! shared-memory segment and context ids); parents and children reach each other through
//! the rings `transport::shm::foreign` opens.
//!
//! A command that cannot be started is found before anything is launched (it is looked up
//! the way `exec` would, in the `path` info directories first): the call then fails with
//! `MPI_ERR_SPAWN` on every parent. If the launched job ends before its root connected (it
//! failed to start), a watcher of the launcher process connects to the port in its stead
//! and says so, which fails the spawn the same way instead of waiting forever.
#![forbid(unsafe_code)]

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use super::port;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::object::connect::{handshake, Link, FAILED_MAGIC};
use crate::object::Comm;

/// One command of a spawn, with the info keys Weft honours.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub command: String,
    pub args: Vec<String>,
    pub maxprocs: u32,
    /// `wdir`: the directory the processes start in.
    pub wdir: Option<String>,
    /// `path`: directories (separated by `:`) searched for the command first.
    pub path: Option<String>,
    /// `host`: must name this machine.
    pub host: Option<String>,
}

/// The children's intercommunicator to their parents, until `MPI_Comm_get_parent` takes it.
static PARENT: Mutex<Option<Arc<Comm>>> = Mutex::new(None);

/// A job this process launched: the watcher of its launcher (it ends with the job), and the
/// intercommunicator the spawn gave (set once the spawn succeeded).
struct Launched {
    token: u64,
    watcher: std::thread::JoinHandle<()>,
    intercomm: Option<Weak<Comm>>,
}

/// The jobs this process launched and is still connected to.
static LAUNCHED: Mutex<Vec<Launched>> = Mutex::new(Vec::new());
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(0);

fn launched() -> std::sync::MutexGuard<'static, Vec<Launched>> {
    LAUNCHED.lock().unwrap_or_else(|p| p.into_inner())
}

/// At `MPI_Finalize`: wait until the jobs this process spawned and is still connected to
/// have ended (finalize is collective over connected processes; Weft waits for the whole
/// spawned job, so no process of it outlives its parent's launcher). A job whose
/// intercommunicator was disconnected (`MPI_Comm_disconnect`) finalizes independently: it is
/// not waited for.
pub fn wait_spawned() {
    let jobs = std::mem::take(&mut *launched());
    for job in jobs {
        let _ = job.watcher.join();
    }
}

/// `MPI_Comm_disconnect` of `comm`: if it is the intercommunicator of a spawn of this
/// process, the spawned job is no longer connected (its launcher's watcher is let go).
pub fn disconnected(comm: &Arc<Comm>) {
    launched().retain(|j| {
        !j.intercomm
            .as_ref()
            .is_some_and(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(comm)))
    });
}

/// Spawn `programs` from `comm` (`Some` at `root` only: the commands, or why the root's
/// arguments are wrong, which then fails the call on every process): the intercommunicator
/// to the children.
pub fn spawn(
    comm: &Comm,
    root: u32,
    programs: Option<MpiResult<Vec<Program>>>,
    func: &str,
) -> MpiResult<Arc<Comm>> {
    match programs.map(|p| p.and_then(|p| launch(comm, &p, func))) {
        None => handshake(comm, root, None, func),
        Some(Ok((mut stream, token))) => {
            let made = handshake(comm, root, Some(Ok(&mut stream as &mut dyn Link)), func);
            if let Ok(c) = &made {
                if let Some(j) = launched().iter_mut().find(|j| j.token == token) {
                    j.intercomm = Some(Arc::downgrade(c));
                }
            }
            made
        }
        Some(Err(e)) => handshake(comm, root, Some(Err(e)), func),
    }
}

/// What the root of an `MPI_Comm_accept` or `MPI_Comm_connect` passes: the port name and,
/// for a connect, the `timeout` info key's seconds (`None`: `WEFT_CONNECT_TIMEOUT`).
pub struct RootPort {
    pub name: String,
    pub timeout_s: Option<u64>,
}

/// `MPI_Comm_accept` (`accepting`) or `MPI_Comm_connect` on `comm`; `port` is `Some` at
/// `root` only (or why its arguments are wrong).
pub fn accept_or_connect(
    comm: &Comm,
    root: u32,
    port: Option<MpiResult<RootPort>>,
    accepting: bool,
    func: &str,
) -> MpiResult<Arc<Comm>> {
    let inst = &comm.session.instance;
    let root_link = |p: RootPort| -> MpiResult<Box<dyn Link>> {
        if accepting {
            return Ok(Box::new(port::accept(inst, &p.name, func)?));
        }
        let seconds = p.timeout_s.unwrap_or(inst.config.connect_timeout_s);
        let timeout = (seconds > 0).then(|| std::time::Duration::from_secs(seconds));
        Ok(Box::new(port::connect(&p.name, timeout, func)?))
    };
    match port.map(|p| p.and_then(root_link)) {
        None => handshake(comm, root, None, func),
        Some(Ok(mut s)) => handshake(comm, root, Some(Ok(s.as_mut())), func),
        Some(Err(e)) => handshake(comm, root, Some(Err(e)), func),
    }
}

/// The children's side, at the end of `MPI_Init`: connect `world` to the parents' port.
pub fn connect_parent(world: &Comm, port_name: &str) -> MpiResult<()> {
    let func = "MPI_Init";
    let port = (world.rank == 0).then(|| {
        Ok(RootPort {
            name: port_name.to_string(),
            timeout_s: None,
        })
    });
    let parent = accept_or_connect(world, 0, port, false, func)?;
    *PARENT.lock().unwrap_or_else(|p| p.into_inner()) = Some(parent);
    Ok(())
}

/// The parents' intercommunicator, once (the ABI keeps its handle).
pub fn take_parent() -> Option<Arc<Comm>> {
    PARENT.lock().unwrap_or_else(|p| p.into_inner()).take()
}

fn spawn_error(func: &str, why: String) -> MpiError {
    MpiError::new(ErrorClass::Spawn, format!("{func}: {why}"))
}

/// At the root: start the children's launcher and wait for their root's connection (and the
/// token of its `Launched` entry).
fn launch(comm: &Comm, programs: &[Program], func: &str) -> MpiResult<(UnixStream, u64)> {
    let inst = &comm.session.instance;
    let mut args = Vec::new();
    for (i, p) in programs.iter().enumerate() {
        if let Some(host) = &p.host {
            let here = [inst.processor_name.as_str(), "localhost", "127.0.0.1"];
            if !here.contains(&host.as_str()) {
                return Err(spawn_error(
                    func,
                    format!(
                        "host \"{host}\": Weft starts processes on this machine ({}) only",
                        inst.processor_name
                    ),
                ));
            }
        }
        let exe = resolve(p).ok_or_else(|| {
            spawn_error(
                func,
                format!("command \"{}\" not found or not executable", p.command),
            )
        })?;
        if i > 0 {
            args.push(":".to_string());
        }
        args.extend(["-n".to_string(), p.maxprocs.to_string()]);
        if let Some(dir) = &p.wdir {
            args.extend(["-wdir".to_string(), dir.clone()]);
        }
        args.push(exe.to_string_lossy().into_owned());
        args.extend(p.args.iter().cloned());
    }
    let mpiexec = find_mpiexec().ok_or_else(|| {
        spawn_error(
            func,
            "cannot find Weft's mpiexec next to the library".into(),
        )
    })?;
    let port_name = port::open(inst)?;
    let started = Command::new(&mpiexec)
        .args(&args)
        .env("WEFT_PARENT_PORT", &port_name)
        .stdin(Stdio::null())
        .spawn();
    let mut child = match started {
        Ok(c) => c,
        Err(e) => {
            let _ = port::close(&port_name);
            return Err(spawn_error(
                func,
                format!("cannot run {}: {e}", mpiexec.display()),
            ));
        }
    };
    let connected = Arc::new(AtomicBool::new(false));
    let watch = connected.clone();
    let watched_port = port_name.clone();
    // Reaps the launcher; if it ended before the children connected, says so on the port.
    let watcher = std::thread::spawn(move || {
        let status = child.wait();
        if !watch.load(Ordering::Acquire) {
            if let Ok(mut s) = port::connect(&watched_port, None, "MPI_Comm_spawn") {
                let why = format!("the spawned job ended before it connected ({status:?})");
                let mut hello = FAILED_MAGIC.to_vec();
                hello.extend_from_slice(why.as_bytes());
                let _ = s
                    .write_all(&(hello.len() as u64).to_le_bytes())
                    .and_then(|()| s.write_all(&hello));
                // Hold the connection until the root is done with it (it closes its end).
                let _ = std::io::copy(&mut s, &mut std::io::sink());
            }
        }
    });
    let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    {
        let mut jobs = launched();
        // Jobs that ended need no waiting: keep only the live ones.
        jobs.retain(|j| !j.watcher.is_finished());
        jobs.push(Launched {
            token,
            watcher,
            intercomm: None,
        });
    }
    let accepted = port::accept(inst, &port_name, func);
    connected.store(true, Ordering::Release);
    let _ = port::close(&port_name);
    accepted.map(|s| (s, token))
}

/// Where the command of `p` is: as given if it has a `/` (relative to `wdir`), else the
/// first executable of that name in `path`, `PATH`, then `wdir` or the current directory.
fn resolve(p: &Program) -> Option<PathBuf> {
    let base = p
        .wdir
        .as_deref()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    if p.command.contains('/') {
        let path = Path::new(&p.command);
        let full = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir().ok()?.join(&base).join(path)
        };
        return executable(&full).then_some(full);
    }
    let env_path = std::env::var("PATH").unwrap_or_default();
    let dirs = p
        .path
        .iter()
        .flat_map(|d| d.split(':'))
        .chain(env_path.split(':'))
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .chain(std::env::current_dir().ok().map(|c| c.join(&base)));
    dirs.map(|d| d.join(&p.command)).find(|f| executable(f))
}

fn executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Weft's `mpiexec`: `../bin/mpiexec` from the directory of the MPI library this process
/// runs (read from `/proc/self/maps`), else `mpiexec` next to the program.
fn find_mpiexec() -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let lib = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            let name = Path::new(p)
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("");
            name.starts_with("libmpi_abi.so") || name.starts_with("libmpi.so")
        });
    let candidates = lib
        .and_then(|l| Path::new(l).parent().map(|d| d.join("../bin/mpiexec")))
        .into_iter()
        .chain(
            std::env::current_exe()
                .ok()
                .and_then(|e| e.parent().map(|d| d.join("mpiexec"))),
        );
    candidates.into_iter().find(|c| executable(c))
}
