//! `WEFT_COLL_*`: force a collective algorithm (for testing and measurement), and the size
//! limit of the node-level shared-memory path.
#![forbid(unsafe_code)]

use crate::error::{ErrorClass, MpiError, MpiResult};

/// The algorithm a collective uses: `Auto` picks by sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollConfig {
    pub barrier: Barrier,
    pub bcast: Bcast,
    pub reduce: Reduce,
    pub allreduce: Allreduce,
    pub allgather: Allgather,
    pub alltoall: Alltoall,
    pub gather: Tree,
    pub scan: Scan,
    pub reduce_scatter: ReduceScatter,
    /// Largest message of the node-level shared-memory path (`WEFT_COLL_SHM_MAX`; 0: off).
    pub shm_max: usize,
    /// Largest broadcast or scan streamed through the area in parts of `shm_max` bytes
    /// (`WEFT_COLL_SHM_STREAM_MAX`; at most `shm_max`: off).
    pub shm_stream_max: usize,
}

/// Default of `WEFT_COLL_SHM_MAX`: 4 KiB, so that a 4 KiB scan, exscan or reduce-scatter
/// vector (one payload each) still goes through the area. Measured at 4 ranks on 2 cores,
/// loaded, 4 KiB: scan 83-109 us by recursive doubling, 6-12 us through the area.
pub const SHM_MAX_DEFAULT: usize = 4096;
/// Upper bound of `WEFT_COLL_SHM_MAX` (an area holds 2 x ranks slots of this size).
const SHM_MAX_LIMIT: usize = 65536;
/// Default of `WEFT_COLL_SHM_STREAM_MAX`: 256 KiB (measurements in `coll/shm_stream.rs`).
pub const SHM_STREAM_MAX_DEFAULT: usize = 256 * 1024;
/// Upper bound of `WEFT_COLL_SHM_STREAM_MAX`.
const SHM_STREAM_MAX_LIMIT: usize = 1 << 30;

