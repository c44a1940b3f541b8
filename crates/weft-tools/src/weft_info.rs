//! weft-info: what this Weft build is and how it is configured.
//!
//! Prints the version, the build configuration, the transports and extensions with their
//! state, every `WEFT_*` variable with its current value and meaning, and a count of the
//! MPI functions not implemented yet (`--missing` lists them); `--cvars` and `--pvars` list
//! the MPI_T variables as a tool sees them.
#![forbid(unsafe_code)]

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

use weft_core::config::{Config, VARIABLES};

/// Transports and whether this build has them.
const TRANSPORTS: &[(&str, &str)] = &[
    ("self", "available: messages to the same rank"),
    (
        "shm",
        "available: shared-memory cell rings between processes of a node",
    ),
    (
        "thread",
        "available: thread ranks of one process (MPIX_Threadcomm): a lock-free queue per \
         rank, eager copy up to 16 KiB, single copy above",
    ),
];

/// The UCX transport: whether this build has it, and what UCX sees on this machine.
fn ucx_state() -> String {
    use weft_core::transport::ucx;
    let Some(library) = ucx::library_version() else {
        return "not built (libucx-dev was absent at build time): one node only".into();
    };
    let seen = match ucx::transports_seen() {
        Ok(t) if t.is_empty() => "none".into(),
        Ok(t) => t.join(" "),
        Err(e) => format!("none ({e})"),
    };
    format!(
        "built against UCX {}, running {library}: ranks on other nodes; transports seen (UCX_TLS={}): {seen}",
        ucx::BUILD_VERSION,
        std::env::var("UCX_TLS").unwrap_or_else(|_| "all".into())
    )
}

/// The PMIx client: whether OpenPMIx's library can be loaded (it is needed only under a
/// PMIx launcher such as Open MPI's `mpirun`).
fn pmix_state() -> String {
    match weft_pmi::pmix_library_version() {
        Some(version) => format!(
            "loaded {version}: Open MPI's mpirun, PRRTE's prterun and srun --mpi=pmix launch Weft"
        ),
        None => "not found (libpmix.so.2; Debian: libpmix2): PMIx launchers cannot start Weft programs (PMI-1/PMI-2 launchers can)".into(),
    }
}

/// Whether single-copy large messages (cross-memory attach) work on this machine.
fn cma_state() -> String {
    match weft_core::transport::cma::probe() {
        Ok(()) => {
            "available: this kernel allows process_vm_readv between processes (WEFT_SHM_LARGE=auto, cma)"
                .into()
        }
        Err(e) => format!("refused by this kernel ({e}): large messages use the pipelined path"),
    }
}

/// Whether nonblocking MPI-IO can run in the kernel (io_uring) on this machine.
fn uring_state() -> String {
    match weft_core::io::nb::probe_uring() {
        Ok(()) => "available: nonblocking MPI-IO runs in the kernel (WEFT_IO_ENGINE)".into(),
        Err(e) => {
            format!("refused by this kernel ({e}): nonblocking MPI-IO uses pread/pwrite in poll_fn")
        }
    }
}

