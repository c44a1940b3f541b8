//! All-to-all: every receive and send posted at once (linear), pairwise exchange, or Bruck's
//! algorithm for small blocks; in-place forms exchange pair by pair.
#![forbid(unsafe_code)]

use super::choice::{ran, Collective};
use super::config::Alltoall;
use super::gather::exchange;
use super::link::Link;
use super::sched::{self, block_on};
use super::shm::Turned;
use super::shm_blocks;
use super::shm_data;
use super::tag;
use super::{flat, in_place_peers};
use crate::datatype::access::{Scratch, Staged};
use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::object::Comm;

/// Blocks up to this size use Bruck's algorithm on more than 8 ranks.
const BRUCK_BLOCK: usize = 256;
/// Exchanges of more than this many bytes in all go pairwise.
const LINEAR_MAX: usize = 1 << 20;

/// `MPI_Alltoall`: `send` and `recv` hold n blocks; `send` is `None` for `MPI_IN_PLACE`.
pub fn alltoall(comm: &Comm, send: Option<&Buf>, recv: &Buf) -> MpiResult<()> {
    if comm.is_inter() {
        return block_on(comm, sched::ialltoall(comm, send, recv, 0));
    }
    if matches!(
        super::choice::alltoall(comm),
        Alltoall::Auto | Alltoall::Shm
    ) {
        if let Some(area) = super::shm::area(comm, true)? {
            if shm_data::alltoall(comm, area, send, recv)? == Turned::Done {
                ran(comm, Collective::Alltoall, Alltoall::Shm as usize);
                return Ok(());
            }
        }
    }
    let mut hold = Vec::new();
    let send = send.map(|s| flat(s, &mut hold));
    let send = send.as_ref();
    if !recv.is_contiguous() {
        let st = Staged::new(recv, send.is_none());
        alltoall(comm, send, &st.buf())?;
        st.store();
        return Ok(());
    }
    let link = Link::new(comm);
    let n = link.size as usize;
    let block = recv.len() / n;
    let recv_parts: Vec<Buf> = (0..n).map(|i| recv.slice(i * block, block)).collect();
    let Some(send) = send else {
        return in_place(&link, &recv_parts);
    };
    if send.len() != recv.len() {
        return Err(MpiError::new(
            ErrorClass::Truncate,
            "alltoall: the send and receive blocks differ in size",
        ));
    }
    let send_parts: Vec<Buf> = (0..n).map(|i| send.slice(i * block, block)).collect();
    let algo = match super::choice::alltoall(comm) {
        Alltoall::Auto | Alltoall::Shm if n > 8 && block <= BRUCK_BLOCK => Alltoall::Bruck,
        Alltoall::Bruck if block == 0 => Alltoall::Linear,
        a => a,
    };
    if algo == Alltoall::Bruck {
        ran(comm, Collective::Alltoall, Alltoall::Bruck as usize);
        return bruck(&link, send, recv, block);
    }
    general(&link, algo, &send_parts, &recv_parts)
}

/// `MPI_Alltoallv` / `MPI_Alltoallw`: per-rank parts; `send` is `None` for `MPI_IN_PLACE`.
pub fn alltoallv(comm: &Comm, send: Option<&[Buf]>, recv: &[Buf]) -> MpiResult<()> {
    if comm.is_inter() {
        return block_on(comm, sched::ialltoallv(comm, send, recv, 0));
    }
    if matches!(
        super::choice::alltoall(comm),
        Alltoall::Auto | Alltoall::Shm
    ) {
        if let Some(area) = super::shm::area(comm, true)? {
            if shm_blocks::alltoallv(comm, area, send, recv)? == Turned::Done {
                ran(comm, Collective::Alltoall, Alltoall::Shm as usize);
                return Ok(());
            }
        }
    }
    let link = Link::new(comm);
    match send {
        None => in_place(&link, recv),
        Some(s) => {
            let algo = match super::choice::alltoall(comm) {
                Alltoall::Bruck | Alltoall::Shm => Alltoall::Auto,
                a => a,
            };
            general(&link, algo, s, recv)
        }
    }
}