impl Default for CollConfig {
    fn default() -> CollConfig {
        CollConfig {
            barrier: Barrier::default(),
            bcast: Bcast::default(),
            reduce: Reduce::default(),
            allreduce: Allreduce::default(),
            allgather: Allgather::default(),
            alltoall: Alltoall::default(),
            gather: Tree::default(),
            scan: Scan::default(),
            reduce_scatter: ReduceScatter::default(),
            shm_max: SHM_MAX_DEFAULT,
            shm_stream_max: SHM_STREAM_MAX_DEFAULT,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Barrier {
    #[default]
    Auto,
    Dissemination,
    /// Gather to rank 0 and release along a binomial tree.
    Tree,
    /// Flags in the communicator's shared memory (all ranks on one node).
    Shm,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Bcast {
    #[default]
    Auto,
    Binomial,
    ScatterAllgather,
    /// The root sends to every rank.
    Linear,
    /// Through the communicator's shared memory (all ranks on one node, small messages).
    Shm,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reduce {
    #[default]
    Auto,
    Binomial,
    /// Reduce-scatter by recursive halving, then gather (commutative ops only).
    Rabenseifner,
    /// Every rank sends to the root, which combines in rank order.
    Linear,
    /// Through the communicator's shared memory (all ranks on one node, small messages).
    Shm,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Allreduce {
    #[default]
    Auto,
    RecursiveDoubling,
    /// Reduce-scatter by recursive halving, allgather by recursive doubling (commutative).
    Rabenseifner,
    /// Reduce-scatter and allgather around a ring (commutative).
    Ring,
    /// Reduce to rank 0, then broadcast.
    ReduceBcast,
    /// Through the communicator's shared memory (all ranks on one node, small messages).
    Shm,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Allgather {
    #[default]
    Auto,
    Ring,
    RecursiveDoubling,
    Bruck,
    /// Every rank's block in shared memory, every rank reads all (small blocks, one node).
    Shm,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Alltoall {
    #[default]
    Auto,
    /// Every receive and send posted at once.
    Linear,
    /// n-1 exchange steps with one peer each.
    Pairwise,
    Bruck,
    /// Every rank's whole send buffer in shared memory, each reads its blocks (small, one node).
    Shm,
}

/// Gather and scatter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tree {
    #[default]
    Auto,
    Linear,
    Binomial,
    /// Blocks through the communicator's shared memory (small blocks, one node).
    Shm,
}

/// Scan and exscan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scan {
    #[default]
    Auto,
    RecursiveDoubling,
    /// Every rank's contribution in shared memory; each combines those of the ranks below it.
    Shm,
}

/// Reduce-scatter and reduce-scatter-block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReduceScatter {
    #[default]
    Auto,
    /// Each rank reduces its own block, exchanging with every other (any op: a
    /// non-commutative one in rank order, `reduce::pairwise_steps`).
    Pairwise,
    /// Reduce the whole vector to rank 0, then scatter the blocks.
    ReduceScatterv,
    /// Every rank's whole vector in shared memory; each combines its own block.
    Shm,
}

/// The values of `WEFT_COLL_BARRIER`, in the order of the enum's variants.
pub const BARRIER_OPTIONS: &[(&str, Barrier)] = &[
    ("auto", Barrier::Auto),
    ("dissemination", Barrier::Dissemination),
    ("tree", Barrier::Tree),
    ("shm", Barrier::Shm),
];

/// The values of `WEFT_COLL_BCAST`, in the order of the enum's variants.
pub const BCAST_OPTIONS: &[(&str, Bcast)] = &[
    ("auto", Bcast::Auto),
    ("binomial", Bcast::Binomial),
    ("scatter_allgather", Bcast::ScatterAllgather),
    ("linear", Bcast::Linear),
    ("shm", Bcast::Shm),
];

/// The values of `WEFT_COLL_REDUCE`, in the order of the enum's variants.
pub const REDUCE_OPTIONS: &[(&str, Reduce)] = &[
    ("auto", Reduce::Auto),
    ("binomial", Reduce::Binomial),
    ("rabenseifner", Reduce::Rabenseifner),
    ("linear", Reduce::Linear),
    ("shm", Reduce::Shm),
];

/// The values of `WEFT_COLL_ALLREDUCE`, in the order of the enum's variants.
pub const ALLREDUCE_OPTIONS: &[(&str, Allreduce)] = &[
    ("auto", Allreduce::Auto),
    ("recursive_doubling", Allreduce::RecursiveDoubling),
    ("rabenseifner", Allreduce::Rabenseifner),
    ("ring", Allreduce::Ring),
    ("reduce_bcast", Allreduce::ReduceBcast),
    ("shm", Allreduce::Shm),
];

/// The values of `WEFT_COLL_ALLGATHER`, in the order of the enum's variants.
pub const ALLGATHER_OPTIONS: &[(&str, Allgather)] = &[
    ("auto", Allgather::Auto),
    ("ring", Allgather::Ring),
    ("recursive_doubling", Allgather::RecursiveDoubling),
    ("bruck", Allgather::Bruck),
    ("shm", Allgather::Shm),
];

/// The values of `WEFT_COLL_ALLTOALL`, in the order of the enum's variants.
pub const ALLTOALL_OPTIONS: &[(&str, Alltoall)] = &[
    ("auto", Alltoall::Auto),
    ("linear", Alltoall::Linear),
    ("pairwise", Alltoall::Pairwise),
    ("bruck", Alltoall::Bruck),
    ("shm", Alltoall::Shm),
];

/// The values of `WEFT_COLL_GATHER`, in the order of the enum's variants.
pub const GATHER_OPTIONS: &[(&str, Tree)] = &[
    ("auto", Tree::Auto),
    ("linear", Tree::Linear),
    ("binomial", Tree::Binomial),
    ("shm", Tree::Shm),
];

/// The values of `WEFT_COLL_SCAN`, in the order of the enum's variants.
pub const SCAN_OPTIONS: &[(&str, Scan)] = &[
    ("auto", Scan::Auto),
    ("recursive_doubling", Scan::RecursiveDoubling),
    ("shm", Scan::Shm),
];

/// The values of `WEFT_COLL_REDUCE_SCATTER`, in the order of the enum's variants.
pub const REDUCE_SCATTER_OPTIONS: &[(&str, ReduceScatter)] = &[
    ("auto", ReduceScatter::Auto),
    ("pairwise", ReduceScatter::Pairwise),
    ("reduce_scatterv", ReduceScatter::ReduceScatterv),
    ("shm", ReduceScatter::Shm),
];

/// The option `value` names; an empty value is the first option (`auto`).
fn pick<T: Copy>(name: &str, value: &str, options: &[(&str, T)]) -> MpiResult<T> {
    let v = match value.trim() {
        "" => options[0].0,
        v => v,
    };
    options
        .iter()
        .find(|(n, _)| *n == v)
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
            MpiError::new(
                ErrorClass::Arg,
                format!(
                    "{name}={value:?}: not a valid value (expected one of {})",
                    names.join(", ")
                ),
            )
        })
}

/// The option variable `name` picks; unset, its first option (`auto`, the enum's default).
fn var<T: Copy>(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &str,
    options: &[(&str, T)],
) -> MpiResult<T> {
    pick(name, &lookup(name).unwrap_or_default(), options)
}

/// A size variable: `default` when unset, an integer in `0..=limit` otherwise.
fn size(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &str,
    default: usize,
    limit: usize,
) -> MpiResult<usize> {
    let Some(v) = lookup(name) else {
        return Ok(default);
    };
    match v.trim().parse::<usize>() {
        Ok(n) if n <= limit => Ok(n),
        _ => Err(MpiError::new(
            ErrorClass::Arg,
            format!("{name}={v:?}: not a valid value (expected an integer in 0..={limit})"),
        )),
    }
}

impl CollConfig {
    pub fn from_lookup(lookup: &impl Fn(&str) -> Option<String>) -> MpiResult<CollConfig> {
        let mut c = CollConfig {
            barrier: var(lookup, "WEFT_COLL_BARRIER", BARRIER_OPTIONS)?,
            bcast: var(lookup, "WEFT_COLL_BCAST", BCAST_OPTIONS)?,
            reduce: var(lookup, "WEFT_COLL_REDUCE", REDUCE_OPTIONS)?,
            allreduce: var(lookup, "WEFT_COLL_ALLREDUCE", ALLREDUCE_OPTIONS)?,
            allgather: var(lookup, "WEFT_COLL_ALLGATHER", ALLGATHER_OPTIONS)?,
            alltoall: var(lookup, "WEFT_COLL_ALLTOALL", ALLTOALL_OPTIONS)?,
            gather: var(lookup, "WEFT_COLL_GATHER", GATHER_OPTIONS)?,
            scan: var(lookup, "WEFT_COLL_SCAN", SCAN_OPTIONS)?,
            reduce_scatter: var(lookup, "WEFT_COLL_REDUCE_SCATTER", REDUCE_SCATTER_OPTIONS)?,
            shm_max: SHM_MAX_DEFAULT,
            shm_stream_max: SHM_STREAM_MAX_DEFAULT,
        };
        c.shm_max = size(lookup, "WEFT_COLL_SHM_MAX", SHM_MAX_DEFAULT, SHM_MAX_LIMIT)?;
        c.shm_stream_max = size(
            lookup,
            "WEFT_COLL_SHM_STREAM_MAX",
            SHM_STREAM_MAX_DEFAULT,
            SHM_STREAM_MAX_LIMIT,
        )?;
        Ok(c)
    }

    /// The current value of variable `name`, as `weft-info` prints it.
    pub fn describe(&self, name: &str) -> String {
        let debug = match name {
            "WEFT_COLL_BARRIER" => format!("{:?}", self.barrier),
            "WEFT_COLL_BCAST" => format!("{:?}", self.bcast),
            "WEFT_COLL_REDUCE" => format!("{:?}", self.reduce),
            "WEFT_COLL_ALLREDUCE" => format!("{:?}", self.allreduce),
            "WEFT_COLL_ALLGATHER" => format!("{:?}", self.allgather),
            "WEFT_COLL_ALLTOALL" => format!("{:?}", self.alltoall),
            "WEFT_COLL_GATHER" => format!("{:?}", self.gather),
            "WEFT_COLL_SCAN" => format!("{:?}", self.scan),
            "WEFT_COLL_REDUCE_SCATTER" => format!("{:?}", self.reduce_scatter),
            "WEFT_COLL_SHM_MAX" => return self.shm_max.to_string(),
            "WEFT_COLL_SHM_STREAM_MAX" => return self.shm_stream_max.to_string(),
            _ => return String::new(),
        };
        // CamelCase variant names to the snake_case values the variables take.
        let mut out = String::new();
        for (i, ch) in debug.chars().enumerate() {
            if ch.is_ascii_uppercase() {
                if i > 0 {
                    out.push('_');
                }
                out.push(ch.to_ascii_lowercase());
            } else {
                out.push(ch);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let c = CollConfig::from_lookup(&|n: &str| {
            (n == "WEFT_COLL_ALLREDUCE").then(|| "ring".to_owned())
        })
        .unwrap();
        assert_eq!(c.allreduce, Allreduce::Ring);
        assert_eq!(c.bcast, Bcast::Auto);
        let e =
            CollConfig::from_lookup(&|n: &str| (n == "WEFT_COLL_BCAST").then(|| "nope".to_owned()))
                .unwrap_err();
        assert!(e.message.contains("WEFT_COLL_BCAST"));
        assert!(
            e.message
                .ends_with("(expected one of auto, binomial, scatter_allgather, linear, shm)"),
            "the choices, none blank: {}",
            e.message
        );
        let empty =
            CollConfig::from_lookup(&|n: &str| (n == "WEFT_COLL_BCAST").then(|| " ".to_owned()))
                .unwrap();
        assert_eq!(empty.bcast, Bcast::Auto, "an empty value is auto");
    }

    #[test]
    fn shm_choices_and_threshold() {
        let c = CollConfig::from_lookup(&|n: &str| match n {
            "WEFT_COLL_BARRIER"
            | "WEFT_COLL_BCAST"
            | "WEFT_COLL_REDUCE"
            | "WEFT_COLL_ALLREDUCE" => Some("shm".to_owned()),
            "WEFT_COLL_SHM_MAX" => Some("0".to_owned()),
            _ => None,
        })
        .unwrap();
        assert_eq!(
            (c.barrier, c.bcast, c.reduce, c.allreduce, c.shm_max),
            (Barrier::Shm, Bcast::Shm, Reduce::Shm, Allreduce::Shm, 0)
        );
        assert_eq!(c.describe("WEFT_COLL_BCAST"), "shm");
        assert_eq!(CollConfig::default().describe("WEFT_COLL_SHM_MAX"), "4096");
        assert_eq!(
            CollConfig::default().describe("WEFT_COLL_SHM_STREAM_MAX"),
            "262144"
        );
        for (var, bad) in [
            ("WEFT_COLL_SHM_MAX", "-1"),
            ("WEFT_COLL_SHM_MAX", "65537"),
            ("WEFT_COLL_SHM_MAX", "lots"),
            ("WEFT_COLL_SHM_STREAM_MAX", "1073741825"),
        ] {
            let e =
                CollConfig::from_lookup(&|n: &str| (n == var).then(|| bad.to_owned())).unwrap_err();
            assert!(e.message.contains(var), "{}", e.message);
        }
    }
}
