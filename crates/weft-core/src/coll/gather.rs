//! Gather, scatter and allgather (regular and `v` forms).
//!
//! Regular forms take one buffer of n equal blocks; `v` forms take one `Buf` per rank (the
//! ABI layer resolves counts and displacements). `MPI_IN_PLACE` is `None` on the side that
//! the standard lets be in place.
#![forbid(unsafe_code)]

use super::choice::{ran, Collective};
use super::config::{Allgather, Tree};
use super::flat;
use super::link::{check_header, header, Link, Pending, HEADER_LEN};
use super::sched::{self, block_on};
use super::shm::Turned;
use super::shm_blocks;
use super::shm_data::{self, block_of, copy_into, Place};
use super::{pof2_floor, tag};
use crate::datatype::access::{Scratch, Staged};
use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::object::Comm;
use crate::transport::shm::coll_area::CollArea;

/// Regular gathers and scatters whose whole data is below this use binomial trees.
const SMALL_TREE: usize = 32 * 1024;
/// Allgathers whose whole result is below this use recursive doubling or Bruck.
const SMALL_ALLGATHER: usize = 64 * 1024;

fn lowbit(v: u32) -> u32 {
    v & v.wrapping_neg()
}

/// Blocks in relative rank `vr`'s binomial subtree.
fn subtree(vr: u32, n: u32) -> u32 {
    if vr == 0 {
        n
    } else {
        lowbit(vr).min(n - vr)
    }
}

fn blocks(buf: &Buf, n: usize) -> Vec<Buf> {
    let b = if n == 0 { 0 } else { buf.len() / n };
    (0..n).map(|i| buf.slice(i * b, b)).collect()
}

/// The shared-memory area, when gather/scatter may use it (the same on every rank: it
/// depends on the communicator and the configuration only); counted.
fn gather_area(comm: &Comm) -> MpiResult<Option<&CollArea>> {
    if !matches!(super::choice::gather(comm), Tree::Auto | Tree::Shm) {
        return Ok(None);
    }
    let area = super::shm::area(comm, true)?;
    if area.is_some() {
        ran(comm, Collective::Gather, Tree::Shm as usize);
    }
    Ok(area)
}

/// Whether gather/scatter choose between the tree and linear by size (`auto`): ranks whose
/// sizes differ may then choose differently, and meet in size headers (`link`).
fn by_size(comm: &Comm) -> bool {
    matches!(super::choice::gather(comm), Tree::Auto | Tree::Shm)
}

/// Whether gather/scatter of `total` bytes runs the binomial tree (else linear); counted.
fn use_tree(comm: &Comm, total: usize) -> bool {
    let tree = match super::choice::gather(comm) {
        Tree::Binomial => true,
        Tree::Linear => false,
        Tree::Auto | Tree::Shm => total < SMALL_TREE,
    };
    let used = if tree { Tree::Binomial } else { Tree::Linear };
    ran(comm, Collective::Gather, used as usize);
    tree
}

/// `MPI_Gather`: at the root `recv` holds n blocks; `send` is `None` for `MPI_IN_PLACE` (the
/// root's block is already in place). Elsewhere `recv` is ignored.
pub fn gather(comm: &Comm, send: Option<&Buf>, recv: &Buf, root: u32) -> MpiResult<()> {
    if comm.is_inter() {
        return block_on(comm, sched::igather(comm, send, recv, root, 0));
    }
    if let Some(area) = gather_area(comm)? {
        let block = recv.len() / comm.size() as usize;
        let place = |r: u32| Place::block(recv, r as usize, block);
        return shm_data::gather(comm, area, send, root, place);
    }
    let mut hold = Vec::new();
    let send = send.map(|s| flat(s, &mut hold));
    let send = send.as_ref();
    if comm.rank == root && !recv.is_contiguous() {
        let st = Staged::new(recv, send.is_none());
        gather(comm, send, &st.buf(), root)?;
        st.store();
        return Ok(());
    }
    let link = Link::new(comm);
    let n = link.size;
    let block = match send {
        Some(s) => s.len(),
        None => recv.len() / n as usize,
    };
    if link.rank == root && recv.len() != block * n as usize {
        return Err(MpiError::new(
            ErrorClass::Truncate,
            "gather: the receive buffer does not match the data sent",
        ));
    }
    if n > 1 && block > 0 {
        if use_tree(comm, block * n as usize) {
            return binomial_gather(&link, send, recv, root, block);
        }
        if by_size(comm) {
            // Ranks that chose the tree by a smaller size meet this rank's header.
            link.agree_on_tree(block, root, tag::GATHER)?;
        }
    }
    let parts = if link.rank == root {
        blocks(recv, n as usize)
    } else {
        Vec::new()
    };
    gatherv(comm, send, &parts, root)
}