fn general(link: &Link, algo: Alltoall, send: &[Buf], recv: &[Buf]) -> MpiResult<()> {
    let (r, n) = (link.rank as usize, link.size as usize);
    let own = &send[r];
    // A size that differs fails the call after this rank's part of the exchange.
    let mut result = Ok(());
    if own.len() != recv[r].len() {
        result = Err(super::mismatch(
            "this rank's send block",
            own.len(),
            recv[r].len(),
        ));
    } else {
        own.copy_to(&recv[r], own.len());
    }
    let total: usize = send.iter().map(|b| b.len()).sum();
    let pairwise = match algo {
        Alltoall::Pairwise => true,
        Alltoall::Linear => false,
        _ => total > LINEAR_MAX,
    };
    let used = if pairwise {
        Alltoall::Pairwise
    } else {
        Alltoall::Linear
    };
    ran(link.comm, Collective::Alltoall, used as usize);
    if pairwise {
        // Every step runs even after one failed (sizes that differ between the ranks): the
        // later peers wait for this rank.
        for step in 1..n {
            let dst = (r + step) % n;
            let src = (r + n - step) % n;
            result = result.and(link.sendrecv(
                dst as u32,
                &send[dst],
                src as u32,
                &recv[src],
                tag::ALLTOALL,
            ));
        }
        return result;
    }
    let peers = (1..n).map(|s| (r + s) % n);
    let recvs: Vec<(u32, Buf)> = (1..n)
        .map(|s| (r + n - s) % n)
        .map(|p| (p as u32, recv[p]))
        .collect();
    let sends: Vec<(u32, Buf)> = peers.map(|p| (p as u32, send[p])).collect();
    result.and(exchange(link, &sends, &recvs, tag::ALLTOALL))
}

/// Bruck: rotate, then log2(n) steps each sending the blocks whose index has bit k set to
/// rank r + k, then rotate back.
fn bruck(link: &Link, send: &Buf, recv: &Buf, block: usize) -> MpiResult<()> {
    let (r, n) = (link.rank as usize, link.size as usize);
    let mut tmp = Scratch::new(n * block);
    let tb = tmp.buf();
    // tmp[j] = the block for rank (r + j) % n.
    for j in 0..n {
        send.slice(((r + j) % n) * block, block)
            .copy_to(&tb.slice(j * block, block), block);
    }
    let mut pack = Scratch::new(n.div_ceil(2) * block);
    let mut unpack = Scratch::new(n.div_ceil(2) * block);
    let (pb, ub) = (pack.buf(), unpack.buf());
    let mut result = Ok(());
    let mut k = 1;
    while k < n {
        let idx: Vec<usize> = (0..n).filter(|j| j & k != 0).collect();
        for (i, &j) in idx.iter().enumerate() {
            tb.slice(j * block, block)
                .copy_to(&pb.slice(i * block, block), block);
        }
        let len = idx.len() * block;
        // Every round, even after a failed one: later partners would wait for this rank.
        result = result.and(link.sendrecv(
            ((r + k) % n) as u32,
            &pb.slice(0, len),
            ((r + n - k) % n) as u32,
            &ub.slice(0, len),
            tag::ALLTOALL,
        ));
        for (i, &j) in idx.iter().enumerate() {
            ub.slice(i * block, block)
                .copy_to(&tb.slice(j * block, block), block);
        }
        k <<= 1;
    }
    // tmp[j] came from rank (r - j) % n.
    for j in 0..n {
        tb.slice(j * block, block)
            .copy_to(&recv.slice(((r + n - j) % n) * block, block), block);
    }
    result
}

/// In place: pair by pair (`in_place_peers`), each sending a copy taken now.
fn in_place(link: &Link, recv: &[Buf]) -> MpiResult<()> {
    let (r, n) = (link.rank as usize, link.size as usize);
    let biggest = recv.iter().map(|b| b.len()).max().unwrap_or(0);
    let mut tmp = Scratch::new(biggest);
    let tb = tmp.buf();
    let mut result = Ok(());
    for peer in in_place_peers(n, r) {
        let part = &recv[peer];
        let out = tb.slice(0, part.len());
        part.copy_to(&out, part.len());
        // Every peer, even after a failed exchange: the later ones would wait for it.
        result = result.and(link.sendrecv(peer as u32, &out, peer as u32, part, tag::ALLTOALL));
    }
    result
}
