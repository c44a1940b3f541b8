//! Typed configuration: every tunable is a `WEFT_*` environment variable, parsed once.
//!
//! `VARIABLES` is the single list of them; `weft-info` prints it with current values and
//! `docs/configuration.md` documents it. A malformed value is an error at init that names
//! the variable, never a silent default.
#![forbid(unsafe_code)]

use crate::error::{ErrorClass, MpiError, MpiResult};

/// One documented `WEFT_*` variable.
pub struct Variable {
    pub name: &'static str,
    pub default: &'static str,
    pub meaning: &'static str,
}

/// Every variable Weft reads.
pub const VARIABLES: &[Variable] = &[
    Variable {
        name: "WEFT_NUM_VCIS",
        default: "1",
        meaning: "number of implicit VCIs (virtual communication interfaces) communicators are hashed onto (1..=64)",
    },
    Variable {
        name: "WEFT_MAX_STREAMS",
        default: "64",
        meaning: "most MPIX streams a process may have at once, each with a VCI of its own (0..=128; MPIX_Stream_create fails beyond it)",
    },
    Variable {
        name: "WEFT_PMI_VERSION",
        default: "auto",
        meaning: "PMI wire protocol to speak to the launcher: 1, 2, or auto (PMI-2 under Slurm, PMI-1 otherwise)",
    },
    Variable {
        name: "WEFT_NODES",
        default: "launcher",
        meaning: "logical nodes: launcher (the launcher's node map), per-rank (every rank its own node), or K (the ranks in K contiguous blocks); ranks on different nodes talk through UCX, never shared memory",
    },
    Variable {
        name: "WEFT_SHM_CELLS",
        default: "64",
        meaning: "cells in each shared-memory receive ring (a power of two, 4..=4096)",
    },
    Variable {
        name: "WEFT_SHM_CELL_SIZE",
        default: "16384",
        meaning: "bytes per shared-memory cell, header included (a multiple of 64, 256..=1048576)",
    },
    Variable {
        name: "WEFT_EAGER_MAX",
        default: "cell payload",
        meaning: "largest message sent eagerly (copied through a cell); larger ones use rendezvous",
    },
    Variable {
        name: "WEFT_SHM_LARGE",
        default: "auto",
        meaning: "large-message path on a node: auto (single copy when the receiving VCI has large sends of its own in flight, so that both cores would otherwise copy every byte twice; pipeline otherwise), pipeline (two copies through cache-resident cells) or cma (single copy with process_vm_readv); auto and cma fall back to pipeline where the kernel refuses",
    },
    Variable {
        name: "WEFT_PROGRESS_SPIN",
        default: "auto",
        meaning: "empty progress polls before a waiting thread starts yielding its core (no system call before that); auto: 20000, or 16 when the node runs more ranks than CPUs",
    },
    Variable {
        name: "WEFT_ERROR_BACKTRACE",
        default: "0",
        meaning: "1: a fatal MPI error also prints the Rust backtrace of the failing call",
    },
    Variable {
        name: "WEFT_STATS",
        default: "0",
        meaning: "1: at MPI_Finalize rank 0 prints a table of every rank's messages, bytes, time in MPI, wait time and unexpected-queue high-water mark to stderr; a path: writes it to that file instead",
    },
    Variable {
        name: "WEFT_TRACE",
        default: "",
        meaning: "a path: every MPI call of every rank and thread (start, end, communicator; bytes and peer for point-to-point) is written there as Chrome/Perfetto trace-event JSON at MPI_Finalize (each rank's part as path.RANK if it aborts)",
    },
    Variable {
        name: "WEFT_NAME_DIR",
        default: "",
        meaning: "the directory of the name service (MPI_Publish_name/MPI_Lookup_name): one file per published name; jobs that should see each other's names use the same directory (default: weft-names-UID in the temporary directory)",
    },
    Variable {
        name: "WEFT_CONNECT_TIMEOUT",
        default: "180",
        meaning: "seconds MPI_Comm_connect waits for an MPI_Comm_accept on an open port before it fails with MPI_ERR_PORT (0: no limit); the connect's timeout info key overrides it for one call. MPICH's MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT and MPIR_CVAR_CH3_COMM_CONNECT_TIMEOUT are read too when this is unset",
    },
    Variable {
        name: "WEFT_PARENT_PORT",
        default: "",
        meaning: "set by MPI_Comm_spawn for the children it starts: the port their MPI_Init connects to (the parent's intercommunicator); not for users",
    },
    Variable {
        name: "WEFT_COLL_BARRIER",
        default: "auto",
        meaning: "force the barrier algorithm: auto, dissemination, tree or shm (shared-memory flags; ranks on one node)",
    },
    Variable {
        name: "WEFT_COLL_BCAST",
        default: "auto",
        meaning: "force the broadcast algorithm: auto, binomial, scatter_allgather, linear or shm (ranks on one node, messages up to WEFT_COLL_SHM_MAX)",
    },
    Variable {
        name: "WEFT_COLL_REDUCE",
        default: "auto",
        meaning: "force the reduce algorithm: auto, binomial, rabenseifner (commutative ops), linear or shm (ranks on one node, messages up to WEFT_COLL_SHM_MAX)",
    },
    Variable {
        name: "WEFT_COLL_ALLREDUCE",
        default: "auto",
        meaning: "force the allreduce algorithm: auto, recursive_doubling, rabenseifner, ring (both commutative ops only), reduce_bcast or shm (ranks on one node, messages up to WEFT_COLL_SHM_MAX)",
    },
    Variable {
        name: "WEFT_COLL_ALLGATHER",
        default: "auto",
        meaning: "force the allgather(v) algorithm: auto, ring, recursive_doubling, bruck or shm (ranks on one node, blocks up to WEFT_COLL_SHM_MAX)",
    },
    Variable {
        name: "WEFT_COLL_ALLTOALL",
        default: "auto",
        meaning: "force the all-to-all algorithm: auto, linear, pairwise, bruck or shm (ranks on one node, send buffers up to WEFT_COLL_SHM_MAX)",
    },
    Variable {
        name: "WEFT_COLL_GATHER",
        default: "auto",
        meaning: "force the gather(v) and scatter algorithm: auto, linear, binomial or shm (ranks on one node, blocks up to WEFT_COLL_SHM_MAX)",
    },
    Variable {
        name: "WEFT_COLL_SCAN",
        default: "auto",
        meaning: "force the scan and exscan algorithm: auto, recursive_doubling or shm (ranks on one node, messages up to WEFT_COLL_SHM_MAX)",
    },
    Variable {
        name: "WEFT_COLL_REDUCE_SCATTER",
        default: "auto",
        meaning: "force the reduce-scatter(-block) algorithm: auto, pairwise (commutative ops), reduce_scatterv or shm (ranks on one node, whole vectors up to WEFT_COLL_SHM_MAX)",
    },
    Variable {
        name: "WEFT_COLL_SHM_MAX",
        default: "4096",
        meaning: "largest message (bytes) of the node-level shared-memory collectives on communicators of 2..=64 ranks on one node (0..=65536; 0 turns the path off)",
    },
    Variable {
        name: "WEFT_COLL_SHM_STREAM_MAX",
        default: "262144",
        meaning: "largest broadcast or allreduce (bytes) streamed through the node-level shared-memory area in parts of WEFT_COLL_SHM_MAX bytes, one copy in and one copy out per reader (0..=2^30; at most WEFT_COLL_SHM_MAX turns streaming off)",
    },
    Variable {
        name: "WEFT_IO_CB_BUFFER_SIZE",
        default: "16777216",
        meaning: "MPI-IO collective buffering: bytes an aggregator gathers per round (default of the cb_buffer_size hint; k/m/g suffixes)",
    },
    Variable {
        name: "WEFT_IO_CB_NODES",
        default: "0",
        meaning: "MPI-IO collective buffering: number of aggregator ranks, 0 for every rank (default of the cb_nodes hint)",
    },
    Variable {
        name: "WEFT_IO_CB_READ",
        default: "automatic",
        meaning: "MPI-IO collective reads aggregate: automatic (when the ranks' accesses interleave in pieces averaging under 64 KiB), enable or disable (default of the romio_cb_read hint)",
    },
    Variable {
        name: "WEFT_IO_CB_WRITE",
        default: "automatic",
        meaning: "MPI-IO collective writes aggregate: automatic, enable or disable (default of the romio_cb_write hint)",
    },
    Variable {
        name: "WEFT_IO_ENGINE",
        default: "auto",
        meaning: "how nonblocking MPI-IO reaches the kernel: auto (io_uring where allowed, else posix), uring, or posix (pread/pwrite in slices inside the requests' poll_fn)",
    },
    Variable {
        name: "WEFT_IO_URING_WORKERS",
        default: "1",
        meaning: "kernel worker threads io_uring may use per process for file I/O, 0 for the kernel's default (few workers keep them from competing with the ranks for cores)",
    },
];

