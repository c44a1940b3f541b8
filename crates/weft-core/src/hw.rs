//! The node's hardware as Linux describes it under `/sys/devices/system` (no hwloc): which
//! hardware resources exist (packages, NUMA nodes, caches, cores, hardware threads) and
//! which of each the CPU a process runs on belongs to. `MPI_Get_hw_resource_info` reports
//! the counts, `MPI_Comm_split_type`'s guided splits group processes by the ids. A leaf.
#![forbid(unsafe_code)]

use std::collections::BTreeSet;
use std::fs;

/// The resource types Weft knows, largest first (`mpi_hw_resource_type` values; the node
/// itself is `mpi_shared_memory`).
pub const TYPES: [&str; 8] = [
    "mpi_shared_memory",
    "package",
    "numanode",
    "l3cache",
    "l2cache",
    "l1cache",
    "core",
    "pu",
];

const SYS_CPU: &str = "/sys/devices/system/cpu";

fn read(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_owned())
}

/// A CPU list such as `0-3,8,10-11`.
pub fn parse_list(list: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let mut ends = part.splitn(2, '-').map(|x| x.parse::<u32>());
        match (ends.next(), ends.next()) {
            (Some(Ok(a)), None) => out.push(a),
            (Some(Ok(a)), Some(Ok(b))) if a <= b => out.extend(a..=b),
            _ => {}
        }
    }
    out
}

/// The online CPUs (hardware threads).
pub fn online_cpus() -> Vec<u32> {
    read(&format!("{SYS_CPU}/online"))
        .map(|l| parse_list(&l))
        .unwrap_or_default()
}

/// The id of `cpu`'s resource of type `ty` (an index of `TYPES`), unique on the node among
/// resources of that type and below 2^16; `None` where `/sys` does not say.
pub fn domain(cpu: u32, ty: usize) -> Option<u32> {
    let topo = |f: &str| {
        read(&format!("{SYS_CPU}/cpu{cpu}/topology/{f}"))?
            .parse::<u32>()
            .ok()
    };
    let id = match *TYPES.get(ty)? {
        "mpi_shared_memory" => Some(0),
        "package" => topo("physical_package_id"),
        "numanode" => numa_of_cpu(cpu),
        "core" => Some((topo("physical_package_id")? << 12) | (topo("core_id")? & 0xfff)),
        "pu" => Some(cpu),
        cache => {
            let level: u32 = cache
                .strip_prefix('l')?
                .strip_suffix("cache")?
                .parse()
                .ok()?;
            cache_of_cpu(cpu, level)
        }
    };
    id.map(|i| i & 0xffff)
}

fn numa_of_cpu(cpu: u32) -> Option<u32> {
    let dir = fs::read_dir(format!("{SYS_CPU}/cpu{cpu}")).ok()?;
    dir.filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("node")?.parse().ok())
        .next()
}

/// The cache of `level` (data or unified) that `cpu` uses: identified by the lowest CPU
/// sharing it.
fn cache_of_cpu(cpu: u32, level: u32) -> Option<u32> {
    let dir = fs::read_dir(format!("{SYS_CPU}/cpu{cpu}/cache")).ok()?;
    for entry in dir.filter_map(|e| e.ok()) {
        let path = entry.path();
        let get = |f: &str| {
            fs::read_to_string(path.join(f))
                .ok()
                .map(|s| s.trim().to_owned())
        };
        if get("level").and_then(|l| l.parse::<u32>().ok()) != Some(level) {
            continue;
        }
        if get("type").as_deref() == Some("Instruction") {
            continue;
        }
        let shared = parse_list(&get("shared_cpu_list")?);
        return shared.iter().min().copied();
    }
    None
}

/// How many resources of each type of `TYPES` the node has (0 where `/sys` does not say).
pub fn counts() -> Vec<(&'static str, usize)> {
    let cpus = online_cpus();
    TYPES
        .iter()
        .enumerate()
        .map(|(t, &name)| {
            let ids: BTreeSet<u32> = cpus.iter().filter_map(|&c| domain(c, t)).collect();
            (name, ids.len())
        })
        .collect()
}

/// The CPU this process runs on now.
pub fn current_cpu() -> Option<u32> {
    let stat = fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(36)?.parse().ok()
}

/// The index in `TYPES` of an `mpi_hw_resource_type` value (with the synonyms Weft accepts).
pub fn type_index(value: &str) -> Option<usize> {
    let canonical = match value {
        "machine" | "node" | "board" => "mpi_shared_memory",
        "socket" => "package",
        "numa" => "numanode",
        "hwthread" => "pu",
        v => v,
    };
    TYPES.iter().position(|&t| t == canonical)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse() {
        assert_eq!(parse_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_list(""), Vec::<u32>::new());
        assert_eq!(parse_list("5"), vec![5]);
    }

    #[test]
    fn counts_nest() {
        let c = counts();
        let n = |t: &str| c.iter().find(|(k, _)| *k == t).map(|(_, v)| *v).unwrap();
        assert_eq!(n("mpi_shared_memory"), 1);
        assert_eq!(n("pu"), online_cpus().len());
        assert!(n("core") <= n("pu") && n("package") <= n("core").max(1));
        assert_eq!(type_index("socket"), type_index("package"));
        assert_eq!(type_index("nonsense"), None);
    }
}