fn binomial_gather(
    link: &Link,
    send: Option<&Buf>,
    recv: &Buf,
    root: u32,
    block: usize,
) -> MpiResult<()> {
    let n = link.size;
    let vr = (link.rank + n - root) % n;
    let real = |v: u32| (v + root) % n;
    let mut tmp = Scratch::new(subtree(vr, n) as usize * block);
    let tb = tmp.buf();
    match send {
        Some(s) => s.copy_to(&tb, block),
        None => recv.slice(root as usize * block, block).copy_to(&tb, block),
    }
    // A failed receive (the ranks passed different sizes) does not stop this rank's part:
    // its parent would wait for it. A child that sent a size header (it chose the linear
    // gather by its size, `Link::agree_on_tree`) is owed a verdict.
    let mut result = Ok(());
    let mut owed = Vec::new();
    let mut held = 1;
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            result = result.and(link.send(
                real(vr - mask),
                tag::GATHER,
                &tb.slice(0, held as usize * block),
            ));
            return result.and(link.owe_verdicts(&owed, tag::GATHER));
        }
        if vr + mask < n {
            let k = subtree(vr + mask, n);
            let child = real(vr + mask);
            let (got, arrived) = link.recv_telling(
                child,
                tag::GATHER,
                &tb.slice(mask as usize * block, k as usize * block),
            );
            if arrived.header {
                owed.push(child);
            }
            result = result.and(got);
            held = mask + k;
        }
        mask <<= 1;
    }
    // The root: relative block j belongs to rank (j + root) % n.
    let split = (n - root) as usize * block;
    tb.slice(0, split)
        .copy_to(&recv.slice(root as usize * block, split), split);
    let rest = root as usize * block;
    tb.slice(split, rest).copy_to(&recv.slice(0, rest), rest);
    result.and(link.owe_verdicts(&owed, tag::GATHER))
}

/// `MPI_Gatherv`: `parts` (root only) says where each rank's data goes.
pub fn gatherv(comm: &Comm, send: Option<&Buf>, parts: &[Buf], root: u32) -> MpiResult<()> {
    if comm.is_inter() {
        return block_on(comm, sched::igatherv(comm, send, parts, root, 0));
    }
    if let Some(area) = gather_area(comm)? {
        return shm_data::gather(comm, area, send, root, |r| Place::all(&parts[r as usize]));
    }
    let link = Link::new(comm);
    if link.rank != root {
        let s = send.unwrap_or(&Buf::EMPTY);
        return link.send(root, tag::GATHER, s);
    }
    let mut ops = Vec::with_capacity(parts.len());
    for (i, p) in parts.iter().enumerate() {
        if i as u32 != root {
            ops.push(link.irecv(i as u32, tag::GATHER, p));
        }
    }
    let own = match send {
        Some(s) => {
            let dst = &parts[root as usize];
            if s.len() > dst.len() {
                Err(MpiError::new(
                    ErrorClass::Truncate,
                    "the root's receive block is smaller than its send buffer",
                ))
            } else {
                s.copy_to(dst, s.len());
                Ok(())
            }
        }
        None => Ok(()),
    };
    link.wait_all(ops).and(own)
}

/// `MPI_Scatter`: at the root `send` holds n blocks; `recv` is `None` for `MPI_IN_PLACE`.
pub fn scatter(comm: &Comm, send: &Buf, recv: Option<&Buf>, root: u32) -> MpiResult<()> {
    if comm.is_inter() {
        return block_on(comm, sched::iscatter(comm, send, recv, root, 0));
    }
    let mut hold = Vec::new();
    let send = &flat(send, &mut hold);
    if let Some(area) = gather_area(comm)? {
        return shm_data::scatter(comm, area, send, recv, root);
    }
    if let Some(r) = recv.filter(|r| !r.is_contiguous()) {
        let st = Staged::new(r, false);
        scatter(comm, send, Some(&st.buf()), root)?;
        st.store();
        return Ok(());
    }
    let link = Link::new(comm);
    let n = link.size;
    let block = match recv {
        Some(r) => r.len(),
        None => send.len() / n as usize,
    };
    if n > 1 && block > 0 {
        let tree = use_tree(comm, block * n as usize);
        if tree || by_size(comm) {
            return binomial_scatter(&link, send, recv, root, block, tree);
        }
    }
    let parts = if link.rank == root {
        blocks(send, n as usize)
    } else {
        Vec::new()
    };
    scatterv(comm, &parts, recv, root)
}