/// Extensions and the function-name prefixes that make them up.
const EXTENSIONS: &[(&str, &[&str])] = &[
    (
        "generalized requests with poll/wait and classes",
        &["MPIX_Grequest_", "MPIX_Request_is_complete"],
    ),
    (
        "progress control and progress threads",
        &[
            "MPIX_Stream_progress",
            "MPIX_Start_progress_thread",
            "MPIX_Stop_progress_thread",
        ],
    ),
    ("datatype iovec access", &["MPIX_Type_iov"]),
    (
        "MPIX streams",
        &[
            "MPIX_Stream_create",
            "MPIX_Stream_free",
            "MPIX_Stream_comm_create",
            "MPIX_Stream_send",
            "MPIX_Stream_isend",
            "MPIX_Stream_recv",
            "MPIX_Stream_irecv",
            "MPIX_Comm_get_stream",
        ],
    ),
    (
        "enqueue onto offload streams",
        &[
            "MPIX_Info_set_hex",
            "MPIX_Send_enqueue",
            "MPIX_Recv_enqueue",
            "MPIX_Isend_enqueue",
            "MPIX_Irecv_enqueue",
            "MPIX_Wait_enqueue",
            "MPIX_Waitall_enqueue",
            "MPIX_Allreduce_enqueue",
        ],
    ),
    (
        "thread communicators",
        &["MPIX_Threadcomm_", "MPIX_Comm_test_threadcomm"],
    ),
    (
        "MPI Sessions",
        &[
            "MPI_Session_",
            "MPI_Group_from_session_pset",
            "MPI_Comm_create_from_group",
            "MPI_Intercomm_create_from_groups",
        ],
    ),
    (
        "RMA proposals",
        &["MPIX_Win_", "MPIX_Memhandle_", "MPIX_Rr"],
    ),
];

fn usage() -> &'static str {
    "usage: weft-info [--missing] [--config] [--cvars] [--pvars] [--help]\n\
     \x20 (no option)  everything: version, build, transports, extensions, configuration, coverage\n\
     \x20 --missing    list every exported function that is not implemented yet\n\
     \x20 --config     only the WEFT_* variables with their current values\n\
     \x20 --cvars      the MPI_T control variables: type, scope, binding, value, meaning\n\
     \x20 --pvars      the MPI_T performance variables and events: class, binding, elements, meaning"
}

/// The control variables as MPI_T shows them (`weft_core::tools::cvars`).
fn print_cvars(out: &mut String) {
    use weft_core::tools::cvars::{self, Bind, Scope};
    let _ = writeln!(out, "MPI_T control variables ({}):", cvars::cvars().len());
    for (i, var) in cvars::cvars().iter().enumerate() {
        let ty = match &var.choices {
            Some(c) => format!("enum {{{}}}", c.join(", ")),
            None => "int".into(),
        };
        let scope = match var.scope {
            Scope::ReadOnly => "readonly",
            Scope::Local => "local, writable",
            Scope::GroupEq => "group_eq, writable",
        };
        let value = match var.bind {
            Bind::NoObject => {
                let v = cvars::read(i, None);
                match &var.choices {
                    Some(c) => c.get(v as usize).map_or(v.to_string(), |s| s.to_string()),
                    None => v.to_string(),
                }
            }
            Bind::Comm => "per communicator".into(),
        };
        let _ = writeln!(
            out,
            "  {i:>3} {:<24} {ty}; {scope}; value {value}",
            var.name
        );
        let _ = writeln!(out, "      [{}] {}", var.category, var.desc);
    }
}

/// The performance variables and events as MPI_T shows them (`weft_core::tools::pvars`).
fn print_pvars(out: &mut String) {
    use weft_core::tools::pvars::{self, Class};
    let _ = writeln!(
        out,
        "MPI_T performance variables ({}), all unsigned long long:",
        pvars::pvars().len()
    );
    for (i, p) in pvars::pvars().iter().enumerate() {
        let class = match p.class {
            Class::Level => "level, continuous, readonly",
            Class::HighWaterMark => "highwatermark, continuous, readonly",
            Class::Counter => "counter, start/stop",
        };
        let bind = if p.bound_to_comm() {
            "per communicator"
        } else {
            "process"
        };
        let _ = writeln!(
            out,
            "  {i:>3} {:<36} {class}; {bind}; {} element(s)",
            p.name,
            p.count()
        );
        let _ = writeln!(out, "      [{}] {}", p.category, p.desc);
    }
    let _ = writeln!(out, "MPI_T events (elements: int64 each):");
    for (i, e) in weft_core::tools::EVENTS.iter().enumerate() {
        let _ = writeln!(out, "  {i:>3} {:<36} ({})", e.name, e.fields.join(", "));
        let _ = writeln!(out, "      {}", e.desc);
    }
}