/// MPICH's default connect timeout, seconds.
const DEFAULT_CONNECT_TIMEOUT_S: u64 = 180;
/// MPICH's control variables for the connect timeout, read when `WEFT_CONNECT_TIMEOUT` is unset.
const MPICH_CONNECT_TIMEOUT: [&str; 2] = [
    "MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT",
    "MPIR_CVAR_CH3_COMM_CONNECT_TIMEOUT",
];

/// How large messages travel between processes of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LargeMode {
    /// Single copy while the receiving VCI sends large messages of its own (both cores busy:
    /// the pipeline would make each copy every byte twice), the pipeline otherwise (sender
    /// and receiver each copy once, in parallel, through cells that stay in cache).
    Auto,
    /// Two copies through cells that stay in cache.
    Pipeline,
    /// Single copy with cross-memory attach, where the kernel allows it.
    Cma,
}

/// How ranks are placed on logical nodes (`WEFT_NODES`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodesOverride {
    /// Every rank its own node.
    PerRank,
    /// The ranks in this many contiguous blocks (the first `size % K` blocks one rank larger).
    Blocks(u32),
}

impl NodesOverride {
    /// The node of every rank of a job of `size` ranks.
    pub fn node_of(self, size: u32) -> Vec<u32> {
        match self {
            NodesOverride::PerRank => (0..size).collect(),
            NodesOverride::Blocks(k) => {
                let k = k.min(size).max(1);
                let (base, extra) = (size / k, size % k);
                (0..k)
                    .flat_map(|b| std::iter::repeat(b).take((base + u32::from(b < extra)) as usize))
                    .collect()
            }
        }
    }
}

