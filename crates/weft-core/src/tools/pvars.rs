//! Performance variables: the per-VCI counters (`stats`), summed over the VCIs or one
//! element per VCI, and the per-communicator collective algorithm counts.
#![forbid(unsafe_code)]

use std::sync::LazyLock;

use crate::coll::choice::{Collective, COLLECTIVES};
use crate::instance::Instance;
use crate::object::Comm;
use crate::stats::{self, Counter};

/// MPI_T's classes, of those Weft's variables have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Level,
    HighWaterMark,
    Counter,
}

/// Where a variable's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A VCI counter summed over the VCIs (the largest, for high-water marks).
    Total(Counter),
    /// A VCI counter, one element per VCI.
    PerVci(Counter),
    /// Runs of one algorithm of a collective on the bound communicator.
    Algorithm(Collective, usize),
    /// Point-to-point messages (or their bytes, `true`) sent on the bound communicator.
    CommSent(bool),
}

#[derive(Debug)]
pub struct Pvar {
    pub name: String,
    pub desc: String,
    pub class: Class,
    pub source: Source,
    pub category: &'static str,
}

impl Pvar {
    /// Whether it is about a communicator (`MPI_T_BIND_MPI_COMM`).
    pub fn bound_to_comm(&self) -> bool {
        matches!(self.source, Source::Algorithm(..) | Source::CommSent(_))
    }

    /// Levels and high-water marks are always on and read-only; counters are started and
    /// stopped in a session and can be reset or written there.
    pub fn continuous(&self) -> bool {
        self.class != Class::Counter
    }

    /// Elements of the variable: one, or one per VCI of the process.
    pub fn count(&self) -> usize {
        match self.source {
            Source::PerVci(_) => vci_count(),
            _ => 1,
        }
    }
}

/// The VCIs of the process (`WEFT_NUM_VCIS` + `WEFT_MAX_STREAMS`).
pub fn vci_count() -> usize {
    let c = Instance::configuration();
    (c.num_vcis + c.max_streams).min(stats::MAX_VCIS)
}

const VCI_COUNTERS: &[(Counter, &str, Class, &str, &str)] = &[
    (
        Counter::SentSelf,
        "msgs_sent_self",
        Class::Counter,
        "messages sent by this process to itself",
        "weft_pt2pt",
    ),
    (
        Counter::SentShm,
        "msgs_sent_shm",
        Class::Counter,
        "messages sent to other processes of the node through shared memory",
        "weft_pt2pt",
    ),
    (
        Counter::BytesSentSelf,
        "bytes_sent_self",
        Class::Counter,
        "bytes of the messages sent by this process to itself",
        "weft_pt2pt",
    ),
    (
        Counter::BytesSentShm,
        "bytes_sent_shm",
        Class::Counter,
        "bytes of the messages sent through shared memory",
        "weft_pt2pt",
    ),
    (
        Counter::RecvSelf,
        "msgs_recv_self",
        Class::Counter,
        "messages that arrived from this process itself",
        "weft_pt2pt",
    ),
    (
        Counter::RecvShm,
        "msgs_recv_shm",
        Class::Counter,
        "messages that arrived through shared memory",
        "weft_pt2pt",
    ),
    (
        Counter::BytesRecvSelf,
        "bytes_recv_self",
        Class::Counter,
        "bytes of the messages that arrived from this process itself",
        "weft_pt2pt",
    ),
    (
        Counter::BytesRecvShm,
        "bytes_recv_shm",
        Class::Counter,
        "bytes of the messages that arrived through shared memory",
        "weft_pt2pt",
    ),
    (
        Counter::EagerSends,
        "eager_sends",
        Class::Counter,
        "messages sent eagerly (up to WEFT_EAGER_MAX bytes, copied through the queue)",
        "weft_pt2pt",
    ),
    (
        Counter::RendezvousSends,
        "rendezvous_sends",
        Class::Counter,
        "messages sent by rendezvous (larger than WEFT_EAGER_MAX)",
        "weft_pt2pt",
    ),
    (
        Counter::UnexpectedArrivals,
        "unexpected_arrivals",
        Class::Counter,
        "messages that arrived before a matching receive was posted",
        "weft_pt2pt",
    ),
    (
        Counter::UnexpectedLen,
        "unexpected_queue_len",
        Class::Level,
        "messages in the unexpected queue now",
        "weft_pt2pt",
    ),
    (
        Counter::UnexpectedHigh,
        "unexpected_queue_max",
        Class::HighWaterMark,
        "most messages ever in the unexpected queue",
        "weft_pt2pt",
    ),
    (
        Counter::PostedLen,
        "posted_queue_len",
        Class::Level,
        "receives in the posted queue now",
        "weft_pt2pt",
    ),
    (
        Counter::PostedHigh,
        "posted_queue_max",
        Class::HighWaterMark,
        "most receives ever in the posted queue",
        "weft_pt2pt",
    ),
    (
        Counter::Polls,
        "progress_polls",
        Class::Counter,
        "progress passes over a VCI",
        "weft_progress",
    ),
    (
        Counter::EmptyPolls,
        "progress_empty_polls",
        Class::Counter,
        "progress passes that found nothing to do",
        "weft_progress",
    ),
    (
        Counter::SingleCopyReceives,
        "single_copy_recvs",
        Class::Counter,
        "large messages received with one copy from the sender's memory (WEFT_SHM_LARGE)",
        "weft_pt2pt",
    ),
    (
        Counter::RingFull,
        "ring_full_waits",
        Class::Counter,
        "sends that found the peer's shared-memory ring full and waited for room",
        "weft_transport",
    ),
];