fn print_config(out: &mut String) -> Result<(), String> {
    let config = Config::from_env().map_err(|e| e.message)?;
    let _ = writeln!(out, "Configuration (environment variables):");
    for (var, value) in config.describe() {
        let set = std::env::var(var.name).is_ok();
        let origin = if set { "set" } else { "default" };
        let _ = writeln!(
            out,
            "  {:<22} = {:<6} ({origin}, default {})",
            var.name, value, var.default
        );
        let _ = writeln!(out, "      {}", var.meaning);
    }
    debug_assert_eq!(VARIABLES.len(), config.describe().len());
    Ok(())
}

/// How many of an extension's functions are still missing, as a word.
fn extension_state(prefixes: &[&str]) -> &'static str {
    let missing = weft_abi::UNIMPLEMENTED
        .iter()
        .filter(|name| prefixes.iter().any(|p| name.starts_with(p)))
        .count();
    if missing == 0 {
        "implemented"
    } else {
        "not yet"
    }
}

fn print_all(out: &mut String) -> Result<(), String> {
    let _ = writeln!(
        out,
        "Weft {} — MPI 5.0, standard ABI 1.0 (libmpi_abi.so.1)",
        env!("CARGO_PKG_VERSION")
    );
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let _ = writeln!(
        out,
        "Build: {profile}, {}-{}",
        std::env::consts::ARCH,
        std::env::consts::OS
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "Transports:");
    for (name, state) in TRANSPORTS {
        let _ = writeln!(out, "  {name:<8} {state}");
    }
    let _ = writeln!(out, "  {:<8} {}", "ucx", ucx_state());
    let _ = writeln!(out, "  {:<8} {}", "cma", cma_state());
    let _ = writeln!(out, "  {:<8} {}", "io_uring", uring_state());
    let _ = writeln!(
        out,
        "  {:<8} {} (offload streams of type \"cudaStream_t\"; \"weft_host_queue\" needs none)",
        "cuda",
        weft_abi::cuda::describe()
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Launchers (PMI-1/PMI-2: Weft's mpiexec, Hydra, srun --mpi=pmi2):"
    );
    let _ = writeln!(out, "  {:<8} {}", "pmix", pmix_state());
    let _ = writeln!(out);
    let _ = writeln!(out, "Extensions:");
    for (name, prefixes) in EXTENSIONS {
        let _ = writeln!(
            out,
            "  {:<12} {name} ({}*)",
            extension_state(prefixes),
            prefixes.join("*, ")
        );
    }
    let _ = writeln!(out);
    print_config(out)?;
    let _ = writeln!(out);
    let missing = weft_abi::UNIMPLEMENTED.len();
    let total = weft_abi::EXPORTED_FUNCTIONS;
    let _ = writeln!(
        out,
        "Functions: {total} exported, {} implemented, {missing} not implemented yet \
         (they return MPI_ERR_UNSUPPORTED_OPERATION; `weft-info --missing` lists them)",
        total - missing
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut out = String::new();
    let result = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => print_all(&mut out),
        ["--missing"] => {
            weft_abi::UNIMPLEMENTED.iter().for_each(|name| {
                let _ = writeln!(out, "{name}");
            });
            Ok(())
        }
        ["--config"] => print_config(&mut out),
        ["--cvars"] => {
            print_cvars(&mut out);
            Ok(())
        }
        ["--pvars"] => {
            print_pvars(&mut out);
            Ok(())
        }
        ["--help"] | ["-h"] => {
            let _ = writeln!(out, "{}", usage());
            Ok(())
        }
        _ => {
            eprintln!("{}", usage());
            return ExitCode::from(2);
        }
    };
    // A reader that stops early (`weft-info --missing | head`) is not an error.
    let _ = std::io::stdout().write_all(out.as_bytes());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("weft-info: {message}");
            ExitCode::FAILURE
        }
    }
}