/// Where the `WEFT_STATS` table goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StatsOutput {
    Stderr,
    File(String),
}

/// The parsed configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub num_vcis: usize,
    /// VCIs set aside for MPIX streams (after the implicit ones).
    pub max_streams: usize,
    pub shm_cells: usize,
    pub shm_cell_size: usize,
    /// `None`: as much as a cell carries.
    pub eager_max: Option<usize>,
    pub shm_large: LargeMode,
    /// `None`: chosen at init from the node's load (see `Instance`).
    pub progress_spin: Option<u32>,
    pub pmi_version: Option<u8>,
    /// `WEFT_NODES`: `None` keeps the launcher's node map.
    pub nodes: Option<NodesOverride>,
    pub error_backtrace: bool,
    /// Where `WEFT_STATS` prints its table at `MPI_Finalize`, if anywhere.
    pub stats: Option<StatsOutput>,
    /// Where `WEFT_TRACE` writes the trace, if anywhere.
    pub trace: Option<String>,
    /// `WEFT_NAME_DIR`: the name service's directory (`None`: the default one).
    pub name_dir: Option<String>,
    /// `WEFT_PARENT_PORT`: the port of the job that spawned this one, if any.
    pub parent_port: Option<String>,
    /// `WEFT_CONNECT_TIMEOUT`: seconds a connect waits for its accept (0: no limit).
    pub connect_timeout_s: u64,
    /// Forced collective algorithms (`WEFT_COLL_*`).
    pub coll: crate::coll::CollConfig,
    /// MPI-IO defaults (`WEFT_IO_*`).
    pub io: crate::io::config::IoConfig,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            num_vcis: 1,
            max_streams: 64,
            shm_cells: 64,
            shm_cell_size: 16384,
            eager_max: None,
            shm_large: LargeMode::Auto,
            progress_spin: None,
            pmi_version: None,
            nodes: None,
            error_backtrace: false,
            stats: None,
            trace: None,
            name_dir: None,
            parent_port: None,
            connect_timeout_s: DEFAULT_CONNECT_TIMEOUT_S,
            coll: crate::coll::CollConfig::default(),
            io: crate::io::config::IoConfig::default(),
        }
    }
}

