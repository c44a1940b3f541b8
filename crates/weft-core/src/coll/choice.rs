//! Collective algorithm choices changed on a communicator while the program runs (MPI_T
//! control variables `WEFT_COLL_*` bound to a communicator), and the numbering of the
//! per-communicator algorithm counters (`Comm::coll_algos`, MPI_T performance variables
//! `coll_<collective>_<algorithm>`).
#![forbid(unsafe_code)]

use std::sync::atomic::Ordering::Relaxed;

use super::config::*;
use crate::object::Comm;

/// The collectives whose algorithm can be forced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Allgather,
    Alltoall,
    /// Gather and scatter.
    Gather,
    /// Scan and exscan.
    Scan,
    ReduceScatter,
}

pub const COLLECTIVES: [Collective; 9] = [
    Collective::Barrier,
    Collective::Bcast,
    Collective::Reduce,
    Collective::Allreduce,
    Collective::Allgather,
    Collective::Alltoall,
    Collective::Gather,
    Collective::Scan,
    Collective::ReduceScatter,
];

/// How many options each collective has, in `COLLECTIVES` order.
const OPTION_COUNTS: [usize; 9] = [
    BARRIER_OPTIONS.len(),
    BCAST_OPTIONS.len(),
    REDUCE_OPTIONS.len(),
    ALLREDUCE_OPTIONS.len(),
    ALLGATHER_OPTIONS.len(),
    ALLTOALL_OPTIONS.len(),
    GATHER_OPTIONS.len(),
    SCAN_OPTIONS.len(),
    REDUCE_SCATTER_OPTIONS.len(),
];

/// The counter slot of each collective's first option: the options of the collectives
/// before it, counted.
const FIRST_SLOT: [usize; 9] = {
    let mut first = [0; 9];
    let mut i = 1;
    while i < 9 {
        first[i] = first[i - 1] + OPTION_COUNTS[i - 1];
        i += 1;
    }
    first
};