/// The binomial scatter (`tree`), or, when the choice is by size and this rank chose the
/// linear one, the root's: the ranks follow the root. A root that chose linear first sends a
/// size header down the tree; a rank whose message from its parent is a header passes it on
/// and then receives its block from the root (a difference from its own size fails the
/// call, after its part); one whose message is data goes on with the tree, whatever it
/// chose.
fn binomial_scatter(
    link: &Link,
    send: &Buf,
    recv: Option<&Buf>,
    root: u32,
    block: usize,
    tree: bool,
) -> MpiResult<()> {
    let n = link.size;
    let vr = (link.rank + n - root) % n;
    let real = |v: u32| (v + root) % n;
    let mine = subtree(vr, n) as usize;
    // This rank's subtree's blocks (none at a root that goes linear), with room for a
    // header whatever this rank's size.
    let room = if vr == 0 && !tree { 0 } else { mine * block };
    let mut tmp = Scratch::new(room.max(HEADER_LEN));
    let tb = tmp.buf();
    let mut result = Ok(());
    let (top, linear) = if vr == 0 {
        if send.len() < n as usize * block {
            return Err(MpiError::new(
                ErrorClass::Truncate,
                "scatter: the send buffer is smaller than the data received",
            ));
        }
        if tree {
            // Relative order: block j goes to rank (j + root) % n.
            let split = (n - root) as usize * block;
            send.slice(root as usize * block, split)
                .copy_to(&tb.slice(0, split), split);
            let rest = root as usize * block;
            send.slice(0, rest).copy_to(&tb.slice(split, rest), rest);
        }
        (pof2_floor(n - 1), !tree)
    } else {
        let parent = real(vr - lowbit(vr));
        let (got, arrived) = link.recv_telling(parent, tag::SCATTER, &tb.slice(0, mine * block));
        result = if !arrived.header {
            got
        } else if arrived.bytes < HEADER_LEN {
            // Truncated into this rank's smaller buffer: the sizes differ.
            Err(super::mismatch(
                &format!("rank {parent}"),
                HEADER_LEN,
                arrived.bytes,
            ))
        } else {
            // The root went linear: a header is expected here (whatever this rank chose).
            check_header(tmp.bytes(), block, parent)
        };
        (lowbit(vr) >> 1, arrived.header)
    };
    let mut verdict = header(block, &result);
    let mut mask = top;
    while mask > 0 {
        if vr + mask < n {
            let k = subtree(vr + mask, n) as usize;
            let part = if linear {
                verdict.buf()
            } else {
                tb.slice(mask as usize * block, k * block)
            };
            let l = if linear { link.headers() } else { *link };
            result = result.and(l.send(real(vr + mask), tag::SCATTER, &part));
        }
        mask >>= 1;
    }
    if linear {
        let parts = if vr == 0 {
            blocks(send, n as usize)
        } else {
            Vec::new()
        };
        return result.and(linear_scatter(link, &parts, recv, root));
    }
    if let Some(r) = recv {
        tb.slice(0, block).copy_to(r, block);
    }
    result
}

/// `MPI_Scatterv`: `parts` (root only) says which data each rank receives.
pub fn scatterv(comm: &Comm, parts: &[Buf], recv: Option<&Buf>, root: u32) -> MpiResult<()> {
    if comm.is_inter() {
        return block_on(comm, sched::iscatterv(comm, parts, recv, root, 0));
    }
    if let Some(area) = gather_area(comm)? {
        if shm_blocks::scatterv(comm, area, parts, recv, root)? == Turned::Done {
            return if comm.rank == root {
                own_block(parts, recv, root)
            } else {
                Ok(())
            };
        }
    }
    linear_scatter(&Link::new(comm), parts, recv, root)
}