impl Config {
    /// Read the configuration from the process environment.
    pub fn from_env() -> MpiResult<Config> {
        Config::from_lookup(|name| std::env::var(name).ok())
    }

    /// Read the configuration through `lookup` (the environment, or a test's map).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> MpiResult<Config> {
        let mut config = Config::default();
        if let Some(v) = lookup("WEFT_NUM_VCIS") {
            config.num_vcis = parse_in_range("WEFT_NUM_VCIS", &v, 1, 64)?;
        }
        if let Some(v) = lookup("WEFT_MAX_STREAMS") {
            config.max_streams = parse_in_range("WEFT_MAX_STREAMS", &v, 0, 128)?;
        }
        if let Some(v) = lookup("WEFT_PMI_VERSION") {
            config.pmi_version = match v.trim() {
                "auto" | "" => None,
                "1" => Some(1),
                "2" => Some(2),
                other => return Err(bad("WEFT_PMI_VERSION", other, "1, 2 or auto")),
            };
        }
        if let Some(v) = lookup("WEFT_NODES") {
            config.nodes = match v.trim() {
                "launcher" | "" => None,
                "per-rank" => Some(NodesOverride::PerRank),
                k => match k.parse::<u32>() {
                    Ok(k) if k >= 1 => Some(NodesOverride::Blocks(k)),
                    _ => {
                        return Err(bad(
                            "WEFT_NODES",
                            k,
                            "launcher, per-rank or a number of nodes >= 1",
                        ))
                    }
                },
            };
        }
        if let Some(v) = lookup("WEFT_SHM_CELLS") {
            config.shm_cells = parse_in_range("WEFT_SHM_CELLS", &v, 4, 4096)?;
            if !config.shm_cells.is_power_of_two() {
                return Err(bad("WEFT_SHM_CELLS", &v, "a power of two"));
            }
        }
        if let Some(v) = lookup("WEFT_SHM_CELL_SIZE") {
            config.shm_cell_size = parse_in_range("WEFT_SHM_CELL_SIZE", &v, 256, 1 << 20)?;
            if config.shm_cell_size % 64 != 0 {
                return Err(bad("WEFT_SHM_CELL_SIZE", &v, "a multiple of 64"));
            }
        }
        if let Some(v) = lookup("WEFT_EAGER_MAX") {
            config.eager_max = Some(parse_in_range("WEFT_EAGER_MAX", &v, 0, 1 << 20)?);
        }
        if let Some(v) = lookup("WEFT_SHM_LARGE") {
            config.shm_large = match v.trim() {
                "auto" | "" => LargeMode::Auto,
                "pipeline" => LargeMode::Pipeline,
                "cma" => LargeMode::Cma,
                other => return Err(bad("WEFT_SHM_LARGE", other, "auto, pipeline or cma")),
            };
        }
        if let Some(v) = lookup("WEFT_PROGRESS_SPIN") {
            config.progress_spin = match v.trim() {
                "auto" | "" => None,
                _ => Some(parse_in_range("WEFT_PROGRESS_SPIN", &v, 0, u32::MAX as usize)? as u32),
            };
        }
        if let Some(v) = lookup("WEFT_ERROR_BACKTRACE") {
            config.error_backtrace = parse_bool("WEFT_ERROR_BACKTRACE", &v)?;
        }
        if let Some(v) = lookup("WEFT_STATS") {
            config.stats = match v.trim() {
                "" | "0" => None,
                "1" => Some(StatsOutput::Stderr),
                path => Some(StatsOutput::File(path.to_owned())),
            };
        }
        if let Some(v) = lookup("WEFT_TRACE") {
            config.trace = Some(v.trim().to_owned()).filter(|p| !p.is_empty());
        }
        if let Some(v) = lookup("WEFT_NAME_DIR") {
            config.name_dir = Some(v.trim().to_owned()).filter(|p| !p.is_empty());
        }
        if let Some(v) = lookup("WEFT_PARENT_PORT") {
            config.parent_port = Some(v.trim().to_owned()).filter(|p| !p.is_empty());
        }
        // MPICH's names too, so that programs and test suites written for MPICH's control
        // variable get the same behaviour (Weft's own name wins).
        let connect_timeout = ["WEFT_CONNECT_TIMEOUT"]
            .into_iter()
            .chain(MPICH_CONNECT_TIMEOUT)
            .find_map(|name| lookup(name).map(|v| (name, v)));
        if let Some((name, v)) = connect_timeout {
            config.connect_timeout_s = parse_in_range(name, &v, 0, u32::MAX as usize)? as u64;
        }
        config.coll = crate::coll::CollConfig::from_lookup(&lookup)?;
        config.io = crate::io::config::IoConfig::from_lookup(&lookup)?;
        Ok(config)
    }

    /// The current value of each variable, as text, in `VARIABLES` order.
    pub fn describe(&self) -> Vec<(&'static Variable, String)> {
        VARIABLES
            .iter()
            .map(|var| {
                let value = match var.name {
                    "WEFT_NUM_VCIS" => self.num_vcis.to_string(),
                    "WEFT_MAX_STREAMS" => self.max_streams.to_string(),
                    "WEFT_PMI_VERSION" => self.pmi_version.map_or("auto".into(), |v| v.to_string()),
                    "WEFT_NODES" => match self.nodes {
                        None => "launcher".into(),
                        Some(NodesOverride::PerRank) => "per-rank".into(),
                        Some(NodesOverride::Blocks(k)) => k.to_string(),
                    },
                    "WEFT_SHM_CELLS" => self.shm_cells.to_string(),
                    "WEFT_SHM_CELL_SIZE" => self.shm_cell_size.to_string(),
                    "WEFT_EAGER_MAX" => self
                        .eager_max
                        .map_or("cell payload".into(), |v| v.to_string()),
                    "WEFT_SHM_LARGE" => match self.shm_large {
                        LargeMode::Auto => "auto".into(),
                        LargeMode::Cma => "cma".into(),
                        LargeMode::Pipeline => "pipeline".into(),
                    },
                    "WEFT_PROGRESS_SPIN" => {
                        self.progress_spin.map_or("auto".into(), |n| n.to_string())
                    }
                    "WEFT_ERROR_BACKTRACE" => u8::from(self.error_backtrace).to_string(),
                    "WEFT_TRACE" => self.trace.clone().unwrap_or_default(),
                    "WEFT_NAME_DIR" => self.name_dir.clone().unwrap_or_default(),
                    "WEFT_PARENT_PORT" => self.parent_port.clone().unwrap_or_default(),
                    "WEFT_CONNECT_TIMEOUT" => self.connect_timeout_s.to_string(),
                    "WEFT_STATS" => match &self.stats {
                        None => "0".into(),
                        Some(StatsOutput::Stderr) => "1".into(),
                        Some(StatsOutput::File(path)) => path.clone(),
                    },
                    name if name.starts_with("WEFT_COLL_") => self.coll.describe(name),
                    name if name.starts_with("WEFT_IO_") => self.io.describe(name),
                    _ => unreachable!("every variable has a value"),
                };
                (var, value)
            })
            .collect()
    }
}

