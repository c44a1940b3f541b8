//! Transports: how bytes reach a peer. `route` says which transport reaches a job rank;
//! `try_send`/`try_recv`/`watch` move one message (a header the protocol defines, plus a
//! payload) through it, so the engine never touches a transport's queues. `self` (this rank)
//! is handled by the protocol layer directly; `shm` reaches processes on this node; `cma` is
//! the single-copy helper for large messages between them; `ucx` reaches processes on other
//! nodes (compiled in where the build found UCX, `cfg(weft_ucx)`; a stand-in otherwise).

pub mod cma;
pub mod shm;
#[cfg(weft_ucx)]
pub mod ucx;
#[cfg(not(weft_ucx))]
#[path = "ucx_absent.rs"]
pub mod ucx;

/// How a peer (by job rank) is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// This process.
    SelfRank,
    /// A process on this node: its index among the node's ranks.
    Shm { local: u32 },
    /// A process on another node (or this process, when it has no shared memory), through
    /// the UCX transport.
    Ucx { rank: u32 },
    /// No transport reaches it (another node; no network transport in this build).
    Unreachable,
    /// A process of another job this process connected to (`shm::foreign`): its foreign id.
    Foreign { id: u32 },
    /// A pair ring of the sending VCI (`shm::pair`; `index` into its `PairsOut`): never
    /// returned by `route`, chosen by the engine, which pushes into it itself.
    Pair { index: u16 },
}

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::config::{Config, LargeMode};
use shm::foreign::{Foreign, FOREIGN_BASE};
use shm::ring::PAYLOAD_OFFSET;
use shm::{Consumer, Geometry, Ring, ShmTransport, WIRE_HEADER_BYTES};

/// An atomic operation on a remote 64-bit word (`ucx`'s one-sided atomics, for the control
/// words of RMA windows spanning nodes); each returns the word's previous value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Amo {
    /// word += value.
    Add,
    /// word = value.
    Swap,
    /// word = value where word equals this one.
    Cswap(u64),
}

/// The header a protocol sends with each message, as the transports carry it: encoded into
/// `WIRE_HEADER_BYTES` bytes and decoded on arrival (what the fields mean is the protocol's).
pub trait WireHeader: Sized {
    fn encode(&self) -> [u8; WIRE_HEADER_BYTES];
    fn decode(bytes: &[u8; WIRE_HEADER_BYTES]) -> Self;
}

/// The transports of one instance and how to reach every rank of the job.
pub struct Transports {
    /// This process's rank in the job and its pid (for single-copy reads by peers).
    pub my_rank: u32,
    pub pid: i32,
    /// For each job rank, its index among this node's ranks (`None`: another node).
    local_of: Vec<Option<u32>>,
    pub my_local: u32,
    pub shm: Option<ShmTransport>,
    /// The process's UCX transport, when some rank of the job is on another node.
    pub ucx: Option<&'static ucx::UcxTransport>,
    /// Processes of other jobs this process connected to, and the rings into them.
    pub foreign: Foreign,
    /// Largest message sent eagerly.
    pub eager_max: usize,
    /// Largest payload one message through a transport may carry.
    pub max_payload: usize,
    pub large: LargeMode,
    /// Cleared when a single-copy read is refused by the kernel (then pipelining is used).
    cma_works: AtomicBool,
}