impl Collective {
    /// The variable that forces its algorithm.
    pub fn variable(self) -> &'static str {
        match self {
            Collective::Barrier => "WEFT_COLL_BARRIER",
            Collective::Bcast => "WEFT_COLL_BCAST",
            Collective::Reduce => "WEFT_COLL_REDUCE",
            Collective::Allreduce => "WEFT_COLL_ALLREDUCE",
            Collective::Allgather => "WEFT_COLL_ALLGATHER",
            Collective::Alltoall => "WEFT_COLL_ALLTOALL",
            Collective::Gather => "WEFT_COLL_GATHER",
            Collective::Scan => "WEFT_COLL_SCAN",
            Collective::ReduceScatter => "WEFT_COLL_REDUCE_SCATTER",
        }
    }

    /// Lower-case name (`bcast`).
    pub fn name(self) -> String {
        self.variable()["WEFT_COLL_".len()..].to_ascii_lowercase()
    }

    /// The values of its variable, `auto` first, in the order of the enum's variants.
    pub fn options(self) -> Vec<&'static str> {
        fn names<T>(t: &[(&'static str, T)]) -> Vec<&'static str> {
            t.iter().map(|(n, _)| *n).collect()
        }
        match self {
            Collective::Barrier => names(BARRIER_OPTIONS),
            Collective::Bcast => names(BCAST_OPTIONS),
            Collective::Reduce => names(REDUCE_OPTIONS),
            Collective::Allreduce => names(ALLREDUCE_OPTIONS),
            Collective::Allgather => names(ALLGATHER_OPTIONS),
            Collective::Alltoall => names(ALLTOALL_OPTIONS),
            Collective::Gather => names(GATHER_OPTIONS),
            Collective::Scan => names(SCAN_OPTIONS),
            Collective::ReduceScatter => names(REDUCE_SCATTER_OPTIONS),
        }
    }

    /// Its place in `COLLECTIVES` (the order of the variants).
    fn index(self) -> usize {
        self as usize
    }

    /// The counter slot of option `option` (an index into `options`). On every collective's
    /// path (`ran`), so it allocates nothing.
    #[inline]
    pub fn slot(self, option: usize) -> usize {
        FIRST_SLOT[self.index()] + option
    }

    /// The option forced on `comm` at run time, if any (`force`).
    #[inline]
    pub fn forced(self, comm: &Comm) -> Option<usize> {
        match comm.coll_forced[self.index()].load(Relaxed) {
            0 => None,
            n => Some(n as usize - 1),
        }
    }

    /// From now on, run option `option` (an index into `options`; 0 is `auto`) on `comm`,
    /// whatever the environment said. Every process of the communicator must make the same
    /// choice before its next collective on it.
    pub fn force(self, comm: &Comm, option: usize) {
        debug_assert!(option < self.options().len());
        comm.coll_forced[self.index()].store(option as u8 + 1, Relaxed);
    }

    /// The option in force on `comm` (an index into `options`).
    pub fn current(self, comm: &Comm) -> usize {
        self.forced(comm)
            .unwrap_or_else(|| comm.session.instance.config.coll.configured(self))
    }
}

/// Count one run of option `option` of `coll` on `comm`.
#[inline]
pub fn ran(comm: &Comm, coll: Collective, option: usize) {
    comm.coll_algos.bump(coll.slot(option));
}

/// `pub fn NAME(comm) -> TYPE`: the algorithm of a collective in force on `comm` (forced at run
/// time, else configured), one function per line of the table.
macro_rules! in_force {
    ($($name:ident: $coll:ident, $ty:ty, $options:ident;)*) => {$(
        #[doc = concat!("The ", stringify!($name), " algorithm in force on `comm`.")]
        #[inline]
        pub fn $name(comm: &Comm) -> $ty {
            let configured = comm.session.instance.config.coll.$name;
            Collective::$coll.forced(comm).map_or(configured, |i| $options[i].1)
        }
    )*};
}

in_force! {
    barrier: Barrier, Barrier, BARRIER_OPTIONS;
    bcast: Bcast, Bcast, BCAST_OPTIONS;
    reduce: Reduce, Reduce, REDUCE_OPTIONS;
    allreduce: Allreduce, Allreduce, ALLREDUCE_OPTIONS;
    allgather: Allgather, Allgather, ALLGATHER_OPTIONS;
    alltoall: Alltoall, Alltoall, ALLTOALL_OPTIONS;
    gather: Gather, Tree, GATHER_OPTIONS;
    scan: Scan, Scan, SCAN_OPTIONS;
    reduce_scatter: ReduceScatter, ReduceScatter, REDUCE_SCATTER_OPTIONS;
}

impl CollConfig {
    /// The configured option of `coll` (an index into `Collective::options`).
    pub fn configured(&self, coll: Collective) -> usize {
        match coll {
            Collective::Barrier => self.barrier as usize,
            Collective::Bcast => self.bcast as usize,
            Collective::Reduce => self.reduce as usize,
            Collective::Allreduce => self.allreduce as usize,
            Collective::Allgather => self.allgather as usize,
            Collective::Alltoall => self.alltoall as usize,
            Collective::Gather => self.gather as usize,
            Collective::Scan => self.scan as usize,
            Collective::ReduceScatter => self.reduce_scatter as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_follow_the_variants_and_slots_fit() {
        for (i, (_, v)) in BCAST_OPTIONS.iter().enumerate() {
            assert_eq!(*v as usize, i);
        }
        for (i, (_, v)) in ALLREDUCE_OPTIONS.iter().enumerate() {
            assert_eq!(*v as usize, i);
        }
        for (i, (_, v)) in REDUCE_OPTIONS.iter().enumerate() {
            assert_eq!(*v as usize, i);
        }
        for (i, c) in COLLECTIVES.iter().enumerate() {
            assert_eq!(c.index(), i);
            assert_eq!(c.options().len(), OPTION_COUNTS[i]);
        }
        let last = Collective::ReduceScatter;
        assert!(last.slot(last.options().len() - 1) < crate::stats::ALGO_SLOTS);
        assert_eq!(Collective::Bcast.slot(0), 4);
        assert_eq!(Collective::Bcast.name(), "bcast");
    }
}