/// Every performance variable.
pub fn pvars() -> &'static [Pvar] {
    static ALL: LazyLock<Vec<Pvar>> = LazyLock::new(|| {
        let mut all = Vec::new();
        for &(counter, name, class, desc, category) in VCI_COUNTERS {
            all.push(Pvar {
                name: format!("weft_{name}"),
                desc: format!("{desc} (all VCIs)"),
                class,
                source: Source::Total(counter),
                category,
            });
            all.push(Pvar {
                name: format!("weft_{name}_per_vci"),
                desc: format!("{desc}, one element per VCI"),
                class,
                source: Source::PerVci(counter),
                category,
            });
        }
        for (bytes, name, what) in [
            (false, "comm_msgs_sent", "point-to-point messages"),
            (
                true,
                "comm_bytes_sent",
                "bytes of the point-to-point messages",
            ),
        ] {
            all.push(Pvar {
                name: format!("weft_{name}"),
                desc: format!(
                    "{what} this process sent on the communicator (counted while a handle of a communicator's message variable exists)"
                ),
                class: Class::Counter,
                source: Source::CommSent(bytes),
                category: "weft_pt2pt",
            });
        }
        for coll in COLLECTIVES {
            for (option, algo) in coll.options().into_iter().enumerate().skip(1) {
                all.push(Pvar {
                    name: format!("weft_coll_{}_{algo}", coll.name()),
                    desc: format!(
                        "times this process ran the {algo} algorithm of {} on the communicator",
                        coll.name()
                    ),
                    class: Class::Counter,
                    source: Source::Algorithm(coll, option),
                    category: "weft_coll",
                });
            }
        }
        all
    });
    &ALL
}

/// The index of the variable `name` of class `class`.
pub fn index_of(name: &str, class: Class) -> Option<usize> {
    pvars()
        .iter()
        .position(|p| p.name == name && p.class == class)
}

/// The current values of variable `p` (one per element) on `comm` when it is bound to one.
pub fn read(p: &Pvar, comm: Option<&Comm>, out: &mut [u64]) {
    match p.source {
        Source::Total(c) => out[0] = stats::total(c),
        Source::PerVci(c) => out
            .iter_mut()
            .enumerate()
            .for_each(|(v, o)| *o = stats::read(v, c)),
        Source::Algorithm(coll, option) => {
            out[0] = comm.map_or(0, |comm| comm.coll_algos.read(coll.slot(option)))
        }
        Source::CommSent(bytes) => {
            let (m, b) = comm.map_or((0, 0), |comm| comm.msg_counts.read());
            out[0] = if bytes { b } else { m };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        let all = pvars();
        let mut names: Vec<_> = all.iter().map(|p| p.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len());
        let i = index_of("weft_coll_bcast_binomial", Class::Counter).unwrap();
        assert!(all[i].bound_to_comm());
        assert!(index_of("weft_unexpected_queue_max", Class::HighWaterMark).is_some());
        assert!(index_of("weft_unexpected_queue_max", Class::Counter).is_none());
    }
}