/// The linear scatter: the root sends each rank its part.
fn linear_scatter(link: &Link, parts: &[Buf], recv: Option<&Buf>, root: u32) -> MpiResult<()> {
    if link.rank != root {
        return link.recv(root, tag::SCATTER, recv.unwrap_or(&Buf::EMPTY));
    }
    let mut ops = Vec::with_capacity(parts.len());
    let mut result = Ok(());
    for (i, p) in parts.iter().enumerate() {
        if i as u32 != root {
            match link.isend(i as u32, tag::SCATTER, p) {
                Ok(op) => ops.push(op),
                Err(e) => result = result.and(Err(e)),
            }
        }
    }
    let own = own_block(parts, recv, root);
    link.wait_all(ops).and(result).and(own)
}

/// The root's copy of its own block of a scatterv (`recv` is `None` in place).
fn own_block(parts: &[Buf], recv: Option<&Buf>, root: u32) -> MpiResult<()> {
    let Some(r) = recv else { return Ok(()) };
    let src = &parts[root as usize];
    if src.len() > r.len() {
        return Err(MpiError::new(
            ErrorClass::Truncate,
            "the root's receive buffer is smaller than its block",
        ));
    }
    src.copy_to(r, src.len());
    Ok(())
}

/// `MPI_Allgather`: `recv` holds n blocks; `send` is `None` for `MPI_IN_PLACE`.
pub fn allgather(comm: &Comm, send: Option<&Buf>, recv: &Buf) -> MpiResult<()> {
    if comm.is_inter() {
        return block_on(comm, sched::iallgather(comm, send, recv, 0));
    }
    if let Some(area) = allgather_area(comm)? {
        let (r, block) = (comm.rank as usize, recv.len() / comm.size() as usize);
        let mut hold = Scratch::default();
        let mine = match send {
            Some(s) => *s,
            None => block_of(recv, r, block, &mut hold),
        };
        let place = |q: u32| Place::block(recv, q as usize, block);
        if shm_data::allgather(comm, area, &mine, place)? == Turned::Done {
            ran(comm, Collective::Allgather, Allgather::Shm as usize);
            if let Some(s) = send {
                copy_into(s, place(comm.rank));
            }
            return Ok(());
        }
    }
    if !recv.is_contiguous() {
        let st = Staged::new(recv, send.is_none());
        allgather(comm, send, &st.buf())?;
        st.store();
        return Ok(());
    }
    let link = Link::new(comm);
    let n = link.size;
    let block = recv.len() / n as usize;
    // Sizes that differ between the ranks fail this rank's call after its part of the
    // exchange (the others would wait for it).
    let mut result = Ok(());
    if let Some(s) = send {
        if s.len() != block {
            result = Err(super::mismatch("this rank's send buffer", s.len(), block));
        } else {
            s.copy_to(&recv.slice(link.rank as usize * block, block), block);
        }
    }
    if n == 1 || block == 0 {
        return result;
    }
    let small = if n.is_power_of_two() {
        Allgather::RecursiveDoubling
    } else {
        Allgather::Bruck
    };
    let by_size = matches!(
        super::choice::allgather(comm),
        Allgather::Auto | Allgather::Shm
    );
    let algo = match super::choice::allgather(comm) {
        Allgather::Auto | Allgather::Shm if recv.len() < SMALL_ALLGATHER => small,
        Allgather::Auto | Allgather::Shm => Allgather::Ring,
        Allgather::RecursiveDoubling if !n.is_power_of_two() => Allgather::Bruck,
        a => a,
    };
    if by_size && algo == Allgather::Ring {
        // Ranks that chose `small` by a smaller size meet this rank's headers.
        let (r, rounds) = (
            link.rank,
            std::iter::successors(Some(1u32), |k| k.checked_mul(2)),
        );
        let rounds = rounds.take_while(|&k| k < n).map(|k| match small {
            Allgather::RecursiveDoubling => (r ^ k, r ^ k),
            _ => ((r + n - k) % n, (r + k) % n),
        });
        result = link.agree_in_rounds(recv.len(), tag::ALLGATHER, rounds, result);
        result.clone()?;
    }
    ran(comm, Collective::Allgather, algo as usize);
    // A failed step (the ranks passed different sizes) does not stop this rank's part: its
    // later partners would wait for it.
    result.and(match algo {
        Allgather::RecursiveDoubling => {
            let r = link.rank;
            let mut done = Ok(());
            let mut mask = 1;
            while mask < n {
                let partner = r ^ mask;
                let mine = (r & !(mask - 1)) as usize;
                let theirs = (partner & !(mask - 1)) as usize;
                let len = mask as usize * block;
                done = done.and(link.sendrecv(
                    partner,
                    &recv.slice(mine * block, len),
                    partner,
                    &recv.slice(theirs * block, len),
                    tag::ALLGATHER,
                ));
                mask <<= 1;
            }
            done
        }
        Allgather::Bruck => bruck_allgather(&link, recv, block),
        _ => ring(&link, &blocks(recv, n as usize)),
    })
}

