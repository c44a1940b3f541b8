//! Neighbourhood collectives on Cartesian, graph and distributed-graph communicators. Every
//! form is an all-to-all-v over the topology's neighbours (the ABI layer builds one buffer
//! per destination and per source), run as one plan round: receives from every source,
//! sends to every destination. `MPI_PROC_NULL` neighbours (edges of non-periodic grids) are
//! skipped and their buffers left alone.
//!
//! Order: on a Cartesian grid the neighbours are, per dimension, the one at -1 then the one
//! at +1. The same rank can be both (a periodic dimension of size 1 or 2), so messages carry
//! a sub-tag naming the direction they travel in: what a rank sends to its +1 neighbour is
//! what that neighbour receives from its -1 neighbour. Graph neighbours appearing several
//! times match in list order (messages between two ranks do not overtake).
#![forbid(unsafe_code)]

use super::sched::{block_on, Msg, Plan, MAX_SUB};
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

/// The blocking form.
pub fn neighbor_alltoallv(
    comm: &Comm,
    nb: &Neighbors,
    send: &[Buf],
    recv: &[Buf],
) -> MpiResult<()> {
    block_on(comm, ineighbor_alltoallv(comm, nb, send, recv, 0))
}