impl Transports {
    /// Set up transports for `my_rank`, given the job ranks on this node (in rank order) and
    /// a job-unique `segment_name` for the node's shared segment.
    pub fn open(
        my_rank: u32,
        job_size: u32,
        local_ranks: &[u32],
        segment_name: &str,
        nvcis: usize,
        config: &Config,
        ucx: Option<&'static ucx::UcxTransport>,
    ) -> io::Result<Transports> {
        let mut local_of = vec![None; job_size as usize];
        for (i, &r) in local_ranks.iter().enumerate() {
            local_of[r as usize] = Some(i as u32);
        }
        let my_local = local_of[my_rank as usize].expect("a rank is on its own node");
        let geometry = Geometry {
            cells: config.shm_cells,
            cell_size: config.shm_cell_size,
        };
        let shm = if local_ranks.len() > 1 {
            cma::allow_peers();
            Some(ShmTransport::attach(
                segment_name,
                my_local,
                local_ranks.len() as u32,
                nvcis,
                geometry,
            )?)
        } else {
            None
        };
        let cell_payload = config.shm_cell_size - PAYLOAD_OFFSET;
        let eager_max = eager_max(config);
        Ok(Transports {
            my_rank,
            pid: std::process::id() as i32,
            local_of,
            my_local,
            shm,
            ucx,
            foreign: Foreign::default(),
            eager_max,
            max_payload: cell_payload,
            large: config.shm_large,
            cma_works: AtomicBool::new(true),
        })
    }

    #[inline]
    pub fn route(&self, job_rank: u32) -> Route {
        if job_rank == self.my_rank {
            return Route::SelfRank;
        }
        if job_rank >= FOREIGN_BASE {
            return Route::Foreign { id: job_rank };
        }
        match (self.local_of.get(job_rank as usize), &self.shm) {
            (Some(Some(local)), Some(_)) => Route::Shm { local: *local },
            (Some(None), _) if self.ucx.is_some() => Route::Ucx { rank: job_rank },
            _ => Route::Unreachable,
        }
    }

    /// The route through this process's own queues (a message to another of its VCIs):
    /// the shared-memory transport's, else UCX's loopback, if there is either.
    #[inline]
    pub fn own_queue(&self) -> Route {
        match (&self.shm, self.ucx) {
            (Some(_), _) => Route::Shm {
                local: self.my_local,
            },
            (None, Some(_)) => Route::Ucx { rank: self.my_rank },
            (None, None) => Route::Unreachable,
        }
    }

    /// Whether `route` goes through shared memory (so the peer shares this node).
    pub fn is_node_local(route: Route) -> bool {
        matches!(
            route,
            Route::SelfRank | Route::Shm { .. } | Route::Pair { .. } | Route::Foreign { .. }
        )
    }

    /// How many peer failures the network transport has recorded (only grows; 0 without
    /// one): the engine compares it with the count it last handled.
    #[inline]
    pub fn network_failures(&self) -> u64 {
        self.ucx.map_or(0, |u| u.failures())
    }

    /// The process is finalizing (`MPI_Finalize`): the peers that finish first end, and the
    /// network transport must not take that for failures.
    pub fn closing(&self) {
        if let Some(ucx) = self.ucx {
            ucx.closing();
        }
    }

    /// The process releases its last instance and may exit next: say goodbye to the
    /// network peers (so that they do not take the closing connections for failures) and
    /// wait until the sends in flight have left.
    pub fn leave_network(&self) {
        if let Some(ucx) = self.ucx {
            ucx.goodbye();
        }
    }

    /// Why the process `route` reaches is lost (the network transport lost it), if it is.
    pub fn lost(&self, route: Route) -> Option<String> {
        match (route, self.ucx) {
            (Route::Ucx { rank }, Some(ucx)) => ucx.lost(rank),
            _ => None,
        }
    }

    /// Whether a large message from another process is read with a single copy: a `pulled`
    /// one (`SendMode::Pulled`) wherever the kernel lets it; the others with
    /// `WEFT_SHM_LARGE=cma`, or `auto` while the receiving VCI has large sends of its own in
    /// flight (`busy`; see `LargeMode::Auto`).
    #[inline]
    pub fn single_copy(&self, busy: bool, pulled: bool) -> bool {
        self.cma_works.load(Ordering::Relaxed)
            && (pulled || self.large == LargeMode::Cma || (busy && self.large == LargeMode::Auto))
    }