fn bruck_allgather(link: &Link, recv: &Buf, block: usize) -> MpiResult<()> {
    let (r, n) = (link.rank as usize, link.size as usize);
    let mut tmp = Scratch::new(n * block);
    let tb = tmp.buf();
    recv.slice(r * block, block).copy_to(&tb, block);
    // Every round, even after a failed one (see `allgather`).
    let mut result = Ok(());
    let mut k = 1;
    while k < n {
        let cnt = k.min(n - k);
        result = result.and(link.sendrecv(
            ((r + n - k) % n) as u32,
            &tb.slice(0, cnt * block),
            ((r + k) % n) as u32,
            &tb.slice(k * block, cnt * block),
            tag::ALLGATHER,
        ));
        k <<= 1;
    }
    // tmp block j is rank (r + j) % n's.
    let split = (n - r) * block;
    tb.slice(0, split)
        .copy_to(&recv.slice(r * block, split), split);
    tb.slice(split, r * block)
        .copy_to(&recv.slice(0, r * block), r * block);
    result
}

/// The shared-memory area, when allgather(v) may use it (the same on every rank).
fn allgather_area(comm: &Comm) -> MpiResult<Option<&CollArea>> {
    match super::choice::allgather(comm) {
        Allgather::Auto | Allgather::Shm => super::shm::area(comm, true),
        _ => Ok(None),
    }
}

/// Ring allgather over per-rank parts (this rank's part already in place).
fn ring(link: &Link, parts: &[Buf]) -> MpiResult<()> {
    let (r, n) = (link.rank as usize, link.size as usize);
    let right = ((r + 1) % n) as u32;
    let left = ((r + n - 1) % n) as u32;
    // Every step, even after a failed one (see `allgather`).
    let mut result = Ok(());
    for step in 0..n - 1 {
        let s = (r + n - step) % n;
        let d = (r + n - step - 1) % n;
        result = result.and(link.sendrecv(right, &parts[s], left, &parts[d], tag::ALLGATHER));
    }
    result
}

/// `MPI_Allgatherv`: `parts[i]` receives rank i's data; `send` is `None` for `MPI_IN_PLACE`.
pub fn allgatherv(comm: &Comm, send: Option<&Buf>, parts: &[Buf]) -> MpiResult<()> {
    if comm.is_inter() {
        return block_on(comm, sched::iallgatherv(comm, send, parts, 0));
    }
    if let Some(area) = allgather_area(comm)? {
        let mine = send.unwrap_or(&parts[comm.rank as usize]);
        let place = |q: u32| Place::all(&parts[q as usize]);
        if shm_data::allgather(comm, area, mine, place)? == Turned::Done {
            ran(comm, Collective::Allgather, Allgather::Shm as usize);
            if let Some(s) = send {
                copy_into(s, place(comm.rank));
            }
            return Ok(());
        }
    }
    let link = Link::new(comm);
    let me = &parts[link.rank as usize];
    // As in allgather: a size that differs fails the call after this rank's part.
    let mut result = Ok(());
    if let Some(s) = send {
        if s.len() != me.len() {
            result = Err(super::mismatch(
                "this rank's send buffer",
                s.len(),
                me.len(),
            ));
        } else {
            s.copy_to(me, s.len());
        }
    }
    if link.size == 1 {
        return result;
    }
    result.and(ring(&link, parts))
}

/// Post receives for `recvs` and sends for `sends` (peer, buffer) and wait for all.
pub(crate) fn exchange(
    link: &Link,
    sends: &[(u32, Buf)],
    recvs: &[(u32, Buf)],
    tag: i32,
) -> MpiResult<()> {
    let mut ops: Vec<Pending> = recvs.iter().map(|(p, b)| link.irecv(*p, tag, b)).collect();
    let mut result = Ok(());
    for (p, b) in sends {
        match link.isend(*p, tag, b) {
            Ok(op) => ops.push(op),
            Err(e) => result = result.and(Err(e)),
        }
    }
    link.wait_all(ops).and(result)
}