fn bad(name: &str, value: &str, expected: &str) -> MpiError {
    MpiError::new(
        ErrorClass::Arg,
        format!("{name}={value:?} is not valid: expected {expected}"),
    )
}

fn parse_in_range(name: &str, value: &str, min: usize, max: usize) -> MpiResult<usize> {
    match value.trim().parse::<usize>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(bad(name, value, &format!("an integer in {min}..={max}"))),
    }
}

fn parse_bool(name: &str, value: &str) -> MpiResult<bool> {
    match value.trim() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" | "" => Ok(false),
        _ => Err(bad(name, value, "0 or 1")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(pairs: &[(&str, &str)]) -> MpiResult<Config> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_and_values() {
        assert_eq!(parse(&[]).unwrap(), Config::default());
        let c = parse(&[
            ("WEFT_NUM_VCIS", "8"),
            ("WEFT_PMI_VERSION", "2"),
            ("WEFT_ERROR_BACKTRACE", "1"),
            ("WEFT_SHM_CELLS", "128"),
            ("WEFT_SHM_CELL_SIZE", "4096"),
            ("WEFT_EAGER_MAX", "1000"),
            ("WEFT_SHM_LARGE", "pipeline"),
            ("WEFT_PROGRESS_SPIN", "5"),
            ("WEFT_MAX_STREAMS", "3"),
            ("WEFT_NODES", "per-rank"),
        ])
        .unwrap();
        assert_eq!(
            c,
            Config {
                num_vcis: 8,
                max_streams: 3,
                pmi_version: Some(2),
                nodes: Some(NodesOverride::PerRank),
                error_backtrace: true,
                shm_cells: 128,
                shm_cell_size: 4096,
                eager_max: Some(1000),
                shm_large: LargeMode::Pipeline,
                progress_spin: Some(5),
                ..Config::default()
            }
        );
    }

    #[test]
    fn bad_values_name_the_variable() {
        let e = parse(&[("WEFT_NUM_VCIS", "0")]).unwrap_err();
        assert!(e.message.contains("WEFT_NUM_VCIS"), "{}", e.message);
        assert!(parse(&[("WEFT_NUM_VCIS", "65")]).is_err());
        assert!(parse(&[("WEFT_PMI_VERSION", "3")]).is_err());
        assert!(parse(&[("WEFT_MAX_STREAMS", "129")]).is_err());
        assert!(parse(&[("WEFT_ERROR_BACKTRACE", "maybe")]).is_err());
        assert!(
            parse(&[("WEFT_SHM_CELLS", "100")]).is_err(),
            "not a power of two"
        );
        assert!(
            parse(&[("WEFT_SHM_CELL_SIZE", "1000")]).is_err(),
            "not a multiple of 64"
        );
        assert!(parse(&[("WEFT_SHM_LARGE", "fast")]).is_err());
        assert!(parse(&[("WEFT_NODES", "0")]).is_err());
        assert!(parse(&[("WEFT_NODES", "some")]).is_err());
    }

    #[test]
    fn connect_timeout_and_its_mpich_names() {
        assert_eq!(parse(&[]).unwrap().connect_timeout_s, 180);
        let c = parse(&[("MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT", "20")]).unwrap();
        assert_eq!(c.connect_timeout_s, 20);
        let c = parse(&[("MPIR_CVAR_CH3_COMM_CONNECT_TIMEOUT", "7")]).unwrap();
        assert_eq!(c.connect_timeout_s, 7);
        let c = parse(&[
            ("WEFT_CONNECT_TIMEOUT", "0"),
            ("MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT", "20"),
        ])
        .unwrap();
        assert_eq!(c.connect_timeout_s, 0, "Weft's own name wins");
        let e = parse(&[("MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT", "soon")]).unwrap_err();
        assert!(
            e.message.contains("MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT"),
            "{}",
            e.message
        );
    }

    #[test]
    fn nodes_override_places_ranks() {
        assert_eq!(NodesOverride::PerRank.node_of(3), vec![0, 1, 2]);
        assert_eq!(NodesOverride::Blocks(2).node_of(4), vec![0, 0, 1, 1]);
        assert_eq!(NodesOverride::Blocks(2).node_of(5), vec![0, 0, 0, 1, 1]);
        assert_eq!(NodesOverride::Blocks(8).node_of(3), vec![0, 1, 2]);
        assert_eq!(NodesOverride::Blocks(1).node_of(3), vec![0, 0, 0]);
        let c = parse(&[("WEFT_NODES", "2")]).unwrap();
        assert_eq!(c.nodes, Some(NodesOverride::Blocks(2)));
        assert_eq!(parse(&[("WEFT_NODES", "launcher")]).unwrap().nodes, None);
    }

    #[test]
    fn every_variable_is_documented() {
        let doc = include_str!("../../../docs/configuration.md");
        for var in VARIABLES {
            assert!(
                doc.contains(&format!("| `{}` |", var.name)),
                "{} missing from docs/configuration.md",
                var.name
            );
        }
    }

    #[test]
    fn every_variable_is_described() {
        let described = Config::default().describe();
        assert_eq!(described.len(), VARIABLES.len());
        assert_eq!(described[0].1, "1");
    }
}