    /// The kernel refused a single-copy read: use the pipelined path from now on (saying so
    /// once where the user asked for single copy, `WEFT_SHM_LARGE=cma`).
    pub fn disable_cma(&self, pid: i32, why: &io::Error) {
        let was = self.cma_works.swap(false, Ordering::Relaxed);
        if was && self.large == LargeMode::Cma {
            eprintln!(
                "weft: single-copy read from pid {pid} refused ({why}); using the pipelined path"
            );
        }
    }

    /// The job is ending abnormally: remove names other ranks would otherwise leave behind.
    pub fn release_names(&self) {
        if let Some(shm) = &self.shm {
            shm.release_name();
        }
    }

    /// Put one message (`header`, and `len` payload bytes that `fill` writes) into the
    /// queue of `vci` at the process `route` reaches. Returns false, having done nothing,
    /// when that queue has no room now (or the route is not a transport's: `SelfRank`, whose
    /// messages the protocol layer delivers itself, or `Unreachable`).
    #[inline]
    pub fn try_send<H: WireHeader>(
        &self,
        route: Route,
        vci: usize,
        header: &H,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> bool {
        match (route, &self.shm) {
            (Route::Shm { local }, Some(shm)) => {
                shm.ring(local, vci).try_push(&header.encode(), len, fill)
            }
            (Route::Foreign { id }, _) => {
                self.foreign.try_push(id, vci, &header.encode(), len, fill)
            }
            (Route::Ucx { rank }, _) => match self.ucx {
                Some(ucx) => ucx.try_send(rank, vci, &header.encode(), len, fill),
                None => false,
            },
            _ => false,
        }
    }

    /// Take the next message that arrived for this process on `vci` at `consumer`'s
    /// position, if any, and hand its header and payload to `consume`.
    #[inline]
    pub fn try_recv<H: WireHeader>(
        &self,
        vci: usize,
        consumer: &mut Consumer,
        consume: impl FnOnce(&H, &[u8]),
    ) -> bool {
        // `consume` is taken by whichever transport has a message (shm first).
        let mut consume = Some(consume);
        if let Some(shm) = &self.shm {
            let ring = shm.ring(self.my_local, vci);
            if ring.try_pop(consumer, |header, payload| {
                (consume.take().expect("called once"))(&H::decode(header), payload)
            }) {
                return true;
            }
        }
        match self.ucx {
            Some(ucx) => ucx.try_recv(vci, |header, payload| {
                (consume.take().expect("called once"))(&H::decode(header), payload)
            }),
            None => false,
        }
    }

    /// A cheap way to wait for the next arrival on `vci` after `consumer`'s position (one
    /// load per look), usable without the VCI's lock. `None`: no transport delivers here, or
    /// UCX does (its arrivals are seen only by a progress pass).
    pub fn watch(&self, vci: usize, consumer: &Consumer) -> Option<Watch<'_>> {
        if self.ucx.is_some() {
            return None;
        }
        self.shm.as_ref().map(|shm| Watch {
            ring: shm.ring(self.my_local, vci),
            position: consumer.position(),
        })
    }
}

/// See `Transports::watch`.
pub struct Watch<'t> {
    ring: Ring<'t>,
    position: u64,
}

impl Watch<'_> {
    /// Whether a message has arrived since the watch was taken.
    #[inline]
    pub fn arrived(&self) -> bool {
        self.ring.has_message(self.position)
    }
}

/// The largest message (wire header and payload) any transport carries under `config`: one
/// shared-memory cell's payload behind the header (the protocol never sends more in one
/// message; larger data moves by rendezvous). The `ucx` transport sizes the receives it posts
/// ahead with it.
pub fn message_max(config: &Config) -> usize {
    WIRE_HEADER_BYTES + (config.shm_cell_size - PAYLOAD_OFFSET)
}

/// The largest message sent eagerly under `config` (`WEFT_EAGER_MAX`, at most a cell's
/// payload).
pub fn eager_max(config: &Config) -> usize {
    let cell_payload = config.shm_cell_size - PAYLOAD_OFFSET;
    config.eager_max.unwrap_or(cell_payload).min(cell_payload)
}
