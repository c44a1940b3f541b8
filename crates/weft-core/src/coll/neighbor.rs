//! Neighbourhood collectives on Cartesian, graph and distributed-graph communicators. Every
//! form is an all-to-all-v over the topology's neighbours (the ABI layer builds one buffer
//! per destination and per source). Blocking forms on ranks of one node go through the
//! communicator's shared memory (`shm_blocks.rs`: each rank publishes its blocks addressed
//! to its destinations); the others run as one plan round: receives from every source,
//! sends to every destination. `MPI_PROC_NULL` neighbours (edges of non-periodic grids) are
//! skipped and their buffers left alone.
//!
//! Order: on a Cartesian grid the neighbours are, per dimension, the one at -1 then the one
//! at +1. The same rank can be both (a periodic dimension of size 1 or 2), so messages carry
//! a sub-tag naming the direction they travel in: what a rank sends to its +1 neighbour is
//! what that neighbour receives from its -1 neighbour. Graph neighbours appearing several
//! times match in list order (messages between two ranks do not overtake).
#![forbid(unsafe_code)]

use super::config::Alltoall;
use super::sched::{block_on, Msg, Plan, MAX_SUB};
use super::shm::Turned;
use super::shm_blocks::{self, Pick, NOBODY};
use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::object::topo::{graph_neighbors, Topology};
use crate::object::Comm;
use crate::request::ReqId;

/// A rank's neighbours: `None` is `MPI_PROC_NULL`.
#[derive(Clone, Debug, Default)]
pub struct Neighbors {
    pub sources: Vec<Option<u32>>,
    pub destinations: Vec<Option<u32>>,
    /// Cartesian: sub-tags by direction.
    cart: bool,
}

impl Neighbors {
    /// The neighbours of this process in `comm`'s topology; `MPI_ERR_TOPOLOGY` without one.
    pub fn of(comm: &Comm, func: &str) -> MpiResult<Neighbors> {
        let Some(topo) = comm.topo.as_deref() else {
            return Err(MpiError::new(
                ErrorClass::Topology,
                format!("{func}(comm): the communicator has no process topology"),
            ));
        };
        let rank = comm.rank;
        Ok(match topo {
            Topology::Cart { dims, periods } => {
                let mut list = Vec::with_capacity(2 * dims.len());
                for d in 0..dims.len() {
                    let (minus, plus) = Topology::cart_shift(dims, periods, rank, d, 1);
                    list.push(minus);
                    list.push(plus);
                }
                Neighbors {
                    sources: list.clone(),
                    destinations: list,
                    cart: true,
                }
            }
            Topology::Graph { index, edges } => {
                let list: Vec<Option<u32>> = graph_neighbors(index, edges, rank)
                    .iter()
                    .map(|&e| Some(e as u32))
                    .collect();
                Neighbors {
                    sources: list.clone(),
                    destinations: list,
                    cart: false,
                }
            }
            Topology::DistGraph {
                sources,
                destinations,
                ..
            } => Neighbors {
                sources: sources.iter().map(|&e| Some(e as u32)).collect(),
                destinations: destinations.iter().map(|&e| Some(e as u32)).collect(),
                cart: false,
            },
        })
    }

    /// For the shared-memory path: every real source with the block it takes from that
    /// source's contribution and the buffer that receives it. On a grid the direction says
    /// which (what source k sent to its neighbour k ^ 1); in a graph a repeated source's
    /// m-th appearance takes the m-th block it addressed to this rank (list order).
    fn picks(&self, recv: &[Buf]) -> Vec<(u32, Pick, Buf)> {
        let mut out = Vec::with_capacity(recv.len());
        for (k, (src, b)) in self.sources.iter().zip(recv).enumerate() {
            let Some(s) = *src else { continue };
            let pick = if self.cart {
                Pick::Index(k ^ 1)
            } else {
                Pick::Occurrence(self.sources[..k].iter().filter(|&&x| x == *src).count())
            };
            out.push((s, pick, *b));
        }
        out
    }

    fn sub(&self, k: usize, receiving: bool) -> u32 {
        if !self.cart || k > MAX_SUB as usize {
            return 0;
        }
        if receiving {
            (k ^ 1) as u32
        } else {
            k as u32
        }
    }
}

/// `MPI_Ineighbor_alltoallv` (and every other neighbourhood form): `send[k]` goes to
/// destination k, `recv[k]` receives from source k.
pub fn ineighbor_alltoallv(
    comm: &Comm,
    nb: &Neighbors,
    send: &[Buf],
    recv: &[Buf],
    owner: usize,
) -> MpiResult<ReqId> {
    let mut p = Plan::new(comm, None);
    let mut msgs = Vec::with_capacity(send.len() + recv.len());
    for (k, (src, b)) in nb.sources.iter().zip(recv).enumerate() {
        if let Some(s) = src {
            msgs.push(Msg::recv(*s, *b).sub(nb.sub(k, true)));
        }
    }
    for (k, (dst, b)) in nb.destinations.iter().zip(send).enumerate() {
        if let Some(d) = dst {
            msgs.push(Msg::send(*d, *b).sub(nb.sub(k, false)));
        }
    }
    p.round(msgs, vec![]);
    Ok(p.start(comm, owner))
}

/// The blocking form: through the communicator's shared memory where it applies (ranks of
/// one node, `WEFT_COLL_ALLTOALL` `auto` or `shm`, every rank's blocks within
/// `WEFT_COLL_SHM_MAX`), else the plan.
pub fn neighbor_alltoallv(
    comm: &Comm,
    nb: &Neighbors,
    send: &[Buf],
    recv: &[Buf],
) -> MpiResult<()> {
    if matches!(
        super::choice::alltoall(comm),
        Alltoall::Auto | Alltoall::Shm
    ) {
        if let Some(area) = super::shm::area(comm, true)? {
            let to: Vec<u32> = nb
                .destinations
                .iter()
                .map(|d| d.unwrap_or(NOBODY))
                .collect();
            let from = nb.picks(recv);
            if shm_blocks::neighbors(comm, area, send, &to, &from)? == Turned::Done {
                return Ok(());
            }
        }
    }
    block_on(comm, ineighbor_alltoallv(comm, nb, send, recv, 0))
}
